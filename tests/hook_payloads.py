"""Claude Code hook payloads as it sends them on stdin, in the shapes of its hooks reference
(https://code.claude.com/docs/en/hooks, "Hook input"): common fields, then each event's own."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def common(event: str, cwd: Path, session: str = "0b6c1c0e-5d3a-4a43-9a55-6d2f3c2b7e11") -> dict:
    return {
        "session_id": session,
        "transcript_path": str(cwd / ".claude-transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": event,
    }


def session_start(cwd: Path, source: str = "startup", **kw) -> str:
    return json.dumps({**common("SessionStart", cwd, **kw), "source": source})


def prompt(cwd: Path, text: str, **kw) -> str:
    return json.dumps({**common("UserPromptSubmit", cwd, **kw), "prompt": text})


def session_end(cwd: Path, transcript: Path, reason: str = "prompt_input_exit", **kw) -> str:
    return json.dumps({**common("SessionEnd", cwd, **kw), "transcript_path": str(transcript), "reason": reason})


def transcript_file(home: Path, session: str) -> Path:
    """Where Claude Code keeps a session's transcript, ``~/.claude/projects/<project>/<session>.jsonl``:
    the only folder a hook payload's ``transcript_path`` is read from."""
    folder = home / ".claude" / "projects" / "-work"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{session}.jsonl"


def transcript_line(kind: str, content, session: str, cwd: Path, at: str) -> str:
    """One line of a Claude Code transcript (JSONL): a user or assistant message."""
    role = "user" if kind == "user" else "assistant"
    return json.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(cwd),
            "sessionId": session,
            "version": "2.1.12",
            "type": kind,
            "message": {"role": role, "content": content},
            "uuid": f"u-{at}",
            "timestamp": at,
        }
    )


def handled(event: str, payload: str, cwd: Path, mode: str = "hybrid") -> dict:
    """What the warm path answers one hook event (``payload``: as sent on stdin), in-process
    (``hooks.respond``), from a fresh engine."""
    from eidetic.hooks.respond import Engine, handle

    request = {"agent": "claude", "event": event, "payload": json.loads(payload), "cwd": str(cwd), "mode": mode}
    engine = Engine()
    try:
        return handle(engine, request)
    finally:
        engine.close()


@contextmanager
def hook_world(env: Path, monkeypatch) -> Iterator[tuple[Path, Path]]:
    """A repository folder and a short runtime folder for the daemon's socket (unix socket paths
    are limited), hooks given a generous timeout (a loaded test machine) and no daemon unless a
    test starts one; the runtime folder goes afterwards."""
    repo = env / "work"
    (repo / ".git").mkdir()
    runtime = Path(tempfile.mkdtemp(prefix="eh-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("EIDETIC_HOOK_TIMEOUT", "30")
    monkeypatch.setenv("EIDETIC_HOOK_DAEMON", "0")
    try:
        yield repo, runtime
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
