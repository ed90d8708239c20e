"""``GraphStore``: the :class:`~eidetic.stores.base.RecordStore` of the neo4j backend.

The graph server holds the records (nodes), ``links`` and ``supersedes`` (relationships) and
the change sequence; writes go there, one transaction per batch, under the writers' lease.
Every lookup and search is answered by the derived copy in the cache folder (``mirror``: the
same record database, keyword and vector indexes as the sqlite backend), caught up from the
change sequence on each read; traversal walks the relationships in the server. Usage counts
live in the per-user usage state, as for the files and sqlite backends.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...progress import Progress
from ...records import Record
from ...settings import Settings
from ...usage import UsageState
from ..base import IndexedRecord
from ..indexed import IndexedStore
from . import writes
from .connection import Connection, Target
from .lease import Lease
from .mirror import GraphMirror
from .schema import Schema

SEEN_FOR = 0.5  # seconds the point exists() read stands in for sync()'s own read
REACH_LIMIT = 10_000  # ids one traversal query returns at most (the walk resolves the rest itself)


class GraphStore(IndexedStore):
    """A :class:`~eidetic.stores.base.RecordStore` kept in a graph server reached over Bolt."""

    backend = "neo4j"
    index: GraphMirror

    def __init__(self, target: Target, usage: UsageState, settings: Settings, progress: Progress | None = None) -> None:
        self.target = target
        self._connection = Connection(target)
        self._schema = Schema(self._connection)
        self._lease = Lease(self._connection)
        self._seen: tuple[float, dict[str, Any] | None] | None = None  # (when, the point) exists() read
        digest = hashlib.sha256(str(target).encode("utf-8")).hexdigest()[:16]
        safe = "".join(ch if ch.isalnum() else "-" for ch in f"{target.host}-{target.database or ''}")[:40]
        mirror = GraphMirror(
            self._connection, settings.cache_dir / "neo4j" / f"{safe}-{digest}", settings.ann_threshold
        )
        mirror.progress = progress or mirror.progress
        super().__init__(mirror, str(target), str(target), usage)

    def close(self) -> None:
        super().close()
        self._connection.close()

    def exists(self) -> bool:
        self._seen = (time.monotonic(), self._schema.point())
        return self._seen[1] is not None

    def sync(self, full: bool = False) -> None:
        """Catch the derived copy up with the graph's changes: none to read when there are
        none. The graph's point :meth:`exists` has just read (callers ask it first) serves once."""
        seen, self._seen = self._seen, None
        point = seen[1] if seen is not None and time.monotonic() - seen[0] < SEEN_FOR else self._schema.point()
        if point is not None:
            self.index.follow(point)

    def broken(self) -> list[tuple[str, str]]:
        return []  # nodes are written whole by transactions

    def file_of(self, item: IndexedRecord) -> str | None:
        return None

    # -- writes ----------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The writers' lease (``lease``): one writer of this graph store at a time, across
        processes and machines."""
        self._schema.ensure()
        with self._lease.held():
            yield

    def current(self, item: IndexedRecord) -> Record:
        return item.record

    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> dict[str, str | None]:
        """One transaction for the batch (the last copy of an id wins), then the derived copy."""
        records = list({record.id: record for _, record in items}.values())
        if not records:
            return {}
        self._schema.ensure()
        self.index.written(lambda: self._connection.transaction(lambda tx: writes.put(tx, records)), records)
        return dict.fromkeys((record.id for record in records), None)

    def delete(self, item: IndexedRecord) -> None:
        """Purge one record: its node (a stub stays while others link to it) and its copy."""
        self._schema.ensure()
        rid = item.record.id
        self.index.written(lambda: self._connection.transaction(lambda tx: writes.purge(tx, rid)), [], [rid])

    # -- traversal -------------------------------------------------------------------------

    def reach(self, ids: Sequence[str], depth: int) -> dict[str, IndexedRecord] | None:
        """The records within ``depth`` hops of ``ids`` along ``LINKS`` and ``SUPERSEDES``, in
        one variable-length match the server runs (depth-limited); their copies come from the
        derived database."""
        if depth < 1 or not ids:
            return {}
        rows = self._connection.read(
            f"MATCH (s:Memory) WHERE s.id IN $ids MATCH (s)-[:LINKS|SUPERSEDES*1..{int(depth)}]->(t:Memory) "
            "WHERE t.stub IS NULL RETURN DISTINCT t.id AS id LIMIT $limit",
            ids=list(ids),
            limit=REACH_LIMIT,
        )
        return self.by_ids(row["id"] for row in rows)

    # -- maintenance -----------------------------------------------------------------------

    def rebuild(self) -> dict[str, Any]:
        self.index.rebuild(self._schema.point())
        return {"store": self.location, "index": str(self.index.path), "records": self.count(), "unparseable": 0}


def open_store(uri: str | Path, usage: UsageState, settings: Settings, progress: Progress) -> GraphStore:
    """The graph store at ``uri``, signed in as the settings say when the URI does not
    (``stores.backends`` opens every backend so)."""
    target = Target.of(str(uri), settings.neo4j_user, settings.neo4j_password)
    return GraphStore(target, usage, settings, progress)
