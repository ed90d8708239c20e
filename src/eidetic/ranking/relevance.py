"""The relevance floor: "nothing relevant" as an answer. Pure.

A ranking always has a best hit, however unrelated the query; hybrid's blend is normalised over
its candidates, so its best hit scores about 1 whatever was asked. The floor judges the primary
hits on raw evidence that means the same from one query to the next:

- meaning: the raw cosine of query and record (``approximate``, and hybrid's semantic half);
- words: BM25 per unit of the query's own idf mass, ``bm25 / sum(idf(t) for t in the query's
  terms)`` (``keyword``, and hybrid's keyword half). A query term no record holds has the largest
  idf, so a query whose rare words the store lacks scores low however well its common words match.

A hit's ``relevance`` is its evidence over the calibrated floor of its kind (hybrid: the larger
of the two, since either kind of evidence is enough), so 1.0 is the calibrated line on every mode
and a number sets another line on the same scale. The line answers two questions. Is anything
relevant: the best hit must reach it, else there are no hits at all. Which hits: each must reach
its mode's share of the line (``HIT_SHARES``), so an agent gets two relevant hits rather than
five with three unrelated. The share sits below 1 because within one store's topic, related and
unrelated hits carry similar evidence: a hit is dropped only when it is far below the line, which
keeps the recall of what matches. The floor judges the top k; it does not reach past it.
``exact`` needs no floor (any match is relevant); ``fields`` has its own (``min_score``).

Young stores. An unrelated query's best hit is the best of as many chances as the store has
records: in a store of twenty it sits lower than in one of five hundred, so a lower line rejects
unrelated queries as often there, and keeps more of what matches (a paraphrased question often
meets its answer at a cosine near 0.3). The floors above hold from ``YOUNG`` records up (the
stores they were calibrated on); a smaller store, counting the records the caller may see,
draws them lower by ``YOUNG_SLOPES[mode]`` per unit of ln(YOUNG / n) (``Calibration.at``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

# Chosen by benchmarks/relevance_floor.py on the tuning half of the public data (LoCoMo
# conversations conv-26, conv-30, conv-41 and SciFact's train claims) and checked on the other
# half (conv-42, conv-43, conv-44 and SciFact's test claims); both sets of figures are in
# docs/benchmarks.md ("The relevance floor"). Each mode has its own: hybrid takes either kind of
# evidence, so each of its floors can be stricter than keyword's or approximate's. Re-run that
# script after a change to ranking or to the embedded text: it prints the constants to put here.
KEYWORD_FLOORS = {"keyword": 0.55, "hybrid": 1.85}  # bm25 / the query's idf mass (index/text_index.py's BM25)
COSINE_FLOORS = {  # raw cosine, per embedding model: the scale of cosines is the model's own
    "sentence-transformers/all-MiniLM-L6-v2": {"approximate": 0.38, "hybrid": 0.35},
}
HIT_SHARES = {"keyword": 0.85, "approximate": 0.9, "hybrid": 0.5}  # of the line, for each hit
# Young stores (module docstring): YOUNG sits just below the smallest store the floors above were
# calibrated on (a conversation of 369 records), so those stores are judged as before. Each
# mode's slope was chosen by benchmarks/relevance_floor.py on seeded random 5-, 20- and 100-record
# slices of the tuning half: the largest slope that leaves unrelated queries empty, at each size
# and both ways, as often as the large stores do in their better direction. The held-out half's
# slices check it (docs/benchmarks.md, "Young stores").
YOUNG = 350
YOUNG_SLOPES = {"keyword": 0.0025, "approximate": 0.0725, "hybrid": 0.04}
AUTO = 1.0  # "auto": the calibrated line
SETTINGS = ("auto", "off")


def line_of(setting: Any) -> float | None:
    """The line a ``relevance_floor`` setting draws on the relevance scale: ``"auto"`` 1.0,
    ``"off"`` None, a number >= 0 itself. ``ValueError`` for anything else."""
    if isinstance(setting, str) and setting.strip().lower() in SETTINGS:
        return AUTO if setting.strip().lower() == "auto" else None
    if isinstance(setting, bool):
        raise ValueError(setting)
    number = float(setting)  # a number, or text that is one (from a command line)
    if not math.isfinite(number) or number < 0:
        raise ValueError(setting)
    return number


def idf(records: int, holding: int) -> float:
    """BM25's idf: never negative, largest for a term no record holds."""
    return math.log(1 + (records - holding + 0.5) / (holding + 0.5))


def young_scale(slope: float, records: int) -> float:
    """How much lower a store of ``records`` records draws its floors: 1 from ``YOUNG`` up."""
    return 1.0 - slope * math.log(YOUNG / max(records, 1)) if records < YOUNG else 1.0


def query_idf(records: int, holding: dict[str, int], terms: Iterable[str]) -> float:
    """The idf mass of a query's terms over ``records`` records, ``holding[t]`` of which hold t."""
    return sum(idf(records, holding.get(term, 0)) for term in terms) if records > 0 else 0.0


@dataclass(frozen=True)
class Calibration:
    """The floors one recall judges by: a cosine floor (None: meaning is not judged, or the model
    has no calibration), a keyword floor (None: words are not judged), the share of the line
    each hit must reach once the best has reached it, and how much lower a young store draws
    the floors (``young_scale``'s slope)."""

    semantic: float | None
    keyword: float | None
    share: float
    young: float = 0.0

    @classmethod
    def of(cls, mode: str, model: str | None) -> Calibration:
        """The floors of a ranking: ``mode`` as it ran (a semantic mode with no embedder ranks as
        keyword), ``model`` the embedder that ranked (None: none did)."""
        if model is None:
            return cls(None, KEYWORD_FLOORS["keyword"], HIT_SHARES["keyword"], YOUNG_SLOPES["keyword"])
        floors = COSINE_FLOORS.get(model, {}).get(mode), KEYWORD_FLOORS.get(mode)
        return cls(*floors, HIT_SHARES[mode], YOUNG_SLOPES[mode])

    def at(self, records: int) -> Calibration:
        """The floors for a store of ``records`` records the caller may see. A young store lowers
        the line its best hit must reach, not the one each other hit must reach: the best of
        fewer chances sits lower, but one hit's evidence does not depend on the store's size, so
        the share grows (past 1 if need be) to keep each hit's line where it was."""
        scale = young_scale(self.young, records)
        if scale == 1.0:
            return self
        semantic = None if self.semantic is None else self.semantic * scale
        keyword = None if self.keyword is None else self.keyword * scale
        return replace(self, semantic=semantic, keyword=keyword, share=self.share / scale)


def relevance(
    cosine: float | None, bm25: float | None, idf_mass: float, calibration: Calibration, semantic: bool
) -> float | None:
    """A hit's relevance (1.0: on the calibrated line): the larger of its evidence over each
    floor, from its raw cosine and BM25 (None: the ranking did not see that signal for it).
    ``semantic``: a model ranked; None when its cosines have no calibration (not judged)."""
    if semantic and calibration.semantic is None:
        return None
    parts = []
    if calibration.keyword is not None:
        parts.append((bm25 or 0.0) / idf_mass / calibration.keyword if idf_mass > 0 else 0.0)
    if semantic and calibration.semantic is not None:
        parts.append((cosine if cosine is not None else 0.0) / calibration.semantic)
    return max(parts, default=0.0)


def kept(values: Sequence[float | None], line: float, share: float) -> list[bool]:
    """Which hits stay: none unless the best reaches ``line``, then the best and each that
    reaches ``share`` of it (a young store's share may pass 1: ``Calibration.at``). A hit that
    could not be judged (None) stays, and lets the others be judged alone."""
    best = max((value for value in values if value is not None), default=None)
    relevant = best is not None and best >= line
    return [value is None or (relevant and (value >= share * line or value == best)) for value in values]
