"""A hit's relevance as a person reads it: a word beside the number, and which hits are set apart
below the relevance floor. Pure: the terminal's recall output and the viewer share it.

A ranking's score is relative: hybrid's blend is normalised over its candidates, so its best hit
scores about 1.0 whatever was asked, and an unrelated record can look confident. A hit's
``relevance`` (``ranking/relevance.py``) is its raw evidence over the calibrated line, so it
means the same from one query to the next; ``relevant`` is the floor's verdict on the hit (the
best must reach the line, then each its mode's share of it). The words follow both: a hit the
floor lets through is ``strong`` from ``STRONG``, ``good`` on or past the line, ``weak`` below it
(kept for its share); one it does not is ``low``. docs/benchmarks.md ("Relevance in words")
measures how often each word's hits are the right answer and how rarely an unrelated query's
best hit reads anything but ``low``.
"""

from __future__ import annotations

from collections.abc import Sequence

# The lowest relevance at which at most 1 % of unrelated queries show a strong hit, in every mode,
# on the tuning half of the public data (benchmarks/relevance_words.py; a rerun prints it).
STRONG = 1.25
WORDS = ("strong", "good", "weak", "low")

Placed = tuple[str, str, str | None, bool | None]  # a hit's tier, id, parent (linked records), relevant


def word(relevance: float | None, relevant: bool | None) -> str:
    """``strong``, ``good``, ``weak`` or ``low``; empty for a hit that was not judged (exact and
    fields modes, linked records, a model with no calibration)."""
    if relevance is None or relevant is None:
        return ""
    if not relevant:
        return "low"
    return "strong" if relevance >= STRONG else "good" if relevance >= 1.0 else "weak"


def below_floor(items: Sequence[Placed]) -> list[bool]:
    """Which items a person sees set apart: primary hits the floor judged not relevant, and the
    records linked from them (a linked record stands where the hit it was reached from does;
    linked records follow the hits, each after its parent)."""
    apart: dict[str, bool] = {}
    flags = []
    for tier, rid, parent, relevant in items:
        flag = apart.get(parent or "", False) if tier == "traversal" else relevant is False
        apart.setdefault(rid, flag)
        flags.append(flag)
    return flags
