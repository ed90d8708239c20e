"""The postgres backend's keyword search: (doc, BM25) best first, exactly as exhaustive BM25
ranks them (ties aside), without scoring every record that shares a term: the threshold
algorithm (Fagin; WAND-like) over impact-ordered postings (``postings.py``).

Each round reads the top M postings of every query term by impact, with their term frequencies,
from the impact index alone (packed on the server), bounds every record seen from them
(``bm25_bounds``, NumPy), admits the candidates with the best upper bounds (scope, lifecycle,
filters: one read of ``eidetic_docs``) and scores them exactly from the frequencies read, looking
up the postings the top M left out only for records that could still reach the page. It stops
once the (offset+limit)-th exact score reaches the bound on records outside every term's top M,
the best upper bound of the candidates left unscored and the best of those left inexact.
Otherwise it scores x4 candidates or, when records outside the top M could still rank, reads x4
postings, keeping what it has (all postings and all candidates, at worst: exhaustive).

The bounds: a record's true score for term t is at most ``cap(t) * impact``, where ``cap(t)``
is the largest over fields of ``idf(t, field) * max(1, average / reference)``. An impact is the
sum of weighted term-frequency parts against the partition's reference averages
(``KeywordIndex._anchor``), and a tf part ``tf(k1+1)/(tf + k1(1-b+b*len/avg))`` grows by at most
``avg/ref`` when the reference ``ref`` gives way to a larger current average ``avg`` (and shrinks
when it is smaller), so the bound holds however the averages have drifted since the write. A
record outside t's top M has an impact at most that of t's (M+1)-th posting; so a record seen in
no top M scores at most the sum of those over terms (per partition), and a candidate at most
``cap * impact`` for the terms it was seen with plus that for the others.

BM25 here: k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)), under the statistics of the
union of the partitions the caller may read over every store of the recall (``ranking.bm25``;
by default this store's partitions in reach), so another scope's private records never shift a
caller's scores, and neither does where a record lives. The bound above holds for the union's
averages as for a partition's own: they are just another current average.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...docsql.admission import Admission
from ...ranking.access import Access
from ...ranking.bm25 import FieldCounts, KeywordStats
from ...ranking.filters import Filters
from .posting_cache import PostingCache
from .postings import FIELD_NAMES, K1, WEIGHTS, B

if TYPE_CHECKING:
    from .connection import Session
    from .scope import Partitions

# Postings read per query term in the first round (x4 per round while the bound on records left
# out is above the k-th score), and candidates scored first: 20 + 2 per wanted result (x4 while
# an unscored candidate's upper bound is above the k-th score). Through the API at 100k records
# (top 10: pages of 50 for keyword, 100 for hybrid; 60 queries, one core busy): depth 8000 gave
# keyword/hybrid p50 28/54 ms, 16000 24/46 ms, 32000 31/52 ms (reading and packing postings
# costs more than the tighter bounds save); 1, 2 or 4 scored per wanted barely matter.
KEYWORD_DEPTH = 16000
KEYWORD_SCORED = 20
KEYWORD_PER_WANTED = 2
# Impacts are stored as real (float4): a bound scaled by this covers their rounding.
FLOAT4_SLACK = 1 + 1e-6

Ranked = list[tuple[int, float]]  # (doc, BM25), best first


@dataclass
class Query:
    """The query terms as the partitions in reach hold them: term i is ``terms[i]`` in
    partition ``parts[i]`` (a term shared by two partitions counts twice)."""

    parts: list[int]
    terms: list[str]
    weights: list[tuple[int, list[float]]]  # (partition, per field: field weight x (k1 + 1) x idf)
    caps: list[float]  # turns term i's impact into a bound on its BM25 part (see the module docstring)
    averages: dict[int, Sequence[float]]  # each partition's current field averages
    keys: list[tuple[Any, ...]]  # what term i's postings depend on (``posting_cache``), one snapshot

    @classmethod
    def read(cls, conn: Any, parts: list[int], terms: list[str], union: KeywordStats) -> Query | None:
        """The terms' postings in ``parts``, weighed by the ``union``'s statistics; None when no
        record there has any of them."""
        stats = conn.execute(
            "SELECT p.part, p.docs, "
            + ", ".join(f"p.len_{f}" for f in FIELD_NAMES)
            + ", "
            + ", ".join(f"p.ref_{f}" for f in FIELD_NAMES)
            + ", t.term, t.df, "
            + ", ".join(f"t.df_{f}" for f in FIELD_NAMES)
            + ", (SELECT coalesce(max(doc), 0) FROM eidetic_docs)"
            + " FROM eidetic_partitions p JOIN eidetic_terms t ON t.part = p.part "
            "WHERE p.part = ANY(%s) AND t.term = ANY(%s) AND t.df > 0",
            (parts, list(terms)),
        ).fetchall()
        if not stats:
            return None
        query = cls([], [], [], [], {}, [])
        averages = [max(average, 1e-9) for average in union.averages()]
        for part, n, *rest in stats:
            refs, term, dfs = rest[4:8], rest[8], rest[10:-1]
            query.keys.append((part, n, *rest))
            query.averages[part] = averages
            # a field where no record of this partition holds the term adds nothing here
            idfs = [union_idf if df else 0.0 for union_idf, df in zip(union.idfs(term), dfs)]
            cap = max(
                (
                    idf * (max(1.0, avg / ref) if ref else math.inf)
                    for idf, avg, ref in zip(idfs, averages, refs)
                    if idf
                ),
                default=0.0,
            )
            query.parts.append(part)
            query.terms.append(term)
            query.weights.append((part, [WEIGHTS[f] * (K1 + 1) * idf for f, idf in zip(FIELD_NAMES, idfs)]))
            query.caps.append(cap * FLOAT4_SLACK)
        return query


class KeywordSearch:
    """Runs keyword searches, and serves the pages of a query from its last proven ranking."""

    def __init__(self, session: Session, partitions: Partitions) -> None:
        self._session = session
        self._partitions = partitions
        self._postings = PostingCache()
        # The last keyword query's ranking, as far as it is proven exact: a recall reads its
        # pages from it (the freshness blend may ask for a second page of the same query).
        self._proven: tuple[Any, Ranked] | None = None

    def search(
        self,
        terms: list[str],
        access: Access,
        filters: Filters,
        limit: int,
        offset: int,
        stats: KeywordStats | None = None,
    ) -> Ranked:
        """(doc, BM25 under ``stats``, by default this store's) of ranks ``offset`` to
        ``offset + limit`` among the records ``access`` and ``filters`` admit. The schema
        exists by the time this runs."""
        conn = self._session.conn
        union = stats if stats is not None else self.stats(terms, access)
        query = Query.read(conn, self._partitions.in_reach(access), terms, union)
        if query is None:
            return []
        want = offset + limit
        held = tuple(sorted(union.holding.items()))
        key = (tuple(terms), access, filters, tuple(query.keys), union.records, union.lengths, held)
        if self._proven is not None and self._proven[0] == key and len(self._proven[1]) >= want:
            return self._proven[1][offset:want]
        admission = Admission.of(self._session.dialect, access, filters)
        rows, bound = _Threshold(conn, query, admission, want, self._postings).rank()
        # every row scoring at least every bound is in its final place
        self._proven = (key, rows if bound == 0 else [r for r in rows if r[1] >= bound])
        return rows[offset:want]

    def stats(self, terms: list[str], access: Access) -> KeywordStats:
        """This store's share of the BM25 statistics of the partitions ``access`` may read."""
        conn = self._session.conn
        parts = self._partitions.in_reach(access)
        row = conn.execute(
            "SELECT coalesce(sum(docs), 0), "
            + ", ".join(f"coalesce(sum(len_{f}), 0)" for f in FIELD_NAMES)
            + " FROM eidetic_partitions WHERE part = ANY(%s)",
            (parts,),
        ).fetchone()
        holding = conn.execute(
            "SELECT term, "
            + ", ".join(f"sum(df_{f})" for f in FIELD_NAMES)
            + " FROM eidetic_terms WHERE part = ANY(%s) AND term = ANY(%s) GROUP BY term",
            (parts, list(terms)),
        ).fetchall()
        return KeywordStats(
            int(row[0]),
            tuple(int(length) for length in row[1:]),
            {term: tuple(int(df) for df in dfs) for term, *dfs in holding},
        )

    def counts_of(self, docs: list[int], terms: list[str], access: Access) -> dict[int, FieldCounts]:
        """Each of ``docs`` in the partitions ``access`` may read: its per-field counts of
        ``terms`` and its field lengths, as its keyword entry holds them."""
        conn = self._session.conn
        found: dict[int, FieldCounts] = {
            doc: ([{} for _ in FIELD_NAMES], list(lengths))
            for doc, *lengths in conn.execute(
                "SELECT doc, " + ", ".join(f"tl_{f}" for f in FIELD_NAMES) + " FROM eidetic_docs "
                "WHERE doc = ANY(%s) AND part = ANY(%s) AND indexed",
                (docs, self._partitions.in_reach(access)),
            )
        }
        for doc, term, *tfs in conn.execute(
            "SELECT doc, term, " + ", ".join(f"tf_{f}" for f in FIELD_NAMES) + " FROM eidetic_postings "
            "WHERE doc = ANY(%s) AND term = ANY(%s)",
            (list(found), list(terms)),
        ):
            for field, tf in zip(found[doc][0], tfs):
                if tf:
                    field[term] = int(tf)
        return found

    def term_counts(self, terms: list[str], access: Access) -> tuple[int, dict[str, int]]:
        """Records in the partitions ``access`` may read, and how many of them hold each term."""
        conn = self._session.conn
        parts = self._partitions.in_reach(access)
        row = conn.execute("SELECT coalesce(sum(docs), 0) FROM eidetic_partitions WHERE part = ANY(%s)", (parts,))
        records = int(row.fetchone()[0])
        holding = conn.execute(
            "SELECT term, sum(df) FROM eidetic_terms WHERE part = ANY(%s) AND term = ANY(%s) GROUP BY term",
            (parts, list(terms)),
        ).fetchall()
        return records, dict.fromkeys(terms, 0) | {term: int(n) for term, n in holding}


class _Threshold:
    """One query's threshold rounds, keeping what each round learnt: which candidates are
    admitted (with their field lengths) and the term frequencies looked up."""

    def __init__(self, conn: Any, query: Query, admission: Admission, want: int, kept: PostingCache) -> None:
        self._conn = conn
        self._query = query
        self._kept = kept
        self._admission = admission
        self._want = want
        self._admitted: dict[int, tuple[int, tuple[int, ...]] | None] = {}  # doc -> (part, field lengths); None: not
        self._looked_up: dict[int, dict[int, tuple[int, ...]]] = {}  # term -> doc -> tfs, for terms cut short

    def rank(self) -> tuple[Ranked, float]:
        """Rounds until the top ``want`` is proven: the candidates scored exactly, best first
        (ties by doc), and the bound no record left out can beat (0: none was left out)."""
        from . import bm25_bounds as bounds  # NumPy: loaded only once a keyword search runs

        depth, scored = KEYWORD_DEPTH, KEYWORD_SCORED + KEYWORD_PER_WANTED * self._want
        while True:
            lists = self._lists(depth)
            seen, upper, unseen, rest = bounds.upper_bounds(lists, self._query.caps, self._query.parts, depth)
            while True:
                head, unscored = bounds.best(seen, upper, scored)
                rows, inexact = self._score(head, lists, rest, depth)
                kth = rows[self._want - 1][1] if len(rows) >= self._want else -math.inf
                bound = max(unseen, unscored, inexact)
                if kth >= bound or bound == 0:  # 0: every posting and candidate scored
                    return rows, bound
                if unseen > max(kth, 0):
                    break  # records outside every term's top postings might still rank: look deeper
                scored *= 4
            depth *= 4

    def _score(self, head: list[int], lists: list[Any], rest: list[float], depth: int) -> tuple[Ranked, float]:
        """The candidates ``head`` that are admitted, scored from the postings read (and looked
        up, for those that might still reach the page): those whose score is exact, best first
        (ties by doc), and the best upper bound of the others (0 if none)."""
        import numpy as np

        from . import bm25_bounds as bounds

        fresh = [doc for doc in head if doc not in self._admitted]
        if fresh:
            self._admitted.update(self._admit(fresh))
        admitted = [(doc, found) for doc in head if (found := self._admitted[doc]) is not None]
        docs = np.array([doc for doc, _ in admitted], dtype=np.int64)
        homes = np.array([part for _, (part, _) in admitted], dtype=np.int64)  # their partitions
        lengths = np.array([ls for _, (_, ls) in admitted], dtype=np.float64).reshape(len(admitted), 4)
        known = (
            docs,
            homes,
            lengths,
            lists,
            rest,
            depth,
            self._looked_up,
            self._query.weights,
            self._query.averages,
            K1,
            B,
        )
        low, high, opened = bounds.intervals(*known)
        want = self._want
        kth_low = float(np.partition(low, len(low) - want)[len(low) - want]) if len(low) >= want else -math.inf
        pending = opened.any(axis=1) & (high >= kth_low)
        if pending.any():  # only records that might still reach the page need their exact score
            self._look_up(docs[pending].tolist(), np.flatnonzero(opened[pending].any(axis=0)).tolist())
            low, high, opened = bounds.intervals(*known)  # looked_up has grown
        inexact = opened.any(axis=1)
        rows = sorted(zip(docs[~inexact].tolist(), low[~inexact].tolist()), key=lambda r: (-r[1], r[0]))
        return rows, float(high[inexact].max()) if inexact.any() else 0.0

    def _lists(self, depth: int) -> list[Any]:
        """Each query term's top ``depth + 1`` postings (``bm25_bounds.unpack``): those this
        process kept (``posting_cache``), the others read in one statement and kept."""
        from . import bm25_bounds as bounds

        query = self._query
        keys = [(key, depth) for key in query.keys]
        lists = [self._kept.get(key) for key in keys]
        missing = [i for i, found in enumerate(lists) if found is None]
        if missing:
            read = self._top_postings([query.parts[i] for i in missing], [query.terms[i] for i in missing], depth)
            for i, packed in zip(missing, read):
                lists[i] = bounds.unpack(packed)
                self._kept.put(keys[i], lists[i])
        return lists

    def _top_postings(self, parts: list[int], terms: list[str], depth: int) -> list[bytes | None]:
        """These terms' top ``depth + 1`` postings by impact, read from the impact index
        alone and packed on the server (``bm25_bounds.POSTING``), so that tens of thousands of
        postings cross as one buffer per term rather than as Python rows."""
        rows = self._conn.execute(
            """SELECT c.packed FROM unnest(%s::int[], %s::text[]) WITH ORDINALITY AS q(part, term, i)
               CROSS JOIN LATERAL (
                   SELECT string_agg(int8send(t.doc) || float4send(t.impact) || int2send(t.tf_name)
                                     || int2send(t.tf_description) || int2send(t.tf_text)
                                     || int2send(t.tf_context), ''::bytea) AS packed
                   FROM (SELECT p.doc, p.impact, p.tf_name, p.tf_description, p.tf_text, p.tf_context
                         FROM eidetic_postings p WHERE p.part = q.part AND p.term = q.term
                         ORDER BY p.impact DESC LIMIT %s) t) c
               ORDER BY q.i""",
            (parts, terms, depth + 1),
            binary=True,
        ).fetchall()
        return [packed for (packed,) in rows]

    def _admit(self, docs: list[int]) -> dict[int, tuple[int, tuple[int, ...]] | None]:
        """(partition, field lengths) of each of ``docs`` that scope, lifecycle and filters
        admit; None for the others. Metadata is read (and parsed) only for metadata facets."""
        admission = self._admission
        rows = self._conn.execute(
            "SELECT d.doc, d.part, "
            + ", ".join(f"d.tl_{f}" for f in FIELD_NAMES)
            + f"{admission.metadata} FROM eidetic_docs d WHERE d.doc = ANY(%s) AND {admission.sql}",
            [docs, *admission.params],
        )
        found = {doc: (part, tuple(lengths)) for doc, part, *lengths in admission.kept(rows)}
        return {doc: found.get(doc) for doc in docs}

    def _look_up(self, docs: list[int], terms: list[int]) -> None:
        """Fill ``looked_up[term][doc]`` with the term frequencies of ``docs`` for the query
        terms ``terms`` (indexes into the query), zeros where a record lacks the term: one index
        descent per record, as a record's postings are adjacent in the primary key."""
        query = self._query
        held = {
            (doc, part, term): tuple(tfs)
            for doc, part, term, *tfs in self._conn.execute(
                "SELECT p.doc, p.part, p.term, "
                + ", ".join(f"p.tf_{f}" for f in FIELD_NAMES)
                + " FROM eidetic_postings p WHERE p.doc = ANY(%s) AND p.term = ANY(%s)",
                (sorted(docs), sorted({query.terms[i] for i in terms})),
            )
        }
        for i in terms:
            answers = self._looked_up.setdefault(i, {})
            for doc in docs:
                answers[doc] = held.get((doc, query.parts[i], query.terms[i]), (0, 0, 0, 0))
