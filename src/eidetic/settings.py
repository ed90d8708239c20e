"""Every setting eidetic reads, read once into one typed, frozen :class:`Settings`.

Later sources win: built-in defaults, then the ``EIDETIC_*`` environment variables (the
command line's flags are applied on top by the CLI, through :meth:`Settings.with_flags`).
Nothing here runs at import time and nothing else reads the environment: ``Settings.load()``
is called once per command (or per ``Memory.open``) and the object is handed down.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from .errors import user_error

DEFAULT_MAX_TEXT_BYTES = 64 * 1024
DEFAULT_ANN_THRESHOLD = 20_000
DEFAULT_VERIFY_FILES = 500
DEFAULT_EMBED_TIMEOUT = 10.0
DEFAULT_MODEL_ENDPOINT = "https://huggingface.co"
# Memory that comes to the agent (docs/hooks.md): token budgets, capture, the hook client's limits.
DEFAULT_START_TOKENS = 400
DEFAULT_PROMPT_TOKENS = 300
DEFAULT_SESSION_TOKENS = 3000
DEFAULT_HOOK_TIMEOUT = 2.0
DEFAULT_HOOK_IDLE_MINUTES = 15
CAPTURE = ("off", "private", "public")
BORROWED_KEYS = ("COLLEAGUE_API_KEY", "CULTURE_VLLM_API_KEY")  # keys the HTTP embedder may borrow
TERMINAL = ("NO_COLOR", "TERM", "VISUAL", "EDITOR")  # the conventions of terminal programs, as set


def _text(raw: str, name: str) -> str:
    return raw


def _path(raw: str, name: str) -> Path:
    return Path(raw).expanduser()


def _flag(raw: str, name: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise user_error(f"{name} is {raw!r}", "1 or 0")


def _whole(minimum: int) -> Callable[[str, str], int]:
    def parse(raw: str, name: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise user_error(f"{name} is not a whole number: {raw!r}", f"set it to a number >= {minimum}") from None
        if value < minimum:
            raise user_error(f"{name} must be at least {minimum}", f"set it to a number >= {minimum}")
        return value

    return parse


def _seconds(raw: str, name: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise user_error(f"{name} is not a number: {raw!r}", "seconds, e.g. 10") from None
    if not value > 0:
        raise user_error(f"{name} must be positive", "seconds, e.g. 10")
    return value


def _choice(*allowed: str) -> Callable[[str, str], str]:
    def parse(raw: str, name: str) -> str:
        if raw not in allowed:
            raise user_error(f"{name} is {raw!r}", "one of: " + ", ".join(allowed))
        return raw

    return parse


MODES = ("exact", "keyword", "approximate", "hybrid", "fields")  # as eidetic.query.MODES


def _setting(
    default: Any,
    env: str,
    parse: Callable[[str, str], Any],
    help: str,
    *,
    key: str | None = None,
    repo: bool = False,
    shown: str = "",
) -> Any:
    """A setting: its variable, how a raw value becomes a typed one, its key in a config file
    (None: environment only, e.g. a secret), whether a repository's config may set it, and
    what an unset value means (``shown`` by ``eidetic config``)."""
    metadata = {
        "env": env,
        "parse": parse,
        "help": help,
        "key": key,
        "repo": repo,
        "path": parse is _path,
        "shown": shown,
    }
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Settings:
    """What one command runs with; ``origins`` says where each value that is no default came from."""

    scope: str | None = _setting(
        None, "EIDETIC_SCOPE", _text, "the scope you read and write as", key="scope", repo=True, shown="default"
    )
    visibility: str | None = _setting(
        None,
        "EIDETIC_VISIBILITY",
        _choice("public", "private"),
        "public (default) or private: new records' visibility, and whether you see your private ones",
        key="visibility",
        repo=True,
        shown="public",
    )
    mode: str | None = _setting(
        None, "EIDETIC_MODE", _choice(*MODES), "recall's default mode", key="mode", repo=True, shown="hybrid"
    )
    top_k: int | None = _setting(
        None, "EIDETIC_TOP_K", _whole(1), "recall's default number of hits", key="top-k", repo=True, shown="5"
    )
    backend: str = _setting("files", "EIDETIC_BACKEND", _text, "files, sqlite, postgres or neo4j", key="backend")
    data_dir: Path | None = _setting(
        None,
        "EIDETIC_DATA_DIR",
        _path,
        "files backend: one folder for every record",
        key="memory-dir",
        shown="(the repository's store and ~/.eidetic/memory)",
    )
    sqlite_path: Path | None = _setting(
        None, "EIDETIC_SQLITE_PATH", _path, "sqlite backend: the database", key="db", shown="~/.eidetic/memory.sqlite"
    )
    pg_dsn: str = _setting("", "EIDETIC_PG_DSN", _text, "postgres backend: the server", key="dsn")
    neo4j_uri: str = _setting(
        "", "EIDETIC_NEO4J_URI", _text, "neo4j backend: the graph server, bolt://host:port/database", key="uri"
    )
    neo4j_user: str = _setting("", "EIDETIC_NEO4J_USER", _text, "neo4j backend: the user", key="user", shown="neo4j")
    neo4j_password: str = _setting(
        "", "EIDETIC_NEO4J_PASSWORD", _text, "neo4j backend: the password (environment only)"
    )
    cache_dir_override: Path | None = _setting(
        None,
        "EIDETIC_CACHE_DIR",
        _path,
        "derived indexes, vectors, the prepared model",
        key="cache-dir",
    )
    state_dir_override: Path | None = _setting(
        None,
        "EIDETIC_STATE_DIR",
        _path,
        "usage counts",
        key="state-dir",
    )
    embedder: str = _setting(
        "", "EIDETIC_EMBEDDER", _text, "none: no semantic ranking", key="embedder", shown="(the local model)"
    )
    embed_url: str = _setting("", "EIDETIC_EMBED_URL", _text, "an OpenAI-compatible endpoint", key="embed-url")
    embed_model: str = _setting("", "EIDETIC_EMBED_MODEL", _text, "the endpoint's model", key="embed-model")
    embed_api_key: str = _setting("", "EIDETIC_EMBED_API_KEY", _text, "the endpoint's key (environment only)")
    serve_token: str = _setting(
        "", "EIDETIC_SERVE_TOKEN", _text, "`eidetic serve`'s token (environment only; else one is made)"
    )
    embed_timeout: float = _setting(
        DEFAULT_EMBED_TIMEOUT, "EIDETIC_EMBED_TIMEOUT", _seconds, "seconds per request", key="embed-timeout"
    )
    model: str = _setting(
        "",
        "EIDETIC_MODEL",
        _text,
        "the local sentence model: a Hugging Face id or a folder (docs/models.md)",
        key="model",
        shown="sentence-transformers/all-MiniLM-L6-v2 (bundled)",
    )
    model_endpoint: str = _setting(
        DEFAULT_MODEL_ENDPOINT,
        "EIDETIC_MODEL_ENDPOINT",
        _text,
        "where a named model is downloaded from",
        key="model-endpoint",
    )
    model_offline: bool = _setting(
        False, "HF_HUB_OFFLINE", _flag, "1: never download a model", key="offline", shown="0"
    )
    model_dir: Path | None = _setting(
        None, "EIDETIC_MINILM_DIR", _path, "the local model's files", key="model-dir", shown="(its package)"
    )
    embed_threads: int | None = _setting(
        None,
        "EIDETIC_EMBED_THREADS",
        _whole(1),
        "threads the local model embeds many texts on (a query takes one)",
        key="embed-threads",
        shown="every core",
    )
    embed_runtime: str = _setting(
        "auto",
        "EIDETIC_EMBED_RUNTIME",
        _choice("auto", "onnx", "numpy"),
        "what runs the local model: auto (ONNX Runtime for many texts), onnx (always) or numpy",
        key="embed-runtime",
    )
    max_text_bytes: int = _setting(
        DEFAULT_MAX_TEXT_BYTES, "EIDETIC_MAX_TEXT_BYTES", _whole(1), "largest record text, bytes", key="max-text-bytes"
    )
    ann_threshold: int = _setting(
        DEFAULT_ANN_THRESHOLD,
        "EIDETIC_ANN_THRESHOLD",
        _whole(0),
        "rows from which vectors get an HNSW graph (0: never)",
        key="ann-threshold",
    )
    verify_files: int = _setting(
        DEFAULT_VERIFY_FILES,
        "EIDETIC_VERIFY_FILES",
        _whole(0),
        "record files stat-checked per recall (0: none)",
        key="verify-files",
    )
    context_start_tokens: int = _setting(
        DEFAULT_START_TOKENS,
        "EIDETIC_CONTEXT_START_TOKENS",
        _whole(0),
        "tokens of memories a session start gets (0: none)",
        key="context-start-tokens",
        repo=True,
    )
    context_prompt_tokens: int = _setting(
        DEFAULT_PROMPT_TOKENS,
        "EIDETIC_CONTEXT_PROMPT_TOKENS",
        _whole(0),
        "tokens of memories one prompt gets (0: none)",
        key="context-prompt-tokens",
        repo=True,
    )
    context_session_tokens: int = _setting(
        DEFAULT_SESSION_TOKENS,
        "EIDETIC_CONTEXT_SESSION_TOKENS",
        _whole(0),
        "tokens of memories one session gets in all",
        key="context-session-tokens",
        repo=True,
    )
    capture: str = _setting(
        "off",
        "EIDETIC_CAPTURE",
        _choice(*CAPTURE),
        "session-end capture of remembered statements: off, private or public",
        key="capture",
    )
    hook_timeout: float = _setting(
        DEFAULT_HOOK_TIMEOUT,
        "EIDETIC_HOOK_TIMEOUT",
        _seconds,
        "seconds a hook command may take before it gives up quietly (environment only)",
    )
    hook_daemon: bool = _setting(
        True, "EIDETIC_HOOK_DAEMON", _flag, "0: hook commands never start the warm daemon (environment only)", shown="1"
    )
    hook_idle_minutes: int = _setting(
        DEFAULT_HOOK_IDLE_MINUTES,
        "EIDETIC_HOOK_IDLE_MINUTES",
        _whole(1),
        "minutes the hook daemon waits for a request before it exits",
        key="hook-idle-minutes",
    )
    borrowed_keys: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    terminal: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # TERMINAL's values
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)
    config_files: Mapping[str, Path | None] = field(default_factory=dict, compare=False)  # "user", "repository"

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        """The settings of this process: defaults, your config file, the repository's config
        file, then ``EIDETIC_*`` variables. A malformed value is an error naming where it is."""
        from . import config_files

        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        origins: dict[str, str] = {}
        warnings: list[str] = []
        mine, repo = config_files.user_config_path(env), config_files.repo_config_path(cwd)
        for origin, raw_values in config_files.layers(mine, repo, _specs(), warnings):
            for spec, raw in raw_values:
                values[spec.name] = spec.metadata["parse"](raw, f"{spec.metadata['key']} in {origin}")
                origins[spec.name] = origin
        for spec in _specs():
            raw = env.get(spec.metadata["env"], "").strip()
            if raw:
                values[spec.name] = spec.metadata["parse"](raw, spec.metadata["env"])
                origins[spec.name] = spec.metadata["env"]
        borrowed = {name: env[name].strip() for name in BORROWED_KEYS if env.get(name, "").strip()}
        return cls(
            **values,
            borrowed_keys=borrowed,
            terminal={name: env[name] for name in TERMINAL if name in env},
            origins=origins,
            warnings=tuple(warnings),
            config_files={"user": mine, "repository": repo},
        )

    def with_values(self, origin: str, **values: Any) -> Settings:
        """These settings with ``values`` (None: left as they are) set from ``origin``, e.g. a flag."""
        given = {name: value for name, value in values.items() if value is not None}
        return replace(self, **given, origins={**self.origins, **dict.fromkeys(given, origin)})

    @cached_property
    def cache_dir(self) -> Path:
        return self.cache_dir_override or _platform_dir("cache")

    @cached_property
    def state_dir(self) -> Path:
        return self.state_dir_override or _platform_dir("state")

    @property
    def colour_allowed(self) -> bool:
        """Whether output to a terminal may be coloured: ``NO_COLOR`` unset or empty (no-color.org)
        and ``TERM`` not ``dumb``."""
        return not self.terminal.get("NO_COLOR") and self.terminal.get("TERM") != "dumb"

    @property
    def editor(self) -> str:
        """The command that edits a file: ``$VISUAL``, else ``$EDITOR``, else ``vi``."""
        return (self.terminal.get("VISUAL") or "").strip() or (self.terminal.get("EDITOR") or "").strip() or "vi"

    @property
    def semantic_off(self) -> bool:
        return self.embedder.lower() in ("none", "off", "0")

    def describe(self) -> list[dict[str, Any]]:
        """Every setting: its config key, variable, value (a key only as set or not), origin, help."""
        rows = []
        for spec in _specs():
            value = getattr(self, spec.name)
            if spec.name in ("cache_dir_override", "state_dir_override"):
                value = self.cache_dir if spec.name == "cache_dir_override" else self.state_dir
            elif spec.name in ("embed_api_key", "serve_token", "neo4j_password"):
                value = "(set)" if value else ""  # a secret: never shown
            elif spec.name == "neo4j_uri":
                value = re.sub(r"//([^/@:]*):[^/@]*@", r"//\1:(set)@", value)  # a password in it is a secret too
            rows.append(
                {
                    "key": spec.metadata["key"] or spec.name.replace("_", "-"),
                    "env": spec.metadata["env"],
                    "value": str(value) if isinstance(value, Path) else value,
                    "default": spec.metadata["shown"] if value in (None, "") else None,
                    "origin": self.origins.get(spec.name, "default"),
                    "help": spec.metadata["help"],
                }
            )
        return rows


def _specs() -> list[Any]:
    return [spec for spec in fields(Settings) if "env" in spec.metadata]


def _platform_dir(kind: str) -> Path:
    import platformdirs  # imported here: only commands that touch an index or usage pay for it

    if kind == "cache":
        return Path(platformdirs.user_cache_dir("eidetic", appauthor=False))
    return Path(platformdirs.user_state_dir("eidetic", appauthor=False))
