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
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Scale:
    """How one union of candidates is normalised: cosine from ``low`` (0) to ``low + span``
    (1), BM25 divided by ``top``; what ``--explain`` shows of a hybrid score."""

    low: float
    span: float
    top: float

    @classmethod
    def of(cls, keyword: dict[K, float], semantic: dict[K, float]) -> Scale:
        low, high = min(semantic.values(), default=0.0), max(semantic.values(), default=0.0)
        return cls(low, high - low, max(keyword.values(), default=0.0))

    def semantic(self, cosine: float | None) -> float:
        if cosine is None:
            return 0.0
        return (cosine - self.low) / self.span if self.span > 0 else 1.0

    def keyword(self, bm25: float | None) -> float:
        return (bm25 or 0.0) / self.top if self.top > 0 else 0.0


def fuse(keyword: dict[K, float], semantic: dict[K, float], alpha: float) -> dict[K, float]:
    """Blend per candidate: alpha * semantic_norm + (1 - alpha) * keyword_norm."""
    scale = Scale.of(keyword, semantic)
    return {
        item: alpha * scale.semantic(semantic.get(item)) + (1.0 - alpha) * scale.keyword(keyword.get(item))
        for item in set(keyword) | set(semantic)
    }
