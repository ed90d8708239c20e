"""The database that is the store of the ``sqlite`` backend, and how each cache folder's
derived indexes follow it.

The database is never dropped or recreated: a missing one is created by the first write, an
older schema is upgraded in place (``schema.lay_out``), and a damaged one is an error that
leaves the file alone. Its keyword and vector indexes stay derived, under ``derived`` (a path
in the cache folder), and are rebuilt from it whenever they are lost.

Processes with other cache folders may share the database, and each writes only its own
keyword index. So every write transaction logs the docs it drops (``dropped``) and stamps a
new random ``change``; the keyword index records which database (its ``instance``) and which
point of its history it reflects (``TextIndexes.write_state``), and catches up from there on
the next read or write, whoever wrote meanwhile (:meth:`StoreDatabase.follow`).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import env_error
from ..records import Record
from . import schema
from .database import RecordDatabase

DROPPED_KEEP = 100_000  # drops logged for derived indexes still catching up; one further behind rebuilds


class StoreDatabase(RecordDatabase):
    """The sqlite backend's store of record (``path``), with its derived indexes under ``derived``."""

    # A record without a file was last touched when it was last written: updated, else created.
    LAST_TOUCHED = "coalesce(d.updated, d.created)"

    def _open(self) -> sqlite3.Connection:
        """Open (creating, or upgrading in place) the database that is the store of record."""
        try:
            if self.path.exists():
                # Read-only first: opening for writing switches a file to WAL, which would
                # change a file that turns out not to be ours.
                probe = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
                try:
                    foreign = (
                        schema.schema_version(probe) is None
                        and probe.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
                    )
                finally:
                    probe.close()
                if foreign:
                    raise env_error(
                        f"{self.path} is not an eidetic database", "name another file with --db or EIDETIC_SQLITE_PATH"
                    )
            conn = self._connect()
            if schema.schema_version(conn) != schema.SCHEMA_VERSION:
                schema.lay_out(conn, self.path)
            return conn
        except sqlite3.DatabaseError as exc:
            raise env_error(
                f"the database {self.path} is unreadable: {exc}",
                "restore it from a backup (eidetic never deletes or rewrites it)",
            ) from None

    # -- writes --------------------------------------------------------------------------

    def put(self, items: Sequence[tuple[int | None, Record]]) -> None:
        """Insert or replace records, in one transaction: a replaced record's old doc goes and
        the new copy gets a new doc number."""

        def action() -> None:
            olds = [doc for doc, _ in items if doc is not None]
            for doc in olds:
                self._drop_doc(doc)
            if olds:
                self._prune_dropped()
            self._insert_docs([("", record) for _, record in items])

        self._write(action)

    def drop_doc(self, doc: int) -> None:
        """Remove one record for good (``forget --purge``)."""

        def action() -> None:
            self._drop_doc(doc)
            self._prune_dropped()

        self._write(action)

    def _write(self, action: Callable[[], None]) -> None:
        """Run ``action`` in one write transaction, then commit the keyword index to match.

        The transaction first takes in what other cache folders' processes wrote, then stamps a
        new ``change``; the keyword index's state records that point only after tantivy
        commits, so a crash in between makes the next user catch up over it again."""
        conn = self.conn  # opened before the index lock is taken
        with self.index_lock():
            with self._transaction():
                self._catch_up()
                action()
                conn.execute("INSERT OR REPLACE INTO meta VALUES('change', ?)", (uuid.uuid4().hex,))
                point = self._point()
            self.text.commit()
            self.text.write_state(point)

    def _log_drop(self, doc: int, partition: str) -> None:
        """Log the drop, with what other cache folders' keyword indexes need to catch up over it."""
        self.conn.execute("INSERT INTO dropped(doc, partition) VALUES(?, ?)", (doc, partition))

    def _prune_dropped(self) -> None:
        """Keep the drop log to its last ``DROPPED_KEEP`` entries (a keyword index further
        behind is rebuilt instead of caught up)."""
        self.conn.execute("DELETE FROM dropped WHERE seq <= (SELECT max(seq) FROM dropped) - ?", (DROPPED_KEEP,))

    # -- following the database ----------------------------------------------------------

    def follow(self, rebuild: bool = False) -> None:
        """Bring the derived keyword index up to the database, whoever wrote it: this process,
        or another one with another cache folder (whose writes only the database shows). One
        meta query when nothing changed; ``rebuild``: from scratch."""
        conn = self.conn
        if not rebuild and self._follows() and all(self.text.exists(key) for key in self.partitions()):
            return
        with self.index_lock():
            conn.execute("BEGIN")  # one snapshot: what is indexed is what the point names
            try:
                point = self._catch_up(rebuild)
            except BaseException:
                self.text.rollback()
                raise
            finally:
                conn.execute("COMMIT")
            self.text.commit()
            self.text.write_state(point)

    def _follows(self) -> bool:
        """Whether the keyword index reflects the database as it is. Every write transaction
        stamps a new random ``change`` (and so did the database's creation or upgrade), so the
        same change is the same file at the same point of its history."""
        state = self.text.state()
        return state is not None and state.get("change") == self.meta("change")

    def _point(self) -> dict[str, Any]:
        """Where the database is in its history: its file (``instance``), its last change, the
        next doc number, its highest doc (and id), its last logged drop (and doc). The keyword
        index records the point it reflects, and catches up from there."""
        conn = self.conn
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('instance', 'change', 'next_doc')"))
        last = conn.execute("SELECT doc, id FROM docs ORDER BY doc DESC LIMIT 1").fetchone()
        drop = conn.execute("SELECT seq, doc FROM dropped ORDER BY seq DESC LIMIT 1").fetchone()
        return {
            "instance": meta.get("instance"),
            "change": meta.get("change"),
            "next_doc": max(int(meta.get("next_doc") or 1), last[0] + 1 if last else 1),
            "last": list(last) if last else None,
            "seq": drop[0] if drop else 0,
            "seq_doc": drop[1] if drop else None,
        }

    def _catch_up(self, rebuild: bool = False) -> dict[str, Any]:
        """Bring the keyword index (uncommitted) to the database's point, inside the caller's
        transaction and under the index lock, and return that point. Incremental when the
        database's history runs through the point the index reflects; otherwise (another file,
        a restored backup, an unknown state) everything derived from the old history goes and
        the keyword index is rebuilt."""
        point = self._point()
        state = self.text.state()
        if rebuild or state is None or state.keys() != point.keys():
            self._reindex_text()
            if rebuild:
                self.vectors.drop()
        elif not self._continues(state, point):
            self._reindex_text()
            self.vectors.drop()  # their doc numbers name records of another history
        elif state["change"] != point["change"]:
            self._apply_since(state)
        if any(not self.text.exists(key) for key in self.partitions()):
            self._reindex_text()  # one was deleted by hand
        return point

    def _continues(self, state: dict[str, Any], point: dict[str, Any]) -> bool:
        """Whether the database's history runs through ``state``'s point: the same file, no
        counter gone back, the drop log unbroken since, and the record that was last then
        still there or dropped since (a backup restored and written to again fails this)."""
        if state["instance"] != point["instance"]:
            return False
        if state["change"] == point["change"]:
            return True
        if point["next_doc"] < state["next_doc"] or point["seq"] < state["seq"]:
            return False
        conn = self.conn
        first = conn.execute("SELECT min(seq) FROM dropped").fetchone()[0]
        if first is not None and first > state["seq"] + 1:
            return False  # drops it has not seen were pruned from the log
        if state["seq"]:
            row = conn.execute("SELECT doc FROM dropped WHERE seq = ?", (state["seq"],)).fetchone()
            if row is not None and row[0] != state["seq_doc"]:
                return False
        if state["last"]:
            doc, rid = state["last"]
            row = conn.execute("SELECT id FROM docs WHERE doc = ?", (doc,)).fetchone()
            if row is None:
                return (
                    conn.execute("SELECT 1 FROM dropped WHERE seq > ? AND doc = ?", (state["seq"], doc)).fetchone()
                    is not None
                )
            return row[0] == rid
        return True

    def _apply_since(self, state: dict[str, Any]) -> None:
        """Index what changed since ``state``'s point: docs dropped since (from the drop log)
        leave, docs numbered from its ``next_doc`` on arrive. Every entry is deleted before it
        is added, so doing this twice (a crash before the state was recorded) is harmless."""
        conn = self.conn
        drops = conn.execute(
            "SELECT doc, partition FROM dropped WHERE seq > ? ORDER BY seq", (state["seq"],)
        ).fetchall()
        new = [doc for (doc,) in conn.execute("SELECT doc FROM docs WHERE doc >= ?", (state["next_doc"],))]
        for doc, key in drops:
            self.text.delete(key, doc)
        self._add_text(new, fresh=False)

    # -- maintenance ---------------------------------------------------------------------

    def rebuild(self) -> None:
        """Drop everything derived and index the database again."""
        self.follow(rebuild=True)

    def status(self, verify: bool = True) -> dict[str, Any]:
        """The database is the store: its indexes are current once followed, and every row was
        written whole by a transaction (nothing unparseable)."""
        return self._status(str(self.path), True, [])
