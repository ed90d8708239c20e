"""Which hits of a recall count as used: the records whose usage (``recall_count``,
``last_recall``) grows. Pure.

A recall's usage feeds the freshness signal, so counting a hit nobody needed makes it look fresh
and pushes it up next time. Exact and keyword hits all match the query, but approximate and
hybrid recall always fill the top k, and their tail can be unrelated. A primary hit counts when
its score is at least ``WITHIN`` of the best primary hit's; a linked (traversal) record counts,
0.5^depth, only when the record it was reached from counts. docs/benchmarks.md ("What counts as
a recall") has the measurements behind ``WITHIN``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results import Hit
from .traverse import DECAY

WITHIN = 0.5  # a primary hit counts when its score is at least this share of the best one's


def used(items: Sequence[Hit], within: float | None = WITHIN) -> dict[tuple[str, str], float]:
    """(store key, id) -> how much each counted hit adds to its recall count. ``within`` None
    counts every hit (each primary 1, each linked record 0.5^depth); when the best score is not
    positive (a cosine of 0 or less) nothing matched and no hit counts."""
    primary = [hit for hit in items if hit.tier == "primary"]
    best = max((hit.score for hit in primary), default=0.0)
    counted: set[str] = set()
    amounts: dict[tuple[str, str], float] = {}
    for hit in items:
        if hit.tier == "primary":
            keep = within is None or (best > 0 and hit.score >= within * best)
        else:
            keep = hit.parent in counted
        if keep:
            counted.add(hit.record.id)
            key = (hit.store, hit.record.id)
            amounts[key] = amounts.get(key, 0.0) + DECAY**hit.depth
    return amounts
