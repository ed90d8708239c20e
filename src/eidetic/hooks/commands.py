"""The command a Claude Code settings file runs eidetic's hook by, and whether it can run here.

A project's ``.claude/settings.json`` is committed and read on every teammate's machine, so it may
name the hook only by a command on PATH (``eidetic-hook``): a path into one machine's virtual
environment runs on no other, and Claude Code says nothing when a hook's command is missing, so
the teammate's hook would silently do nothing. A file that is one person's on one machine
(``settings.local.json``, ``~/.claude/settings.json``) may name the script by its path when it is
not on PATH. docs/hooks.md, "Claude Code".
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from .claude_settings import LEAN

SHELL = ("&&", "||", ";", "|", "$(", "`")  # a command a person wrote around eidetic's: theirs, not judged


def shared(path: Path) -> bool:
    """Whether a settings file may be read on other machines: a project's ``.claude/settings.json``
    (wherever it is), or any file in a git work tree but ``settings.local.json`` (Claude Code's own
    file for one person); through a symlink, where it points counts too (a ``~/.claude/settings.json``
    linked into a dotfiles repository travels with it)."""
    from ..locations import repo_root

    if path.name == "settings.local.json":
        return False
    user = (Path.home() / ".claude").absolute()
    places = {Path(os.path.abspath(path))}
    if path.is_symlink():
        places.add(path.resolve())
    for place in places:
        in_project = place.name == "settings.json" and place.parent.name == ".claude" and place.parent != user
        if in_project or repo_root(place.parent) is not None:
            return True
    return False


def beside() -> Path | None:
    """This environment's ``eidetic-hook`` (beside the Python that runs eidetic), if it has one."""
    script = Path(sys.executable).parent / LEAN
    return script if script.is_file() and os.access(script, os.X_OK) else None


def choose(is_shared: bool) -> str | None:
    """How a settings file runs the hook: ``eidetic-hook`` by name when it is on PATH; for a file
    of this machine alone, else its path beside this Python, else this Python's ``-m eidetic
    hook`` (a source checkout: ``__main__`` takes the same lean path). None: a shared file, and
    the script is not on PATH (nothing portable to write)."""
    if shutil.which(LEAN):
        return LEAN
    if is_shared:
        return None
    script = beside()
    if script is not None:
        return shlex.quote(str(script))
    return shlex.join([sys.executable, "-m", "eidetic", "hook"])


def problem(command: str, is_shared: bool) -> str | None:
    """Why a hook command in a settings file does not run here, or would run on no teammate's
    machine (``is_shared``); None when it runs."""
    if any(operator in command for operator in SHELL):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return f"its command cannot be read as a shell command: {command}"
    program = words[0] if words else ""
    if "/" not in program:
        if shutil.which(program) is None:
            return f"{program!r} is not on PATH here, so the hook does nothing"
        return None
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return f"{program} is no program on this machine, so the hook does nothing"
    if is_shared:
        return f"it names {program}, a path of this machine: on a teammate's the hook does nothing"
    return None
