"""Near-duplicate clusters of one scope, and the survivor of each (``eidetic explain
consolidate``). Pure: candidates and their similar pairs in, clusters out.

Clusters are stars, never chains: candidates are taken best survivor first; one with near-
duplicates not yet in a cluster becomes a survivor, and its cluster is exactly those near-
duplicates, with their twins in text (the same text once normalised, which is no step away).
Every member is similar to its survivor, so A~B~C~D never puts A and D together when they are
unrelated. Near-duplicates: the same text once ``records.normalised``, or a cosine
of at least the threshold with the same particulars (``similar.same_particulars``: the pairs
given are filtered here, so records of one template that differ in an owner, a ticket or a
date are never grouped).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import normalised
from ..timeutil import DATE_UNKNOWN, parse_ts
from .similar import same_particulars

KEEPS = ("recent", "recalled")  # how the survivor is chosen: the most recent, or the most recalled


@dataclass(frozen=True)
class Candidate:
    """An active record of the scope being consolidated."""

    id: str
    text: str
    created: str
    updated: str | None
    recall_count: float


@dataclass(frozen=True)
class Cluster:
    """Positions in the candidate list: the survivor, and each member with its similarity to it."""

    survivor: int
    members: tuple[tuple[int, float], ...]


def preference(candidates: Sequence[Candidate], keep: str) -> list[int]:
    """Candidate positions, best survivor first: the most recent (``created``, then ``updated``:
    an import stamps every record's ``updated`` alike), or with ``keep="recalled"`` the most
    recalled (then the most recent); ties by id."""

    def moment(value: str | None) -> float:
        when = parse_ts(value) if value and value != DATE_UNKNOWN else None
        return when.timestamp() if when is not None else float("-inf")

    def key(position: int) -> tuple[float, float, float, str]:
        c = candidates[position]
        return (-c.recall_count if keep == "recalled" else 0.0, -moment(c.created), -moment(c.updated), c.id)

    return sorted(range(len(candidates)), key=key)


def clusters(
    candidates: Sequence[Candidate],
    pairs: dict[tuple[int, int], float],
    keep: str = "recent",
    survivor: int | None = None,
) -> list[Cluster]:
    """The star clusters (see the module). ``pairs``: (i, j) -> cosine of candidates whose
    vectors are at or above the line (the particulars are checked here). ``survivor``: only the
    cluster formed around this candidate."""
    near: dict[int, dict[int, float]] = defaultdict(dict)
    for (a, b), cosine in pairs.items():
        if same_particulars(candidates[a].text, candidates[b].text):
            near[a][b] = near[b][a] = cosine
    same: dict[str, list[int]] = defaultdict(list)
    for position, candidate in enumerate(candidates):
        same[normalised(candidate.text)].append(position)
    twins = {a: group for group in same.values() if len(group) > 1 for a in group}
    for group in same.values():
        for a in group:
            near[a].update((b, 1.0) for b in group if b != a)
    order = preference(candidates, keep) if survivor is None else [survivor]
    taken: set[int] = set()
    found: list[Cluster] = []
    for leader in order:
        if leader in taken:
            continue
        members = {b: cosine for b, cosine in near.get(leader, {}).items() if b not in taken}
        for b, cosine in list(members.items()):  # a member's twins in text come with it: no chain
            members.update((t, cosine) for t in twins.get(b, ()) if t not in taken and t != leader and t not in members)
        if members:
            ranked = sorted(members.items(), key=lambda item: (-item[1], candidates[item[0]].id))
            found.append(Cluster(leader, tuple(ranked)))
            taken.update([leader, *members])
    return found
