"""Per-user usage state: how often and how lately each record was recalled.

Kept in its own SQLite database under the user's state folder, never in record files, so a
recall never rewrites memory files or dirties a git tree, and never in the index, so it
survives ``eidetic index --rebuild``. Bumps are single atomic upserts: concurrent recalls
never lose an increment.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .sqlite_db import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage(
    store TEXT NOT NULL, id TEXT NOT NULL, recall_count REAL NOT NULL, last_recall TEXT,
    PRIMARY KEY(store, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_count ON usage(store, recall_count);
"""


class UsageState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is None:
            if not create and not self.path.exists():
                return None
            self._conn = connect(self.path, _SCHEMA, "usage state", "set EIDETIC_STATE_DIR to a writable folder")
        return self._conn

    def get(self, store: str, ids: Iterable[str]) -> dict[str, tuple[float, str | None]]:
        conn = self._connect(create=False)
        wanted = list(dict.fromkeys(ids))
        if conn is None or not wanted:
            return {}
        result: dict[str, tuple[float, str | None]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for rid, count, last in conn.execute(
                f"SELECT id, recall_count, last_recall FROM usage WHERE store=? AND id IN ({marks})", [store, *chunk]
            ):
                result[rid] = (count, last)
        return result

    def max_count(self, store: str) -> float:
        """The largest recall_count in ``store`` (0 when nothing was recalled)."""
        conn = self._connect(create=False)
        if conn is None:
            return 0.0
        row = conn.execute("SELECT max(recall_count) FROM usage WHERE store=?", (store,)).fetchone()
        return float(row[0] or 0.0)

    def bump(self, amounts: dict[tuple[str, str], float], when: str) -> None:
        """Add ``amount`` to each (store, id)'s recall_count and set last_recall to ``when``."""
        if not amounts:
            return
        conn = self._connect(create=True)
        assert conn is not None
        rows = [(store, rid, amount, when) for (store, rid), amount in amounts.items()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT INTO usage VALUES(?,?,?,?) ON CONFLICT(store, id) DO UPDATE SET "
                "recall_count = recall_count + excluded.recall_count, "
                "last_recall = max(coalesce(last_recall, ''), excluded.last_recall)",
                rows,
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def set(self, store: str, rid: str, recall_count: float, last_recall: str | None) -> None:
        """Overwrite one record's usage (imports and migrations carry usage across)."""
        conn = self._connect(create=True)
        assert conn is not None
        conn.execute("INSERT OR REPLACE INTO usage VALUES(?,?,?,?)", (store, rid, recall_count, last_recall))

    def forget(self, store: str, rid: str) -> None:
        """Drop a record's usage (``forget --purge``: nothing of it may remain)."""
        conn = self._connect(create=False)
        if conn is not None:
            conn.execute("DELETE FROM usage WHERE store=? AND id=?", (store, rid))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
