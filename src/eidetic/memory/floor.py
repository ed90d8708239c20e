"""The relevance floor over one recall's primary hits: each hit's raw evidence (its cosine, its
BM25 over the query's idf mass) judged by ``ranking.relevance``, and the hits below the line
left out, or, with the floor off and a person reading (``judge_relevance``), only marked. The
idf, and the count of records that lowers a young store's floors, come from the keyword
statistics of the partitions the caller may read, summed over the recall's stores, so another
scope's private records never weigh in; the reference a young store's hit must stand out from,
from the cosines of the recall's candidates, pooled over the same union."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..ranking import relevance
from ..ranking.access import Access
from ..results import Hit
from ..stores.base import RecordStore

Evidence = dict[tuple[str, str], tuple[float | None, float | None]]  # (store, id) -> (cosine, bm25)
Words = Callable[[list[Hit]], dict[tuple[str, str], float]]  # hits -> (store, id) -> BM25 as keyword scores it


@dataclass
class Judged:
    """The hits that cleared the line, how many did not, and why some could not be judged."""

    kept: list[Hit]
    below: int = 0
    warnings: list[str] = field(default_factory=list)


def judge(
    hits: list[Hit],
    evidence: Evidence,
    line: float,
    terms: list[str],
    stores: list[RecordStore],
    access: Access,
    ranked: tuple[str, str | None],
    cosines: Sequence[float] = (),
    words_of: Words | None = None,
) -> Judged:
    """Keep the hits the floor lets through (``relevance.kept``: the best must reach ``line``,
    then each its share of it), each hit marked with its ``relevance`` and whether it is
    ``relevant``. ``ranked``: the mode as it ran and the embedder that ranked (None: keyword
    ranking); a model with no calibration leaves its hits unjudged, and says so. ``cosines``:
    the query's cosine with each candidate of the semantic pool (the store's reference).
    ``words_of``: the hits' BM25, for a ranking that saw none, asked only where a young store
    judges its hits by their words too (``relevance.YOUNG_WORD_FLOORS``)."""
    mode, model = ranked
    calibration = relevance.Calibration.of(mode, model)
    words = calibration.keyword is not None and any(bm25 for _, bm25 in evidence.values())
    records, mass = _statistics(terms if words else [], stores, access)
    calibration = calibration.at(records)
    if not words and calibration.keyword is not None and words_of is not None and terms and hits:
        found = words_of(hits)
        evidence = {key: (cosine, found.get(key, 0.0)) for key, (cosine, _) in evidence.items()}
        records, mass = _statistics(terms, stores, access)
        for hit in hits:
            if hit.explain is not None:
                hit.explain["bm25"] = found.get((hit.store, hit.record.id), 0.0)
    reference = relevance.reference(cosines) if calibration.standout is not None else None
    for hit in hits:
        cosine, bm25 = evidence.get((hit.store, hit.record.id), (None, None))
        hit.relevance = relevance.relevance(cosine, bm25, mass, calibration, model is not None, reference)
    flags = relevance.kept([hit.relevance for hit in hits], line, calibration.share, calibration.of_best)
    for hit, stays in zip(hits, flags):
        hit.relevant = stays if hit.relevance is not None else None
        if hit.explain is not None:
            hit.explain.update(explained(hit.relevance, line, mass, calibration, records, reference))
    judged = Judged([hit for hit, stays in zip(hits, flags) if stays], flags.count(False))
    if model is not None and calibration.semantic is None:
        judged.warnings.append(
            f"the relevance floor has no calibration for {model}: hits ranked by its meaning are not judged "
            "(benchmarks/relevance_floor.py calibrates a model)"
        )
    return judged


def _statistics(terms: list[str], stores: list[RecordStore], access: Access) -> tuple[int, float]:
    """How many records the caller may see, and the idf mass of ``terms`` over them."""
    records, holding = 0, dict.fromkeys(terms, 0)
    for store in stores:
        count, found = store.term_counts(terms, access)
        records += count
        for term, n in found.items():
            holding[term] = holding.get(term, 0) + n
    return records, relevance.query_idf(records, holding, terms)


def explained(
    value: float | None,
    line: float,
    mass: float,
    calibration: relevance.Calibration,
    records: int,
    reference: float | None = None,
) -> dict[str, object]:
    """What ``--explain`` adds with the floor on: the hit's relevance and what it was judged by
    (the floors as this store's size drew them; in a young store judged on standing out, the
    store's reference cosine and how far above it a hit must stand)."""
    judged: dict[str, object] = {
        "relevance": value,
        "relevance_floor": line,
        "query_idf": mass,
        "cosine_floor": calibration.semantic,
        "keyword_floor": calibration.keyword,
        "hit_share": calibration.share,
        "best_share": calibration.of_best,
        "store_records": records,
    }
    if reference is not None:
        judged |= {"cosine_reference": reference, "standout_floor": calibration.standout}
    return judged
