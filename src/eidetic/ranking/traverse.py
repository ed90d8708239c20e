"""The traversal bundle: records reached from the primary hits through ``links`` and
``supersedes``, breadth first. Pure: records come from a ``fetch`` callback and admission from
a ``admits`` predicate, so the same walk serves every backend and the tests need no store.

Rules (docs/guide.md's Recall section; the earlier implementation's semantics, which users rely on):
- the seeds (primary hits) are visited at depth 0 and never emitted again;
- a node's edges are its links in order, then its supersedes;
- an id that resolves to nothing is skipped (not marked visited); a resolved id is marked
  visited, and if ``admits`` rejects it (scope, lifecycle, source) it is a dead end: neither
  emitted nor expanded, so nothing is ever reached *through* a record the caller may not see;
- ``truncated`` is true only when a bound cut off a record the caller may see: the node budget
  was exhausted by an admissible record, or a node at the depth bound has an unvisited edge to
  an admissible record. Dangling and inadmissible records never set it, so it reveals nothing
  about records out of scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..records import Record

DECAY = 0.5  # reinforcement and derived score per hop


@dataclass(frozen=True)
class Reached:
    record: Record
    depth: int
    via: str  # "links" or "supersedes"
    parent: str


@dataclass(frozen=True)
class Traversal:
    nodes: tuple[Reached, ...] = ()
    truncated: bool = False


def _edges(record: Record) -> list[tuple[str, str]]:
    edges = [(link, "links") for link in record.links]
    if record.supersedes:
        edges.append((record.supersedes, "supersedes"))
    return edges


def traverse(
    seeds: Sequence[Record],
    fetch: Callable[[Iterable[str]], dict[str, Record]],
    admits: Callable[[Record], bool],
    max_depth: int = 1,
    max_nodes: int = 20,
) -> Traversal:
    """Breadth-first walk from ``seeds``; ``fetch`` resolves many ids at once (missing ids are
    simply absent from its result)."""
    if max_depth <= 0 or not seeds:
        return Traversal()
    visited = {seed.id for seed in seeds}
    cache: dict[str, Record | None] = {}

    def resolve(ids: list[str]) -> None:
        wanted = [i for i in dict.fromkeys(ids) if i not in cache]
        if wanted:
            found = fetch(wanted)
            for rid in wanted:
                cache[rid] = found.get(rid)

    nodes: list[Reached] = []
    level: list[Record] = list(seeds)
    for depth in range(1, max_depth + 1):
        resolve([target for parent in level for target, _ in _edges(parent)])
        following: list[Record] = []
        for parent in level:
            for target, via in _edges(parent):
                if target in visited:
                    continue
                record = cache.get(target)
                if record is None:
                    continue  # dangling: not visited, so another path may still resolve it later
                visited.add(target)
                if not admits(record):
                    continue  # a dead end: never emitted, never expanded
                if len(nodes) >= max_nodes:
                    return Traversal(tuple(nodes), True)
                nodes.append(Reached(record, depth, via, parent.id))
                following.append(record)
        level = following
        if not level:
            return Traversal(tuple(nodes), False)
    # The depth bound: truncated only if an admissible record lies just beyond it.
    resolve([target for parent in level for target, _ in _edges(parent) if target not in visited])
    beyond = any(
        target not in visited and (found := cache.get(target)) is not None and admits(found)
        for parent in level
        for target, _ in _edges(parent)
    )
    return Traversal(tuple(nodes), beyond)
