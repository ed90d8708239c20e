"""BM25 under the statistics of everything a caller may see (pure: no I/O).

A keyword score must not depend on where a record lives: spreading records over stores, or
moving one between the public partition and the caller's private one, changes no score. So the
statistics BM25 reads (N, each term's document frequency per field, each field's average
length) are those of the union of the partitions the caller may read over every store of the
recall: each store reports its share (:class:`KeywordStats`), ``Memory`` sums them, and every
store scores under the sum. A record's own term frequencies and field lengths are its own.

BM25 as everywhere in eidetic: k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)), per
field and weighted by ``FIELDS``; a field's length is its
exact number of terms (tantivy's own BM25 rounds lengths to one-byte norms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

K1, B = 1.2, 0.75
# Field weights, chosen on the public data (``benchmarks/tune.py``, table in docs/benchmarks.md).
# ``context`` holds a record's text, and for a thread member its neighbours' text too (a chat
# turn is found by the words around it: LoCoMo hybrid recall@10 0.66 -> 0.73); ``text`` holds a
# thread member's own text once more, so its own words weigh more than its neighbours'. A record
# outside a thread is indexed once, in ``context`` (ingest cost), which scores exactly as before.
# Titles weighted as much as the body over-ranked title matches on SciFact.
FIELDS = (("name", 1.0), ("description", 1.0), ("text", 1.0), ("context", 2.0))
FIELD_NAMES = tuple(name for name, _ in FIELDS)

Counts = Sequence[Mapping[str, int]]  # a record's term counts, one mapping per field
FieldCounts = tuple[list[dict[str, int]], list[int]]  # a record's term counts and field lengths


@dataclass(frozen=True)
class KeywordStats:
    """BM25 statistics of some records: how many, each field's total length in terms, and per
    query term how many records hold it in each field. Sums are exact (integers), so any
    grouping of the same records gives the same statistics, and the same scores."""

    records: int = 0
    lengths: tuple[int, ...] = (0, 0, 0, 0)
    holding: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def __add__(self, other: KeywordStats) -> KeywordStats:
        terms = dict.fromkeys([*self.holding, *other.holding])
        zero = (0,) * len(FIELD_NAMES)
        return KeywordStats(
            self.records + other.records,
            tuple(a + b for a, b in zip(self.lengths, other.lengths)),
            {
                term: tuple(a + b for a, b in zip(self.holding.get(term, zero), other.holding.get(term, zero)))
                for term in terms
            },
        )

    def averages(self) -> tuple[float, ...]:
        """Each field's average length (0 for a field no record has words in)."""
        return tuple(length / self.records if self.records else 0.0 for length in self.lengths)

    def idfs(self, term: str) -> tuple[float, ...]:
        """The term's idf in each field (0 where no record holds it)."""
        return tuple(idf(self.records, df) for df in self.holding.get(term, (0,) * len(FIELD_NAMES)))

    def score(self, terms: Sequence[str], counts: Counts) -> float:
        """BM25 of a record with these per-field term ``counts`` (its lengths are their sums)."""
        return Scorer(self, terms).score(counts, [sum(found.values()) for found in counts])


class Scorer:
    """BM25 of one query's ``terms`` under ``stats``, with what depends on the query alone
    worked out once (a recall scores hundreds of candidates)."""

    def __init__(self, stats: KeywordStats, terms: Sequence[str]) -> None:
        self.terms = list(terms)
        # per term and field: weight x idf x (k1 + 1), 0 where no record holds it
        weights = [weight for _, weight in FIELDS]
        self._weights = [[w * i * (K1 + 1) for w, i in zip(weights, stats.idfs(term))] for term in terms]
        self._slopes = [K1 * B / average if average else 0.0 for average in stats.averages()]

    def score(self, counts: Counts, lengths: Sequence[int]) -> float:
        """BM25 of a record with these per-field counts of the query's terms and field lengths."""
        norms = [K1 * (1 - B) + slope * length for slope, length in zip(self._slopes, lengths)]
        total = 0.0
        for term, weights in zip(self.terms, self._weights):
            for weight, found, norm in zip(weights, counts, norms):
                tf = found.get(term, 0)
                if tf and weight:
                    total += weight * tf / (tf + norm)
        return total


def idf(records: int, df: int) -> float:
    return math.log(1 + (records - df + 0.5) / (df + 0.5)) if df else 0.0


def growth(union: KeywordStats, local: KeywordStats) -> float:
    """How much larger than its local score a record's union score can be, when the local
    score is BM25 with the union's idf but the local averages (as the embedded backends read
    it): a term-frequency part grows by at most ``union average / local average`` when the
    average it is normalised by grows (and shrinks when it falls)."""
    return max(
        [1.0, *(u / l for u, l in zip(union.averages(), local.averages()) if l > 0)],
    )
