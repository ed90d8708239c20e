"""Which hits of a recall count as used: the records whose usage (``recall_count``,
``last_recall``) grows. Pure.

Usage feeds the freshness signal, so counting a hit nobody needed makes it look fresh and pushes
it up next time. Exact and keyword hits all share the query's words: a hit counts when its score
is at least ``WITHIN`` of the best one's. Approximate and hybrid recall always fill the top k,
and their tail can be unrelated: only the best hit counts. A linked (traversal) record counts,
0.5^depth, only when the record it was reached from counts. Replaying LoCoMo's questions, this
kept hybrid and approximate recall as good as counting nothing, where counting every hit cost
them, and kept keyword recall's small gain (docs/benchmarks.md, "What counts as a recall").
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results import Hit
from .traverse import DECAY

WITHIN = 0.5  # exact and keyword: a hit counts when its score is at least this share of the best one's


def used(items: Sequence[Hit], within: float | None = WITHIN, best_only: bool = False) -> dict[tuple[str, str], float]:
    """(store key, id) -> how much each counted hit adds to its recall count. ``best_only``:
    only the first primary hit counts (a semantic ranking); ``within`` None: every primary hit
    counts. When the best score is not positive (a cosine of 0 or less) nothing matched and no
    hit counts."""
    primary = [hit for hit in items if hit.tier == "primary"]
    best = max((hit.score for hit in primary), default=0.0)
    counted: set[str] = set()
    amounts: dict[tuple[str, str], float] = {}
    for hit in items:
        if hit.tier != "primary":
            keep = hit.parent in counted
        elif best_only:
            keep = hit is primary[0] and best > 0
        else:
            keep = within is None or (best > 0 and hit.score >= within * best)
        if keep:
            counted.add(hit.record.id)
            key = (hit.store, hit.record.id)
            amounts[key] = amounts.get(key, 0.0) + DECAY**hit.depth
    return amounts
