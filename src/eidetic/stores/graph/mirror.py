"""The neo4j backend's derived record database: a copy of the graph's records in the cache
folder, with the keyword and vector indexes the sqlite backend uses (``index.database``), so
every lookup, search and listing is the same local SQL and tantivy query on every backend.

It records which graph (the store node's ``instance``) and which change (``seq``) it reflects,
and catches up from there: the records of the changes since (their nodes carry the ``seq`` that
last wrote them) replace their older copies, and the ids purged since (the drop log) go. A
write made through this process is applied directly when nothing came between. Another graph,
a drop log pruned past its point, or a lost file: it is dropped and filled again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ...index.derived import DerivedDatabase
from ...records import Record
from ...settings import DEFAULT_ANN_THRESHOLD
from ...sqlite_db import chunks
from .connection import Connection
from .nodes import record_of

PAGE = 5000  # nodes read per query when filling an empty copy
CHANGED = "MATCH (m:Memory) WHERE m.seq > $since AND m.seq <= $upto RETURN properties(m) AS p"
DROPPED = "MATCH (d:EideticDrop) WHERE d.seq > $since AND d.seq <= $upto RETURN d.id AS id"
ALL = (
    "MATCH (m:Memory) WHERE m.id > $after AND m.seq IS NOT NULL AND m.seq <= $upto "
    "RETURN properties(m) AS p ORDER BY m.id LIMIT $page"
)


class _Behind(Exception):
    """This copy was not at the change before the one just made: it catches up instead."""

    def __init__(self, instance: str, seq: int) -> None:
        self.instance, self.seq = instance, seq


class GraphMirror(DerivedDatabase):
    """The records of the graph at ``connection``, copied into one SQLite file (``path``)."""

    # A record without a file was last touched when it was last written: updated, else created.
    LAST_TOUCHED = "coalesce(d.updated, d.created)"
    rebuilt_from = "it is filled again from the graph"

    def __init__(self, connection: Connection, path: Path, ann_threshold: int = DEFAULT_ANN_THRESHOLD) -> None:
        super().__init__(path, path, ann_threshold)
        self.source = str(connection.target)
        self._connection = connection

    def state(self) -> tuple[str | None, int]:
        """(graph instance, change) this copy reflects; (None, -1) before its first fill."""
        return self.meta("graph_instance"), int(self.meta("graph_seq") or -1)

    def follow(self, point: dict[str, Any]) -> None:
        """Catch up with the graph at ``point`` (its ``instance``, ``seq`` and ``pruned``): one
        local meta read when nothing changed. Another graph, or a drop log pruned past this
        copy's point: it starts over."""
        self._check_keyword()
        instance, seq = str(point["instance"]), int(point["seq"])
        mine, since = self.state()
        if mine == instance and since >= seq:
            return
        if (mine is not None and mine != instance) or since < int(point["pruned"] or 0):
            self._start_over()
        self._write(lambda: self._catch_up(instance, seq))

    def written(
        self, change: Callable[[], tuple[int, str]], records: Sequence[Record], purged: Iterable[str] = ()
    ) -> None:
        """Make a change in the graph (``change`` writes it and returns its (seq, instance)) and
        take it in here. The two overlap: the graph's transaction runs on a thread while this
        copy writes the same records in its own open transaction, which commits only if the
        graph's change directly follows the point it reflects; otherwise it is rolled back and
        the copy catches up from the graph. A failed graph write rolls this copy back too."""
        gone = list(purged)
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(change)

            def take() -> None:
                mine, since = self.state()
                self._replace([*gone, *(r.id for r in records)], records)
                seq, instance = pending.result()
                if mine != instance or since != seq - 1:
                    raise _Behind(instance, seq)
                self._mark(instance, seq)

            try:
                self._write(take)
            except _Behind as behind:
                instance, seq = behind.instance, behind.seq
                self._write(lambda: self._catch_up(instance, seq))

    def rebuild(self, point: dict[str, Any] | None) -> None:
        """Drop this copy and fill it again from the graph (none: leave it empty)."""
        self._start_over()
        if point is not None:
            self._write(lambda: self._catch_up(str(point["instance"]), int(point["seq"])))

    # -- inside a write transaction of this copy (``DerivedDatabase._write``) --------------

    def _catch_up(self, instance: str, upto: int) -> None:
        """Bring the copy to change ``upto``: the records changed since its point replace
        their copies and the ids purged since go; an empty copy reads every record."""
        mine, since = self.state()
        if mine == instance and since >= upto:
            return  # another process of this cache folder caught up meanwhile
        if mine != instance:
            self._fill(upto)
        else:
            read = self._connection.read
            gone = [row["id"] for row in read(DROPPED, since=since, upto=upto)]
            changed = [record_of(row["p"]) for row in read(CHANGED, since=since, upto=upto)]
            self._replace([*gone, *(r.id for r in changed)], changed)
        self._mark(instance, upto)

    def _fill(self, upto: int) -> None:
        """Read every record of the graph up to change ``upto`` into an empty copy, a page at a
        time in id order (the unique index walks it)."""
        after = ""
        while True:
            rows = self._connection.read(ALL, after=after, upto=upto, page=PAGE)
            if not rows:
                return
            self._insert_docs([("", record_of(row["p"])) for row in rows])
            after = rows[-1]["p"]["id"]

    def _replace(self, ids: list[str], records: Sequence[Record]) -> None:
        """Drop the copies of ``ids``, then insert ``records`` (new doc numbers)."""
        conn = self.conn
        for chunk in chunks(list(dict.fromkeys(ids)), 500):
            marks = ",".join("?" * len(chunk))
            for (doc,) in conn.execute(f"SELECT doc FROM docs WHERE id IN ({marks})", chunk).fetchall():
                self._drop_doc(doc)
        if records:
            self._insert_docs([("", record) for record in records])

    def _mark(self, instance: str, seq: int) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES(?, ?)", [("graph_instance", instance), ("graph_seq", str(seq))]
        )

    def _start_over(self) -> None:
        """Drop the copy and everything derived with it (its vectors' doc numbers go with it)."""
        self.close()
        with self.index_lock():
            self._drop_files()

    # -- maintenance ---------------------------------------------------------------------

    def status(self, verify: bool = True) -> dict[str, Any]:
        """Caught up on every read: current, and nothing unparseable (nodes are written whole)."""
        return self._status(self.source, True, [])
