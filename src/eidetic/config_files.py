"""The config files: yours, and the repository's, in TOML with one ``key = value`` per setting.

Yours is ``EIDETIC_CONFIG``, else ``config.toml`` in the platform's config folder
(``~/.config/eidetic/config.toml`` on Linux). The repository's is ``<repo>/.eidetic/config.toml``,
committed with it and read by everyone who works in it. A repository you clone is not trusted
with where your records go or where their text is sent: it may set only the settings marked
``repo`` (scope, visibility, mode, top-k), and it cannot turn your private default public.
``docs/configuration.md`` has the keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import env_error, user_error

Layer = tuple[str, list[tuple[Any, str]]]  # (where it came from, [(setting's field, raw value)])


def user_config_path(env: Mapping[str, str]) -> Path:
    explicit = env.get("EIDETIC_CONFIG", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs  # the config folder's name differs by platform

    return Path(platformdirs.user_config_dir("eidetic", appauthor=False)) / "config.toml"


def repo_config_path(cwd: Path | None = None) -> Path | None:
    from .locations import repo_root

    root = repo_root(cwd)
    return root / ".eidetic" / "config.toml" if root is not None else None


def layers(mine: Path, repo: Path | None, specs: list[Any], warnings: list[str]) -> list[Layer]:
    """The values each existing config file sets, yours first; what a repository may not set is
    left out with a warning."""
    found: list[Layer] = []
    if mine.is_file():
        found.append((str(mine), read(mine, specs)))
    if repo is not None and repo.is_file() and not (mine.is_file() and _same(repo, mine)):
        allowed = []
        for spec, raw in read(repo, specs):
            if not spec.metadata["repo"]:
                warnings.append(
                    f"ignored {spec.metadata['key']!r} in {repo}: a repository's config may set only "
                    + ", ".join(s.metadata["key"] for s in specs if s.metadata["repo"])
                    + " (set it in your own config file)"
                )
            elif spec.name == "visibility" and raw == "public" and _private_already(found):
                warnings.append(f"ignored visibility = 'public' in {repo}: your own config keeps new records private")
            else:
                allowed.append((spec, raw))
        found.append((str(repo), allowed))
    return found


def read(path: Path, specs: list[Any]) -> list[tuple[Any, str]]:
    """(setting, raw value) for each key of one file; a relative path is taken from the file's folder."""
    import tomllib  # imported here: most commands find no config file

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise user_error(f"{path}: invalid TOML ({exc})", "fix the file, or move it away") from None
    except UnicodeDecodeError:
        raise user_error(f"{path}: not UTF-8 text", "fix the file, or move it away") from None
    except OSError as exc:
        raise env_error(f"cannot read {path}: {exc.strerror or exc}", "check its permissions") from None
    by_key = {spec.metadata["key"]: spec for spec in specs if spec.metadata["key"]}
    values = []
    for key, value in data.items():
        spec = by_key.get(key)
        if spec is None:
            raise user_error(f"{path}: unknown setting {key!r}", "known settings: " + ", ".join(by_key))
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise user_error(f"{path}: {key} must be a string or a number", f'e.g. {key} = "..."')
        raw = str(value).strip()
        if not raw:
            continue  # as an empty variable: not set
        if spec.metadata["path"] and not raw.startswith("~"):
            raw = str(path.parent / raw)  # an absolute raw replaces the folder
        values.append((spec, raw))
    return values


def _private_already(found: list[Layer]) -> bool:
    return any(spec.name == "visibility" and raw == "private" for _, values in found for spec, raw in values)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
