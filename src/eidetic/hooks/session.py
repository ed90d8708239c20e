"""What one agent session was given already, so a record is injected at most once per session and
the session's tokens stay within their budget.

One small JSON file per session under ``<state dir>/hooks/sessions``, named by a hash of the
session id (an id from a payload never becomes a path), written whole (a temporary file,
then a rename) under a lock, and bounded: at most ``MAX_IDS`` ids a session (the oldest dropped),
files untouched for ``KEEP_DAYS`` days removed when a new session starts, at most ``MAX_FILES``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MAX_IDS = 2000
KEEP_DAYS = 14
MAX_FILES = 500
MAX_FILE_BYTES = 256 * 1024  # a larger file is not ours: start afresh


@dataclass
class SessionState:
    """The ids injected into one session, in order, and the tokens they took."""

    session: str
    injected: list[str] = field(default_factory=list)
    tokens: int = 0

    def seen(self, record_id: str) -> bool:
        return record_id in self.injected

    def add(self, ids: list[str], tokens: int) -> None:
        self.injected = [*self.injected, *ids][-MAX_IDS:]
        self.tokens += tokens

    def reset(self) -> None:
        """The agent's context was cleared or compacted: what it was given is gone from it."""
        self.injected, self.tokens = [], 0


def sessions_folder(state_dir: Path) -> Path:
    return state_dir / "hooks" / "sessions"


def session_path(folder: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
    return folder / f"s-{digest[:32]}.json"


@contextmanager
def opened(state_dir: Path, session_id: str) -> Iterator[SessionState]:
    """The session's state, locked; written back when the block ends without an error."""
    from filelock import FileLock

    folder = sessions_folder(state_dir)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = session_path(folder, session_id)
    with FileLock(str(path.with_suffix(".lock")), timeout=5):
        state = _read(path, session_id)
        if state is None:
            _prune(folder)
            state = SessionState(session_id[:200])
        yield state
        _write(path, state)


def _read(path: Path, session_id: str) -> SessionState | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    injected = data.get("injected") if isinstance(data, dict) else None
    if not isinstance(injected, list) or not all(isinstance(i, str) for i in injected):
        return None
    tokens = data.get("tokens")
    return SessionState(session_id[:200], injected[-MAX_IDS:], tokens if isinstance(tokens, int) else 0)


def _write(path: Path, state: SessionState) -> None:
    data = {"session": state.session, "tokens": state.tokens, "injected": state.injected}
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".session-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


def _prune(folder: Path) -> None:
    """Drop sessions untouched for ``KEEP_DAYS`` days, and the oldest beyond ``MAX_FILES`` (at most
    once an hour: a new session should not cost a walk of the folder)."""
    stamp = folder / ".pruned"
    try:
        if time.time() - stamp.stat().st_mtime < 3600:
            return
    except OSError:
        pass
    stamp.touch()
    try:
        files = sorted(((p.stat().st_mtime, p) for p in folder.glob("*.json")), key=lambda pair: pair[0], reverse=True)
    except OSError:
        return
    cutoff = time.time() - KEEP_DAYS * 86400
    for index, (mtime, path) in enumerate(files):
        if mtime < cutoff or index >= MAX_FILES:
            for gone in (path, path.with_suffix(".lock")):
                gone.unlink(missing_ok=True)
