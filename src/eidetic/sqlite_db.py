"""Opening eidetic's own small SQLite databases (usage state, vector cache) the same way:
WAL (readers never wait for a writer), a busy timeout (writers queue instead of failing),
autocommit (callers open transactions explicitly), the schema applied."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import env_error


def connect(path: Path, schema: str, what: str, remediation: str) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(schema)
    except (OSError, sqlite3.Error) as exc:
        raise env_error(f"cannot open the {what} {path}: {exc}", remediation) from None
    return conn


def chunks(items: list[Any], size: int = 500) -> Iterator[list[Any]]:
    """Slices of at most ``size`` items: SQLite limits the parameters of one statement."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
