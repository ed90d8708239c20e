"""eidetic's hooks in a Claude Code settings file (``{"hooks": {"SessionStart": [{"hooks":
[{"type": "command", "command": ..., "timeout": ...}]}], ...}}``, https://code.claude.com/docs/en/hooks):
added, found and removed without touching anything else in the file.

Install appends one entry per event (``SessionStart``, ``UserPromptSubmit``, ``SessionEnd``) after
whatever is there, in the file's own indentation; an event that already runs eidetic's hook is
left alone, except that the command an earlier install wrote there (``eidetic hook claude EVENT``)
becomes the lean ``eidetic-hook claude EVENT`` when that is what install writes now, and a path
of ``eidetic-hook`` becomes its bare name when install writes that (only the command's string
changes; ``hooks.commands`` chooses what install writes). Uninstall removes exactly eidetic's hook commands (an entry left empty by that, an
event left empty, ``hooks`` left empty), and when the file is still as install left it, puts back
the very bytes it had before (``installs.json`` in the state folder remembers them), and removes
the folders install made for the file when they are empty. A file that is not a JSON object, is
nested too deeply to read, repeats a key where Claude Code would read only the last one (``hooks``,
or any key inside it), or whose ``hooks`` are not shaped as Claude Code reads them, is an error
and is never written; so is a path that is no regular file (a FIFO, a device, a folder) or a
symlink to nothing (never followed into a new file). Writes are atomic and go to the file a
symlink points at.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import user_error
from . import jsonedit
from .regular import Missing, Refused, read_regular

EVENTS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "session-end": "SessionEnd"}
TIMEOUT = 10  # seconds Claude Code gives the command (the command itself gives up sooner)
OURS = re.compile(
    r"(?:^|[\s/\\])(eidetic(?:\.exe)?\s+hook|eidetic-hook(?:\.exe)?'?)\s+claude\s+(session-start|prompt|session-end)\s*$"
)
LEAN = "eidetic-hook"  # the console script that starts lean (hooks.client); ``eidetic hook`` loads the CLI first
# What an earlier install wrote (``eidetic hook``, or ``PYTHON -m eidetic hook``), whole: a command a
# person wrapped (``cd x && eidetic hook claude prompt``) is theirs and is left as it is.
EARLIER = re.compile(r"^(?:eidetic|(?:[^\s']+|'[^']*') -m eidetic) hook claude (session-start|prompt|session-end)$")
# The script by its path (what install wrote where it was not on PATH): made the bare name when
# install writes that, so a shared file names no path of one machine.
PATHED = re.compile(r"^(?:[^\s']*/|'[^']*/)eidetic-hook(?:\.exe)?'? claude (session-start|prompt|session-end)$")
MAX_REMEMBERED = 1024 * 1024  # bytes of a file's earlier text kept for an exact uninstall
MAX_BYTES = 16 * 1024 * 1024  # a settings file is a few KiB; a larger one is refused, not read
MAX_DEPTH = 200  # levels of nesting read; far above any settings file, well within the parser's recursion
UNWRITTEN = "nothing was written"


def entry(command: str, event: str) -> dict[str, Any]:
    """``command``: ``eidetic-hook`` (or its path), or ``eidetic hook`` (or ``PYTHON -m eidetic hook``)."""
    return {"hooks": [{"type": "command", "command": f"{command} claude {event}", "timeout": TIMEOUT}]}


def is_lean(command: str) -> bool:
    """Whether a command (as ``entry`` takes it) runs the ``eidetic-hook`` script."""
    found = OURS.search(f"{command} claude prompt")
    return found is not None and found.group(1).startswith(LEAN)


def read(path: Path) -> str | None:
    """The file's text (None: no file); an error when it cannot be edited safely (see the module)."""
    try:
        data = read_regular(path, MAX_BYTES)
    except Missing:
        if os.path.islink(path):
            raise user_error(
                f"{path} is a symbolic link to {os.readlink(path)}, which is no file",
                f"make the file it names, or remove the link; {UNWRITTEN}",
            ) from None
        return None
    except Refused as exc:
        raise user_error(f"{path} is {exc}", f"name Claude Code's settings file (JSON); {UNWRITTEN}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise user_error(f"{path} is not UTF-8 text", f"fix it or move it away; {UNWRITTEN}") from None
    try:
        parsed = json.loads(text, object_pairs_hook=_Object)
    except RecursionError:
        raise user_error(
            f"{path} is not valid JSON (nested too deeply to read)", f"fix it or move it away; {UNWRITTEN}"
        ) from None
    except json.JSONDecodeError as exc:
        if text[exc.pos : exc.pos + 2] in ("//", "/*"):
            raise user_error(
                f"{path} has a comment at line {exc.lineno} column {exc.colno}: not valid JSON, and Claude Code "
                "ignores a settings file with comments",
                f'remove the comments (a "_comment" key may hold the words), then run this again; {UNWRITTEN}',
            ) from None
        raise user_error(f"{path} is not valid JSON ({exc})", f"fix it or move it away; {UNWRITTEN}") from None
    if _depth(parsed) > MAX_DEPTH:
        raise user_error(
            f"{path} is not valid JSON (nested more than {MAX_DEPTH} levels deep)",
            f"fix it or move it away; {UNWRITTEN}",
        )
    if not isinstance(parsed, dict):
        raise user_error(f"{path} is not a JSON object", f"Claude Code's settings are one object; {UNWRITTEN}")
    twice = _repeated(parsed)
    if twice:
        raise user_error(
            f"{path}: {twice} (Claude Code reads only the last)",
            f"merge them into one, then run this again; {UNWRITTEN}",
        )
    hooks = parsed.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise user_error(
            f'{path}: "hooks" is not an object of lists', f'see "hooks" in Claude Code\'s settings; {UNWRITTEN}'
        )
    return text


class _Object(dict):
    """A JSON object as parsed, with the keys it held more than once (``json`` keeps the last)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        self.repeated: list[str] = []
        for key, _ in pairs:
            if key in seen:
                self.repeated.append(key)
            seen.add(key)


def _repeated(root: dict[str, Any]) -> str | None:
    """Where a key eidetic reads or edits is repeated: ``hooks`` at the top, or any key inside it
    (jsonedit edits the first, Claude Code reads the last). Keys repeated elsewhere are left alone."""
    if "hooks" in getattr(root, "repeated", ()):
        return 'the key "hooks" appears twice in the top-level object'
    stack: list[tuple[str, Any]] = [('"hooks"', root.get("hooks"))]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            repeated = getattr(value, "repeated", None)
            if repeated:
                return f"the key {json.dumps(repeated[0], ensure_ascii=False)} appears twice in {where}"
            stack.extend((f"{where}.{json.dumps(key, ensure_ascii=False)}", item) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    return None


def _depth(value: Any) -> int:
    """How deeply containers nest in a parsed value (1: a flat object), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def installed(text: str | None) -> dict[str, list[str]]:
    """Claude event -> eidetic's hook commands in it."""
    found: dict[str, list[str]] = {}
    hooks = json.loads(text).get("hooks", {}) if text else {}
    for name, groups in hooks.items():
        for group in groups:
            commands = group.get("hooks") if isinstance(group, dict) else None
            for hook in commands if isinstance(commands, list) else []:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str) and OURS.search(hook["command"]):
                    found.setdefault(name, []).append(hook["command"])
    return found


def with_hooks(text: str | None, command: str, events: tuple[str, ...] = tuple(EVENTS)) -> str:
    """``text`` with eidetic's hook for each event that has none yet (``command``: as ``entry``),
    and earlier ``eidetic hook`` commands made ``command`` when it is the lean one (paths of
    ``eidetic-hook`` too, when it is the bare name)."""
    text = text if text is not None and text.strip() else "{}\n"
    earlier = [EARLIER] if is_lean(command) else []
    if command == LEAN:
        earlier.append(PATHED)
    while earlier:
        edited = _leaner_one(text, command, earlier)
        if edited is None:
            break
        text = edited
    present = installed(text)
    missing = {EVENTS[event]: [entry(command, event)] for event in events if EVENTS[event] not in present}
    root = _root(text)
    hooks = jsonedit.member(text, root, "hooks")
    if hooks is None:
        return jsonedit.append(text, root, missing, "hooks") if missing else text
    for name, groups in missing.items():
        hooks = jsonedit.member(text, root, "hooks")
        assert hooks is not None
        found = jsonedit.member(text, hooks.value_start, name)
        if found is None:
            text = jsonedit.append(text, hooks.value_start, groups, name)
        else:
            text = jsonedit.append(text, found.value_start, groups[0])
    return text


def updated(before: str | None, after: str) -> list[str]:
    """The events whose eidetic hook command changed from ``before`` to ``after`` (and was there)."""
    earlier, now = installed(before), installed(after)
    return sorted(name for name in earlier if name in now and earlier[name] != now[name])


def _leaner_one(text: str, command: str, earlier_forms: list[re.Pattern[str]]) -> str | None:
    """``text`` with the first command an earlier install wrote (one of ``earlier_forms``) made
    ``command claude EVENT``."""
    hooks = jsonedit.member(text, _root(text), "hooks")
    for event in jsonedit.children(text, hooks.value_start) if hooks else []:
        for group in jsonedit.children(text, event.value_start):
            inner = jsonedit.member(text, group.value_start, "hooks") if isinstance(group.value, dict) else None
            for hook in jsonedit.children(text, inner.value_start) if inner and isinstance(inner.value, list) else []:
                found = jsonedit.member(text, hook.value_start, "command") if isinstance(hook.value, dict) else None
                value = found.value if found and isinstance(found.value, str) else ""
                earlier = next((m for m in (form.match(value) for form in earlier_forms) if m), None)
                if found and earlier:
                    return jsonedit.replace(text, found, f"{command} claude {earlier.group(1)}")
    return None


def without_hooks(text: str) -> str:
    """``text`` without eidetic's hook commands, and without the containers that left empty."""
    while True:
        edited = _remove_one(text)
        if edited is None:
            return text
        text = edited


def _remove_one(text: str) -> str | None:
    root = _root(text)
    hooks = jsonedit.member(text, root, "hooks")
    if hooks is None:
        return None
    events = jsonedit.children(text, hooks.value_start)
    for e, event in enumerate(events):
        groups = jsonedit.children(text, event.value_start)
        for g, group in enumerate(groups):
            inner = jsonedit.member(text, group.value_start, "hooks") if isinstance(group.value, dict) else None
            commands = jsonedit.children(text, inner.value_start) if inner and isinstance(inner.value, list) else []
            for c, command in enumerate(commands):
                if isinstance(command.value, dict) and OURS.search(str(command.value.get("command", ""))):
                    if len(commands) > 1:
                        return jsonedit.remove(text, inner.value_start, c)  # type: ignore[union-attr]
                    if len(groups) > 1:
                        return jsonedit.remove(text, event.value_start, g)
                    if len(events) > 1:
                        return jsonedit.remove(text, hooks.value_start, e)
                    return jsonedit.remove(text, root, [c.key for c in jsonedit.children(text, root)].index("hooks"))
    return None


def _root(text: str) -> int:
    return len(text) - len(text.lstrip())


def write(path: Path, text: str) -> list[Path]:
    """Whole or not at all, keeping the file's mode; through a symlink to the file it names (a
    symlink to nothing is refused: it is never followed into a new file). The folders it made
    for the file, outermost first."""
    target = path.resolve() if path.is_symlink() else path
    if target is not path and not target.is_file():
        raise user_error(f"{path} is a symbolic link to {os.readlink(path)}, which is no file", UNWRITTEN)
    if target.exists() and not target.stat().st_mode & 0o222:  # read-only: kept so on purpose (root too)
        raise user_error(
            f"{target} is read-only (mode {target.stat().st_mode & 0o777:o})",
            f"make it writable (chmod u+w) if eidetic may edit it, or choose another file (--local); {UNWRITTEN}",
        )
    folder = Path(os.path.abspath(target.parent))  # no ".." left: a folder recorded is one rmdir can name
    made = [each for each in (folder, *folder.parents) if not each.exists()][::-1]
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except PermissionError:
        raise user_error(
            f"cannot write in {target.parent}: permission denied",
            f"run this as the folder's owner, or choose another file (--local, --user); {UNWRITTEN}",
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temp, mode)
        os.replace(temp, target)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return made


def remember_install(state_dir: Path, path: Path, before: str | None, after: str, made: Sequence[Path] = ()) -> None:
    """Keep the file's earlier text, so uninstall can put it back exactly, and the folders install
    made for a new file (``made``), so uninstall can remove them again. When eidetic's hooks
    were there already (an update), the text before them still is what uninstall gives back, if
    the file was as an earlier install left it; else none is (uninstall removes only ours)."""
    book = _book(state_dir)
    key = str(path.resolve())
    if installed(before):
        known = book.get(key)
        if isinstance(known, dict) and known.get("after") == _digest(before or ""):
            known["after"] = _digest(after)
        else:
            book.pop(key, None)
    elif before is None or len(before.encode("utf-8")) <= MAX_REMEMBERED:
        book[key] = {"before": before, "after": _digest(after), "made": [str(folder) for folder in made]}
    _save_book(state_dir, book)


def restored(state_dir: Path, path: Path, now: str) -> tuple[bool, str | None, list[Path]]:
    """(True, the earlier text or None for no file, the folders install made for it) when the
    file is as install left it."""
    book = _book(state_dir)
    known = book.pop(str(path.resolve()), None)
    _save_book(state_dir, book)
    if isinstance(known, dict) and known.get("after") == _digest(now):
        before = known.get("before")
        made = known.get("made")
        folders = [Path(f) for f in made if isinstance(f, str)] if isinstance(made, list) else []
        return True, before if isinstance(before, str) else None, folders
    return False, None, []


def remove_made(path: Path, made: list[Path]) -> None:
    """Remove the folders install made for ``path`` (innermost first) while they are empty; only
    folders that hold ``path`` are considered, whatever the record says."""
    holding = set(Path(os.path.abspath(path)).parents)
    for folder in reversed(made):
        if folder not in holding:
            continue
        try:
            folder.rmdir()  # only an empty folder goes
        except OSError:
            return


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _book(state_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((state_dir / "hooks" / "installs.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_book(state_dir: Path, book: dict[str, Any]) -> None:
    folder = state_dir / "hooks"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    write(folder / "installs.json", json.dumps(book, ensure_ascii=False, indent=1))
