"""The embedding cache: one vector per (model, text hash), computed once, kept per user.

Content-addressed, so identical texts in several stores share a vector, an index rebuild
loses none, and vectors of two models never mix (the model is part of the key).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..sqlite_db import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY(model, hash)) WITHOUT ROWID;
"""


class VectorCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = connect(self.path, _SCHEMA, "embedding cache", "set EIDETIC_CACHE_DIR to a writable folder")
        return self._conn

    def get(self, model: str, hashes: Iterable[str]) -> dict[str, Any]:
        import numpy as np

        wanted = list(dict.fromkeys(hashes))
        found: dict[str, Any] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for h, blob in self.conn.execute(
                f"SELECT hash, vec FROM vectors WHERE model=? AND hash IN ({marks})", [model, *chunk]
            ):
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, model: str, items: Iterable[tuple[str, Any]]) -> None:
        rows = [(model, h, vec.astype("float32").tobytes()) for h, vec in items]
        if rows:
            self.conn.executemany("INSERT OR REPLACE INTO vectors VALUES(?,?,?)", rows)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
