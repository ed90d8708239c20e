"""Writing the graph: each batch, and each purge, is one explicit transaction that first takes
the next change number (``seq`` of the store node: concurrent transactions conflict there, so
changes commit in the order of their numbers), then writes nodes and relationships.

A record's outgoing ``LINKS`` and ``SUPERSEDES`` are replaced with it. A target the store does
not hold becomes a stub node (``stub = true``); a stub nothing points at any more goes. A
purged record leaves a stub when other records still point at it (their relationships stay),
and an ``EideticDrop`` entry so that derived indexes drop it too; entries older than
``DROPS_KEPT`` changes are pruned, and an index further behind is rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...records import Record
from .nodes import properties

DROPS_KEPT = 100_000  # changes whose purges stay in the drop log

NEXT_CHANGE = (
    "MATCH (s:EideticStore {key: 'store'}) SET s.seq = s.seq + 1 "
    "RETURN s.seq AS seq, s.instance AS instance, s.pruned AS pruned"
)
UNLINK = (
    "UNWIND $ids AS id MATCH (m:Memory {id: id})-[e:LINKS|SUPERSEDES]->(t:Memory) "
    "WITH e, t.id AS target DELETE e RETURN collect(DISTINCT target) AS targets"
)
PUT = "UNWIND $rows AS r MERGE (m:Memory {id: r.id}) SET m = r"  # every property replaced: a stub's too
LINK = (
    "UNWIND $edges AS e MATCH (a:Memory {id: e.source}) MERGE (b:Memory {id: e.target}) "
    "ON CREATE SET b.stub = true CREATE (a)-[:LINKS {position: e.position}]->(b)"
)
SUPERSEDE = (
    "UNWIND $edges AS e MATCH (a:Memory {id: e.source}) MERGE (b:Memory {id: e.target}) "
    "ON CREATE SET b.stub = true CREATE (a)-[:SUPERSEDES]->(b)"
)
UNSTUB = (
    "UNWIND $ids AS id MATCH (t:Memory {id: id}) WHERE t.stub = true "
    "OPTIONAL MATCH (t)<-[r]-() WITH t, count(r) AS n WHERE n = 0 DELETE t"
)
POINTED_AT = "MATCH (m:Memory {id: $id}) OPTIONAL MATCH (m)<-[r]-() RETURN count(r) AS n"


def next_change(tx: Any) -> tuple[int, str]:
    """Take the next change number (inside the writing transaction); prune the drop log now
    and then. Returns (seq, the store's instance)."""
    row = tx.run(NEXT_CHANGE).single()
    seq, pruned = int(row["seq"]), int(row["pruned"] or 0)
    if seq - pruned > 2 * DROPS_KEPT:
        limit = seq - DROPS_KEPT
        tx.run("MATCH (d:EideticDrop) WHERE d.seq <= $limit DELETE d", limit=limit).consume()
        tx.run("MATCH (s:EideticStore {key: 'store'}) SET s.pruned = $limit", limit=limit).consume()
    return seq, str(row["instance"])


def put(tx: Any, records: Sequence[Record]) -> tuple[int, str]:
    """Write records (one id once) and their relationships; returns (seq, instance)."""
    seq, instance = next_change(tx)
    ids = [record.id for record in records]
    old_targets = tx.run(UNLINK, ids=ids).single()["targets"]
    tx.run(PUT, rows=[dict(properties(r), id=r.id, seq=seq) for r in records]).consume()
    links = [
        {"source": r.id, "target": target, "position": position}
        for r in records
        for position, target in enumerate(r.links)
    ]
    if links:
        tx.run(LINK, edges=links).consume()
    supersedes = [{"source": r.id, "target": r.supersedes} for r in records if r.supersedes]
    if supersedes:
        tx.run(SUPERSEDE, edges=supersedes).consume()
    if old_targets:
        tx.run(UNSTUB, ids=old_targets).consume()
    return seq, instance


def purge(tx: Any, rid: str) -> tuple[int, str]:
    """Remove one record for good: its node (a stub stays while others point at it), its
    outgoing relationships, and a drop-log entry; returns (seq, instance)."""
    seq, instance = next_change(tx)
    old_targets = tx.run(UNLINK, ids=[rid]).single()["targets"]
    if tx.run(POINTED_AT, id=rid).single()["n"]:
        tx.run("MATCH (m:Memory {id: $id}) SET m = {id: $id, stub: true}", id=rid).consume()
    else:
        tx.run("MATCH (m:Memory {id: $id}) DELETE m", id=rid).consume()
    tx.run("CREATE (:EideticDrop {seq: $seq, id: $id})", seq=seq, id=rid).consume()
    if old_targets:
        tx.run(UNSTUB, ids=old_targets).consume()
    return seq, instance
