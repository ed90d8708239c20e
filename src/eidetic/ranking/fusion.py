"""Hybrid fusion: a convex blend of the keyword and the semantic signal over the union
of each signal's top N, each normalised to [0, 1] over that union. Pure.

BM25 is divided by its maximum (it is never negative, so every keyword match keeps a positive
share and is never dropped by normalisation, unlike the earlier implementation's min-max);
cosine is min-max normalised over the candidates (its useful range is narrow and shifted).
Convex fusion of normalised scores beat reciprocal-rank fusion on the public data
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def fuse(keyword: dict[K, float], semantic: dict[K, float], alpha: float) -> dict[K, float]:
    """Blend per candidate: alpha * semantic_norm + (1 - alpha) * keyword_norm."""
    top = max(keyword.values(), default=0.0)
    low, high = min(semantic.values(), default=0.0), max(semantic.values(), default=0.0)
    span = high - low
    fused = {}
    for item in set(keyword) | set(semantic):
        kw = keyword.get(item, 0.0) / top if top > 0 else 0.0
        if item in semantic:
            sem = (semantic[item] - low) / span if span > 0 else 1.0
        else:
            sem = 0.0
        fused[item] = alpha * sem + (1.0 - alpha) * kw
    return fused
