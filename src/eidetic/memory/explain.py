"""``--explain``: how each hit's score came about, per engine, as a dict (``Hit.explain``).

Every engine's dict has ``engine``, ``raw_score`` (before the freshness blend), ``signal``,
``blend_factor`` (what freshness multiplied the raw score by), ``time_factor`` (what the time
the query names multiplied it by, ``ranking.when``), ``blended`` and a ``formula``; the rest is
what its formula reads. ``fields`` mode explains itself (``ranking.fields``).
"""

from __future__ import annotations

from typing import Any

from ..ranking import freshness, traverse
from ..ranking.fusion import Scale
from ..results import Hit

KEYWORD_FORMULA = (
    "BM25 (tantivy: k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)); field weights name 1, "
    "description 1, context 2 (the text, with its thread neighbours'), text 1 (a thread member's own text again))"
)
HYBRID_FORMULA = "alpha * cosine_minmax + (1 - alpha) * bm25 / max_bm25 over the union of each signal's top N"


def _blend(engine: str, raw: float, hit: Hit) -> dict[str, Any]:
    """What every engine shares: the raw score and how freshness moved it."""
    neutral = freshness.is_neutral(hit.record.created, hit.recall_count, hit.last_recall)
    return {
        "engine": engine,
        "raw_score": raw,
        "signal": hit.signal,
        "blend_factor": 1.0 if neutral or not raw else hit.score / (raw * hit.time_factor),
        "time_factor": hit.time_factor,
        "blended": not neutral,
    }


def exact(raw: float, hit: Hit, query: str) -> dict[str, Any]:
    data = _blend("exact", raw, hit)
    data.update(
        {"query_chars": len(query), "text_chars": len(hit.record.text), "formula": "min(1, query_chars / text_chars)"}
    )
    return data


def keyword(raw: float, hit: Hit, terms: list[str]) -> dict[str, Any]:
    from ..index.analyzer import analyze
    from ..ranking.threads import thread_of

    data = _blend("keyword", raw, hit)
    present = set(analyze(" ".join(filter(None, (hit.record.name, hit.record.description, hit.record.text)))))
    # In a thread, terms missing from the record itself matched its neighbours' text.
    data.update(
        {
            "query_terms": terms,
            "matched_terms": [t for t in terms if t in present],
            "thread": thread_of(hit.record.metadata),
            "formula": KEYWORD_FORMULA,
        }
    )
    return data


def semantic(
    engine: str,
    model: str,
    raw: float,
    hit: Hit,
    signals: tuple[float | None, float | None],
    scale: Scale | None,
    alpha: float,
) -> dict[str, Any]:
    """approximate (``scale`` None: the raw score is the cosine) or hybrid (each signal as the
    union of candidates scaled it, and alpha)."""
    cosine, bm25 = signals
    data = _blend(engine, raw, hit)
    data.update({"model": model, "cosine": cosine, "bm25": bm25, "alpha": None, "formula": "cosine"})
    if scale is not None:
        data.update(
            {
                "alpha": alpha,
                "cosine_norm": scale.semantic(cosine),
                "cosine_range": [scale.low, scale.low + scale.span],
                "bm25_norm": scale.keyword(bm25),
                "bm25_max": scale.top,
                "formula": HYBRID_FORMULA,
            }
        )
    return data


def reached(hit: Hit, parent_score: float) -> dict[str, Any]:
    """A linked record: its score is its parent's, halved (freshness does not enter)."""
    return {
        "engine": "traversal",
        "raw_score": hit.score,
        "signal": hit.signal,
        "blend_factor": 1.0,
        "blended": False,
        "parent": hit.parent,
        "parent_score": parent_score,
        "via": hit.via,
        "depth": hit.depth,
        "decay": traverse.DECAY,
        "formula": "parent_score * decay",
    }
