"""One hook event in, the agent's output out: what the daemon runs for each request, and what a
hook command runs itself when the daemon is not up.

A request is ``{"agent", "event", "payload", "cwd", "mode"}``: ``event`` is ``session-start``,
``prompt`` or ``session-end``; ``payload`` is the agent's hook input as it came (Claude Code's
JSON: ``session_id``, ``cwd``, ``source``, ``prompt``, ``transcript_path``, ...), every field
checked here, none trusted. The answer is ``{"stdout": TEXT, "log": [LINES]}``: what the hook
command prints (Claude Code's JSON output, or nothing) and what it should log.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import payloads
from .watching import Watcher

if TYPE_CHECKING:
    from ..memory import Memory
    from ..settings import Settings
    from ..stores.files.store import MarkdownStore

EVENTS = ("session-start", "prompt", "session-end")


class Engine:
    """Open memories by the settings and stores they were opened with, kept warm (the daemon's
    state; the fallback opens one for one request). The embedding model is shared by all.

    ``watch`` (the daemon): the files backend's stores are followed by file events
    (``watching``), what changed is marked for re-reading before each request, and the stat
    slice each sync would run (``verify-files``, ``stores.files.folder_changes``) runs between
    requests instead (``check_files``: for what the events missed), so a prompt waits for
    neither."""

    def __init__(self, keep: int = 4, watch: bool = False) -> None:
        self.keep = keep
        self.watcher = Watcher() if watch else None
        self._open: OrderedDict[tuple[Any, ...], tuple[Memory, int]] = OrderedDict()

    def memory(self, settings: Settings, cwd: Path) -> Memory:
        from dataclasses import replace

        from ..locations import repo_root
        from ..memory import Memory
        from ..settings import _specs

        key = (str(repo_root(cwd)), *(getattr(settings, spec.name) for spec in _specs()))
        if key in self._open:
            self._open.move_to_end(key)
        else:
            opened_with = replace(settings, verify_files=0) if self.watcher else settings
            self._open[key] = (Memory.open(cwd=cwd, settings=opened_with), settings.verify_files)
            while len(self._open) > self.keep:
                self._open.popitem(last=False)[1][0].close()
        memory = self._open[key][0]
        if self.watcher is not None:
            for store in _folders(memory):
                self.watcher.follow(store.root)
                changed = self.watcher.take(store.root)
                if changed:
                    store.index.mark_dirty(changed)  # read again by this request's sync
        return memory

    def check_files(self) -> list[str]:
        """Run each open files store's stat slice (``watch``); what failed, for the log."""
        if self.watcher is None:
            return []
        failed, self.watcher.failures = self.watcher.failures, []
        for memory, count in self._open.values():
            for store in _folders(memory) if count > 0 else ():
                try:
                    store.index.sync(verify=count)  # the slice its recalls, opened with 0, leave out
                except Exception as exc:  # noqa: BLE001 - the next request reports a broken store
                    failed.append(f"checking {store.location} failed: {exc!r}")
        return failed

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        while self._open:
            self._open.popitem()[1][0].close()


def _folders(memory: Memory) -> list[MarkdownStore]:
    """The memory's stores that are record folders on disk."""
    from ..stores.files.store import MarkdownStore

    return [store for store in memory.stores() if isinstance(store, MarkdownStore) and store.exists()]


def handle(engine: Engine, request: dict[str, Any]) -> dict[str, Any]:
    """Answer one request; a failure is logged and answered with nothing (the prompt goes on)."""
    from ..errors import EideticError
    from ..settings import Settings

    event, agent = request.get("event"), request.get("agent")
    if event not in EVENTS or agent not in payloads.AGENTS:
        return {"stdout": "", "log": [f"unknown hook {agent!r} {event!r}"]}
    if not isinstance(request.get("payload"), dict):
        return {"stdout": "", "log": [f"{event}: no JSON object on stdin; nothing done"]}
    hook = payloads.parse(request.get("payload"), request.get("cwd"))
    try:
        settings = Settings.load(cwd=hook.cwd)
        memory = engine.memory(settings, hook.cwd)
        mode = request.get("mode") if request.get("mode") in ("hybrid", "keyword") else "hybrid"
        if event == "session-end":
            return {"stdout": "", "log": [end_of_session(memory, settings, hook, embed=mode == "hybrid", agent=agent)]}
        result = context_for(memory, settings, event, hook, str(mode))
    except EideticError as exc:
        return {"stdout": "", "log": [f"{event} failed: {exc.message}"]}
    except Exception as exc:  # noqa: BLE001 - a broken store or a bug must not fail the agent's prompt
        return {"stdout": "", "log": [f"{event} failed: {exc!r}"]}
    note = f"{event}: {len(result.items)} record(s), {result.tokens} tokens, skipped {result.skipped}"
    if event == "prompt" and result.below_floor:  # the log is where a person reads what a prompt got
        note += f", {result.below_floor} below the relevance floor" + ("" if result.items else ": nothing relevant")
    return {"stdout": payloads.output(agent, event, result.context), "log": [note, *result.warnings]}


def context_for(
    memory: Memory,
    settings: Settings,
    event: str,
    hook: payloads.Hook,
    mode: str = "hybrid",
    **options: Any,
) -> Any:
    """The context of a session start or a prompt, recorded in the session's state (when the hook
    names a session). ``options``: ``budget`` (tokens, instead of the setting), ``types`` (a
    start's record types), ``scope`` and ``visibility`` (None: the settings')."""
    from contextlib import nullcontext

    from ..timeutil import now_utc
    from .select import START_TYPES, fit, prompt_candidates, start_candidates
    from .session import opened

    access = {"scope": options.get("scope"), "visibility": options.get("visibility")}
    start = event == "session-start"
    per_event = options.get("budget")
    if per_event is None:
        per_event = settings.context_start_tokens if start else settings.context_prompt_tokens
    with opened(settings.state_dir, hook.session) if hook.session else nullcontext() as state:
        if state is not None and start and hook.source in ("clear", "compact"):
            state.reset()
        used = state.tokens if state is not None else 0
        room = max(0, min(per_event, settings.context_session_tokens - used))
        found: list[Any] = []
        below, warnings = 0, []
        if room and start:
            found = start_candidates(memory, access, tuple(options.get("types") or START_TYPES), now_utc())
        elif room:
            found, below, warnings = prompt_candidates(memory, hook.prompt, access, mode)
        result = fit("start" if start else "prompt", found, state, room)
        result.below_floor, result.warnings = below, warnings
        if state is not None:
            state.add([item.id for item in result.items], result.tokens)
    return result


def end_of_session(
    memory: Memory, settings: Settings, hook: payloads.Hook, embed: bool = False, agent: str = "claude"
) -> str:
    """Capture the session's statements when ``capture`` is on; a line for the log. ``embed``
    (the daemon: its model is loaded) leaves out statements close in meaning to a stored record
    of their scope too (``keep``). The transcript is read only from ``agent``'s own transcript
    folders, never through a symlink (``transcripts``); a refusal is the log line, saying why."""
    if settings.capture == "off":
        return "session-end: capture is off"
    if hook.transcript is None:
        return "session-end: no absolute transcript_path in the payload; nothing captured"
    from ..timeutil import now_utc
    from .keep import keep
    from .regular import Refused
    from .transcripts import read_transcript

    try:
        found, about = read_transcript(hook.transcript, within=payloads.transcript_folders(agent))
    except Refused as exc:
        return f"session-end: transcript {str(hook.transcript)!r} refused: {exc}; nothing captured"
    provenance = payloads.provenance("claude-code", hook.session or about.get("session", ""), hook.cwd)
    access = {"scope": settings.scope, "visibility": settings.capture}
    report = keep(memory, found, provenance, access, now_utc(), embed=embed)
    repeats = sum(item["status"] == "duplicate" for item in report["items"])
    line = f"session-end: captured {report['written']} of {report['found']} statement(s), {repeats} stored already"
    if report["credentials_left_out"]:
        line += (
            f", {report['credentials_left_out']} left out for a credential ({', '.join(report['credential_kinds'])})"
        )
    return line
