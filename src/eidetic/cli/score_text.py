"""``recall --explain`` for people: what a hit's score is made of, and what it means, per engine
(the JSON keeps the numbers: ``memory.explain``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Explain = dict[str, Any]


FRESHNESS = (
    "freshness: the signal (0..1, from age, recall count and staleness) moves a score by at most 12.5% either way"
)


def explain_lines(explain: Explain, score: float) -> list[str]:
    """A few lines: the score's arithmetic, then how to read it."""
    render = _ENGINES.get(explain.get("engine", ""))
    if render is None:
        return [f"score {score:.4f}"]
    lines = render(explain, score) + ([FRESHNESS] if explain.get("blended") else [])
    return lines + _relevance(explain) if "relevance_floor" in explain else lines


def _relevance(explain: Explain) -> list[str]:
    """How the relevance floor judged the hit: its evidence over the calibrated floors."""
    if explain["relevance"] is None:
        return [f"relevance: not judged ({explain.get('model')} has no calibrated floor)"]
    parts = []
    if explain.get("cosine") is not None and explain["cosine_floor"]:
        parts.append(f"cosine {explain['cosine']:.4f} / {explain['cosine_floor']:g}")
    bm25 = explain.get("bm25", explain["raw_score"] if explain["engine"] == "keyword" else None)
    if bm25 is not None and explain["query_idf"] and explain["keyword_floor"]:
        parts.append(f"BM25 {bm25:.4f} / query idf {explain['query_idf']:.3f} / {explain['keyword_floor']:g}")
    if explain.get("cosine_reference") is not None and explain.get("cosine") is not None:
        parts.append(
            f"how far it stands out, (cosine {explain['cosine']:.4f} - the store's reference "
            f"{explain['cosine_reference']:.4f}) / {explain['standout_floor']:g}"
        )
    evidence = f"the larger of {' and '.join(parts)}" if len(parts) > 1 else (parts or ["no evidence"])[0]
    young = explain.get("best_share")
    return [
        f"relevance {explain['relevance']:.4f} = {evidence} (floor {explain['relevance_floor']:g}: the best hit "
        f"must reach it, each hit {explain['hit_share']:g} of it)"
        + (f", or {young:g} of the best hit's if that is lower (a young store)" if young is not None else "")
    ]


def _freshness(explain: Explain) -> str:
    if not explain.get("blended"):
        return "(no date, never recalled: not blended with freshness)"
    return f"x freshness {explain['blend_factor']:.4f} (signal {explain['signal']:.3f})"


def _exact(explain: Explain, score: float) -> list[str]:
    return [
        f"score {score:.4f} = {explain['query_chars']} query chars / {explain['text_chars']} text chars "
        f"= {explain['raw_score']:.4f} {_freshness(explain)}",
        "exact: the text contains the query; the shorter the text around it, the higher (1: the whole text)",
    ]


def _keyword(explain: Explain, score: float) -> list[str]:
    matched = ", ".join(explain["matched_terms"]) or "none in the record itself"
    lines = [
        f"score {score:.4f} = BM25 {explain['raw_score']:.4f} {_freshness(explain)}",
        f"keyword: matched {matched} of {', '.join(explain['query_terms'])}; BM25 grows with how rare a term is "
        "in the store and how often it occurs in the record's name, description and text for its length; "
        "compare scores within one query only",
    ]
    if explain.get("thread"):
        lines.append(f"thread {explain['thread']}: the record's neighbours in it lend their words (context)")
    return lines


def _semantic(explain: Explain, score: float) -> list[str]:
    if explain["alpha"] is None:
        return [
            f"score {score:.4f} = cosine {explain['raw_score']:.4f} {_freshness(explain)}",
            f"approximate: how close the meanings are ({explain['model']}); 1 is the same meaning, "
            "unrelated texts score near 0",
        ]
    alpha: float = explain["alpha"]
    low, high = explain["cosine_range"]
    cosine = "no vector" if explain["cosine"] is None else f"cosine {explain['cosine']:.4f}"
    bm25 = "no keyword match" if explain["bm25"] is None else f"BM25 {explain['bm25']:.4f}"
    return [
        f"score {score:.4f} = {alpha:g} x meaning {explain['cosine_norm']:.4f} + {1 - alpha:g} x keywords "
        f"{explain['bm25_norm']:.4f} = {explain['raw_score']:.4f} {_freshness(explain)}",
        f"hybrid: meaning is the {cosine} scaled over the candidates ({low:.4f} -> 0, {high:.4f} -> 1); "
        f"keywords is the {bm25} over the best one ({explain['bm25_max']:.4f}); 1 is the best of this query",
    ]


def _fields(explain: Explain, score: float) -> list[str]:
    terms = "; ".join(
        f"{term}: " + ", ".join(f"{where} {points:g}" for where, points in places.items() if points)
        for term, places in explain.get("terms", {}).items()
    )
    return [
        f"score {score:.4f} = (keyword {explain['keyword']:g} + type prior {explain['type_prior']:g} + usage "
        f"{explain['usage_boost']:.3f}) x recency {explain['recency_factor']:.3f}",
        "fields: points per query term found in the name, description or text (" + (terms or "no term") + "), "
        "a prior by type, a boost by use; recency falls from 1.5 (new) to 0.5 (stale)",
    ]


def _reached(explain: Explain, score: float) -> list[str]:
    return [
        f"score {score:.4f} = {explain['parent']}'s score {explain['parent_score']:.4f} x {explain['decay']:g}",
        f"linked: reached from {explain['parent']} through {explain['via']} ({explain['depth']} hop(s)); "
        "not a match itself",
    ]


def _window(explain: Explain, score: float) -> list[str]:
    return [
        f"score {score:.4f} = 1 x freshness (signal {explain['signal']:.3f})",
        f"window: recorded in {explain['window']!r}; the question names nothing else to search, so the "
        "freshest records of that time come first",
    ]


_ENGINES: dict[str, Callable[[Explain, float], list[str]]] = {
    "exact": _exact,
    "keyword": _keyword,
    "approximate": _semantic,
    "hybrid": _semantic,
    "fields": _fields,
    "traversal": _reached,
    "window": _window,
}
