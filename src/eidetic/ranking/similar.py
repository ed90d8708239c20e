"""When two records say the same thing: identical once normalised (``records.normalised``, whose
key every record keeps), or close in meaning. Pure.

``remember`` reports a new record's near-duplicates in its scope (``similar_to``) and
``eidetic consolidate`` groups them; both use these two rules, so what one reports the other
finds. Close in meaning is a cosine of the default model's vectors (length 1) at
``SIMILAR_COSINE`` or above *and* the same particulars (``ranking.particulars``: numbers, ids,
versions, dates, addresses, names), since records made from one template come that close
while saying different things. How the line was chosen, on which data, and what the
particulars rule changes there is in docs/benchmarks.md ("Near-duplicates").
"""

from __future__ import annotations

from .particulars import differ, particulars

# Chosen on LoCoMo's tuning conversations (an observation fact and the turn it restates against
# the other turns of its conversation): the lowest line from which fact-turn precision stays
# >= 0.95; held-out precision 1.000 (benchmarks/near_duplicates.py, docs/benchmarks.md).
SIMILAR_COSINE = 0.88


def same_particulars(text: str, other: str) -> bool:
    """Whether neither text has a number, id, date or name the other does not say
    (``ranking.particulars``)."""
    return not differ(particulars(text), particulars(other))


def near_in_meaning(cosine: float, text: str, other: str, threshold: float = SIMILAR_COSINE) -> bool:
    """Whether two texts whose vectors have ``cosine`` say the same memory: close enough, with
    the same particulars."""
    return cosine >= threshold and same_particulars(text, other)
