"""Exact top-k under the freshness blend, reading an engine's ranked output page by page.

An engine returns candidates by raw score, best first. The blend multiplies a score by at
most ``max_factor`` (1.125 at most; less in a store with little usage, see
``freshness.max_blend_factor``), so once ``raw x max_factor`` of the next unread candidate is
below the k-th best blended score so far (or below ``min_score``), nothing unread can enter
the top k and reading stops. Equal scores are ordered by ``tiebreak`` (recall: the record's
id), never by the order an engine happened to return them in, so every backend, and every way
of spreading records over stores, gives tied hits the same order; a candidate that ties with
the k-th is always read (the bound is compared strictly). Pure: the engine and the blend are
passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .freshness import MAX_BLEND_FACTOR

T = TypeVar("T")


def top_k_blended(
    fetch: Callable[[int, int], list[tuple[T, float]]],
    blend: Callable[[list[tuple[T, float]]], list[tuple[T, float, float]]],
    k: int,
    min_score: float | None = None,
    page: int | None = None,
    max_factor: float = MAX_BLEND_FACTOR,
    tiebreak: Callable[[T], Any] = lambda item: 0,
) -> list[tuple[T, float, float]]:
    """Return up to k (item, raw, blended), best blended first.

    ``fetch(limit, offset)`` yields (item, raw) in non-increasing raw order; ``blend`` maps a
    page to (item, raw, blended) and may drop items (for example ones another store shadows).
    """
    size = page or max(2 * k + 10, 20)
    kept: list[tuple[T, float, float]] = []
    offset = 0
    while True:
        rows = fetch(size, offset)
        offset += len(rows)
        for item, raw, blended in blend(rows):
            if min_score is None or blended >= min_score:
                kept.append((item, raw, blended))
        kept.sort(key=lambda entry: (-entry[2], -entry[1], tiebreak(entry[0])))
        del kept[k:]
        if len(rows) < size:
            return kept
        bound = rows[-1][1] * max_factor
        threshold = kept[-1][2] if len(kept) >= k else (min_score if min_score is not None else None)
        if threshold is not None and bound < threshold:
            return kept
        size *= 2
