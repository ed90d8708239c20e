"""The graph's layout, created idempotently and versioned.

Nodes (docs/graph-backend.md has the picture):

- ``(:Memory {id, ...})``: one per record id, its fields as properties (``links`` a list;
  ``metadata`` and ``history`` JSON text, as Neo4j properties cannot be maps), and ``seq``,
  the change that last wrote it. A node with ``stub = true`` is an id that records link to
  but this store does not hold (yet): relationships need both ends.
- ``(:Memory)-[:LINKS {position}]->(:Memory)`` for each of ``links`` (in order) and
  ``(:Memory)-[:SUPERSEDES]->(:Memory)``.
- ``(:EideticStore {key: 'store'})``: the schema version, the store's ``instance`` (a random
  id: a graph replaced by another is told apart), ``seq`` (the last change; every write
  transaction takes the next) and ``pruned`` (the drop log holds nothing at or before it).
- ``(:EideticDrop {seq, id})``: a record purged by change ``seq``, so that derived indexes
  catching up drop it too.
- ``(:EideticLock {key: 'writers'})``: the writers' lease (``lease``).

Only portable Cypher: ``CREATE CONSTRAINT/INDEX ... IF NOT EXISTS`` as Neo4j 5 spells them.
"""

from __future__ import annotations

import uuid
from typing import Any

from ...errors import env_error
from .connection import Connection

SCHEMA_VERSION = 1
STATEMENTS = (
    "CREATE CONSTRAINT eidetic_memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE",
    "CREATE INDEX eidetic_memory_seq IF NOT EXISTS FOR (m:Memory) ON (m.seq)",
    "CREATE CONSTRAINT eidetic_store_key IF NOT EXISTS FOR (s:EideticStore) REQUIRE s.key IS UNIQUE",
    "CREATE INDEX eidetic_drop_seq IF NOT EXISTS FOR (d:EideticDrop) ON (d.seq)",
    "CREATE CONSTRAINT eidetic_lock_key IF NOT EXISTS FOR (l:EideticLock) REQUIRE l.key IS UNIQUE",
)
# Upgrades from each older version to the next, as (to version, statements): a graph is the
# store of record, never dropped and rebuilt. Empty while there is one version.
MIGRATIONS: dict[int, tuple[int, tuple[str, ...]]] = {}
POINT = "MATCH (s:EideticStore {key: 'store'}) RETURN s.schema AS schema, s.instance AS instance, s.seq AS seq, s.pruned AS pruned"


class Schema:
    """Whether the graph is laid out, and laying it out (or upgrading it) when a write needs it."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._ready = False

    def point(self) -> dict[str, Any] | None:
        """The store node's version, instance, last change and drop-log start; None when the
        graph holds no store yet (reads never create one)."""
        rows = self._connection.read(POINT)
        if not rows:
            return None
        point = rows[0]
        self._check(point["schema"])
        return point

    def ensure(self) -> None:
        """Create the constraints, indexes and store node if missing, and upgrade an older
        layout: each statement is idempotent, so concurrent first writers are harmless."""
        if self._ready:
            return
        point = self.point()
        version = point["schema"] if point is not None else None
        if version is None:
            for statement in STATEMENTS:
                self._connection.run(statement)
            self._connection.transaction(
                lambda tx: tx.run(
                    "MERGE (s:EideticStore {key: 'store'}) ON CREATE SET s.schema = $version, "
                    "s.instance = $instance, s.seq = 0, s.pruned = 0",
                    version=SCHEMA_VERSION,
                    instance=uuid.uuid4().hex,
                ).consume()
            )
        else:
            self._upgrade(int(str(version)))
        self._ready = True

    def _upgrade(self, version: int) -> None:
        while version != SCHEMA_VERSION:
            version, statements = MIGRATIONS[version]
            for statement in statements:
                self._connection.run(statement)
            self._connection.run("MATCH (s:EideticStore {key: 'store'}) SET s.schema = $v", v=version)

    def _check(self, version: object) -> None:
        if version is None or version == SCHEMA_VERSION or version in MIGRATIONS:
            return
        raise env_error(
            f"the graph at {self._connection.target} has eidetic schema version {version}, which this "
            f"eidetic (schema {SCHEMA_VERSION}) cannot read",
            "upgrade eidetic; the graph was left as it was",
        )
