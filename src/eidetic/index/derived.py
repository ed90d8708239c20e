"""A record database that is derived, never the store of record: the files backend's index of
a record folder (``stores.files.folder_index``) and the neo4j backend's copy of its graph
(``stores.graph.mirror``). An absent, older or damaged one is dropped and laid out again, and
it is filled from its source; a crash between its SQLite commit and its keyword index's commit
leaves a ``keyword_pending`` mark that makes the next user rebuild the keyword index."""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable

from ..errors import env_error
from . import schema
from .database import RecordDatabase


class DerivedDatabase(RecordDatabase):
    """A :class:`RecordDatabase` that can always be rebuilt from ``source`` (shown in errors)."""

    source: str  # what it is derived from: a folder, a graph
    rebuilt_from: str  # how the hint of an unusable one says it is rebuilt

    # -- opening -------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        conn = self._current()
        if conn is not None:
            return conn
        # Create, upgrade or replace a corrupt index under the index lock: several processes
        # may start at once on a new store, and only one may lay the index out.
        with self.index_lock():
            conn = self._current()
            if conn is not None:
                return conn
            self._drop_files()  # derived data: an old or corrupt index is simply rebuilt
            try:
                conn = self._connect()
                conn.executescript(
                    "BEGIN IMMEDIATE;"
                    + schema.SCHEMA
                    + f"INSERT INTO meta VALUES('schema', '{schema.SCHEMA_VERSION}');"
                    + f"INSERT INTO meta VALUES('instance', '{uuid.uuid4().hex}');COMMIT;"
                )
                conn.execute("INSERT OR REPLACE INTO meta VALUES('store', ?)", (self.source,))
                return conn
            except sqlite3.DatabaseError as exc:
                raise env_error(
                    f"the index {self.path} is unusable: {exc}", f"delete it; {self.rebuilt_from}"
                ) from None

    def _current(self) -> sqlite3.Connection | None:
        """A connection to the index if it exists with this schema version, else None."""
        try:
            conn = self._connect()
            if schema.schema_version(conn) == schema.SCHEMA_VERSION:
                return conn
            conn.close()
        except sqlite3.DatabaseError:
            pass
        return None

    def _drop_files(self) -> None:
        """Drop the index: its database and everything derived with it."""
        self.text.drop()
        self.vectors.drop()
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass

    # -- writing -------------------------------------------------------------------------

    def _write(self, action: Callable[[], None]) -> None:
        """Run ``action`` in one write transaction, then commit the keyword index to match.

        SQLite commits first, with ``keyword_pending`` set when the keyword index changed: a
        crash before tantivy's commit leaves it set, and the next user rebuilds the keyword
        index from SQLite (:meth:`_check_keyword`). Each write bumps ``generation``, which
        tells a sync whether another process wrote since it looked."""
        conn = self.conn  # opened before the index lock is taken: opening may take it
        with self.index_lock():
            with self._transaction():
                action()
                conn.execute(
                    "INSERT INTO meta VALUES('generation', '1') ON CONFLICT(key) "
                    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
                if self.text.dirty:
                    conn.execute("INSERT OR REPLACE INTO meta VALUES('keyword_pending', '1')")
            if self.text.dirty:
                self.text.commit()
                conn.execute("DELETE FROM meta WHERE key='keyword_pending'")

    def _keyword_behind(self) -> bool:
        return self.meta("keyword_pending") is not None or any(not self.text.exists(key) for key in self.partitions())

    def _check_keyword(self) -> None:
        """Rebuild the keyword indexes from SQLite when a crash left them behind, or one is missing."""
        if not self._keyword_behind():
            return
        with self.index_lock():
            if not self._keyword_behind():
                return  # another process was mid-write and has finished
            self._reindex_text()
            self.text.commit()
            self.conn.execute("DELETE FROM meta WHERE key='keyword_pending'")
