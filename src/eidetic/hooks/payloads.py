"""The agents' hook payloads, read defensively, and the output each agent expects.

Claude Code sends one JSON object on stdin (https://code.claude.com/docs/en/hooks): every event
has ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``; ``SessionStart`` adds
``source`` (startup, resume, clear, compact), ``UserPromptSubmit`` adds ``prompt`` and
``SessionEnd`` adds ``reason``. Context goes back as ``{"hookSpecificOutput": {"hookEventName",
"additionalContext"}}`` on stdout with exit status 0. Nothing in a payload is trusted: a session id
is only ever hashed into a file name, a cwd must be an existing absolute folder, and a transcript
path is only read as a regular file of bounded size in the agent's own transcript folders
(``transcript_folders``; ``transcripts`` checks the file as it opens it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AGENTS = ("claude",)
EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "session-end": "SessionEnd"}
SOURCES = ("startup", "resume", "clear", "compact")
MAX_SESSION_CHARS = 256
MAX_PATH_CHARS = 4096
MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Hook:
    """One event's payload, checked: ``session`` is empty when the payload names none usable."""

    session: str
    cwd: Path
    source: str = "startup"
    prompt: str = ""
    transcript: Path | None = None


def parse(payload: Any, client_cwd: Any = None) -> Hook:
    """The usable parts of a payload (anything else is ignored)."""
    data = payload if isinstance(payload, dict) else {}
    session = data.get("session_id")
    if not isinstance(session, str) or len(session) > MAX_SESSION_CHARS or not session.isprintable():
        session = ""
    cwd = _folder(data.get("cwd")) or _folder(client_cwd) or Path.cwd()
    source = data.get("source") if data.get("source") in SOURCES else "startup"
    prompt = data["prompt"] if isinstance(data.get("prompt"), str) else ""
    return Hook(session, cwd, str(source), prompt, _transcript(data.get("transcript_path")))


def _folder(value: Any) -> Path | None:
    if not isinstance(value, str) or not value or len(value) > MAX_PATH_CHARS or "\x00" in value:
        return None
    path = Path(value)
    try:
        return path if path.is_absolute() and path.is_dir() else None
    except OSError:
        return None


def _transcript(value: Any) -> Path | None:
    """The path as named (absolute): the file is checked when it is opened, not before (no race)."""
    if not isinstance(value, str) or not value or len(value) > MAX_PATH_CHARS or "\x00" in value:
        return None
    path = Path(value)
    return path if path.is_absolute() else None


def transcript_folders(agent: str) -> list[Path]:
    """The folders where ``agent`` writes its session transcripts: a payload's ``transcript_path``
    is read only below one of them. Claude Code writes ``projects/<project>/<session>.jsonl``
    (and its subagents' below) in its configuration folder: ``$CLAUDE_CONFIG_DIR`` when that is
    an absolute path, else ``~/.claude``."""
    if agent != "claude":
        return []
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "")
    base = Path(configured) if configured and os.path.isabs(configured) else Path.home() / ".claude"
    return [base / "projects"]


def output(agent: str, event: str, context: str) -> str:
    """What the hook command prints: the agent's JSON for added context, or nothing."""
    if not context or event == "session-end":
        return ""
    body = {"hookSpecificOutput": {"hookEventName": EVENT_NAMES[event], "additionalContext": context}}
    return json.dumps(body, ensure_ascii=False)


def provenance(agent: str, session: str, cwd: Path) -> dict[str, str]:
    """A captured record's origin: the agent, its session, the repository (its folder's name)."""
    from ..locations import repo_root

    root = repo_root(cwd)
    found = {"source": "capture", "agent": agent, "session": session[:MAX_SESSION_CHARS]}
    if root is not None:
        found["repository"] = root.name
    return {key: value for key, value in found.items() if value}
