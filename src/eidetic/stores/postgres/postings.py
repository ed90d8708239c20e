"""The postgres backend's keyword index, the write side: records analysed into per-field term
counts, postings with their impacts, document frequencies and partition totals.

Keyword ranking is BM25 over the same analysed terms and field weights as the embedded backends
(``index.analyzer``, ``ranking.bm25.FIELDS``). A posting's *impact* is its weighted BM25
term-frequency parts against its partition's reference field averages: the order in which
``keyword.py`` reads postings, and the bound it derives from them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...index.analyzer import analyze
from ...ranking.bm25 import FIELD_NAMES, FIELDS, K1, B

WEIGHTS = dict(FIELDS)  # name, description, text, context
MAX_TF = 32767  # term frequencies are stored as smallint; BM25 saturates long before this
# Impacts are computed against a partition's *reference* field averages, re-anchored (the
# partition's impacts recomputed) once a current average leaves [ref / REANCHOR, ref * REANCHOR]:
# keyword() loosens its bound by up to this factor, and a partition of similar records settles
# within a few hundred writes, after which re-anchoring is rare.
REANCHOR = 1.1

# A posting's impact in SQL (p: postings, d: docs, r: partitions), as ``impact`` computes it.
IMPACT_SQL = " + ".join(
    f"CASE WHEN p.tf_{f} = 0 THEN 0 ELSE {WEIGHTS[f]} * p.tf_{f} * {K1 + 1} / "
    f"(p.tf_{f} + {K1} * (1 - {B} + {B} * d.tl_{f} / r.ref_{f})) END"
    for f in FIELD_NAMES
)


@dataclass
class Analysed:
    """One record's keyword entry: per-field term counts and token lengths."""

    doc: int
    part: int
    fields: tuple[Counter[str], Counter[str], Counter[str], Counter[str]]  # name, description, text, context

    @property
    def lengths(self) -> tuple[int, int, int, int]:
        return tuple(sum(c.values()) for c in self.fields)  # type: ignore[return-value]


def analyse(doc: int, part: int, name: str | None, description: str | None, text: str, member: bool) -> Analysed:
    """Mirror ``TextIndex.add``: a record's own words, its text in ``context``, and in ``text``
    too for a thread member (recall adds its window's words to its context at query time)."""
    words = Counter(analyze(text))
    return Analysed(
        doc,
        part,
        (
            Counter(analyze(name or "")),
            Counter(analyze(description or "")),
            Counter(words) if member else Counter(),
            words,
        ),
    )


def impact(tfs: Sequence[int], lengths: Sequence[int], refs: Sequence[float]) -> float:
    """A posting's impact: its weighted BM25 term-frequency parts against the partition's
    reference averages (``IMPACT_SQL`` in SQL). A field with tokens here has a reference > 0:
    ``KeywordIndex._anchor`` sets one before any such posting is written."""
    return sum(
        WEIGHTS[f] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / ref))
        for f, tf, length, ref in zip(FIELD_NAMES, tfs, lengths, refs)
        if tf
    )


class Connected(Protocol):
    """What the keyword index needs of a session: its connection."""

    @property
    def conn(self) -> Any: ...


class KeywordIndex:
    """Adds and removes records' keyword entries, keeping document frequencies, partition
    totals and reference averages in step. Called inside the writer's transaction."""

    def __init__(self, session: Connected) -> None:
        self._session = session

    def unindex(self, docs: Sequence[int]) -> None:
        """Take docs out of the postings and out of their partitions' statistics."""
        if not docs:
            return
        conn = self._session.conn
        conn.execute(
            """UPDATE eidetic_partitions p SET docs = p.docs - s.n, len_name = p.len_name - s.ln,
                   len_description = p.len_description - s.ld, len_text = p.len_text - s.lt,
                   len_context = p.len_context - s.lc
               FROM (SELECT part, count(*) AS n, sum(tl_name) AS ln, sum(tl_description) AS ld,
                            sum(tl_text) AS lt, sum(tl_context) AS lc
                     FROM eidetic_docs WHERE doc = ANY(%s) AND indexed GROUP BY part) s
               WHERE p.part = s.part""",
            (list(docs),),
        )
        conn.execute(
            """WITH gone AS (DELETE FROM eidetic_postings WHERE doc = ANY(%s)
                             RETURNING part, term, tf_name, tf_description, tf_text, tf_context),
                    agg AS (SELECT part, term, count(*) AS df, count(*) FILTER (WHERE tf_name > 0) AS dn,
                                   count(*) FILTER (WHERE tf_description > 0) AS dd,
                                   count(*) FILTER (WHERE tf_text > 0) AS dt,
                                   count(*) FILTER (WHERE tf_context > 0) AS dc
                            FROM gone GROUP BY part, term)
               UPDATE eidetic_terms t SET df = t.df - agg.df, df_name = t.df_name - agg.dn,
                   df_description = t.df_description - agg.dd, df_text = t.df_text - agg.dt,
                   df_context = t.df_context - agg.dc
               FROM agg WHERE t.part = agg.part AND t.term = agg.term""",
            (list(docs),),
        )
        conn.execute(
            "UPDATE eidetic_docs SET indexed = false, tl_name = 0, tl_description = 0, tl_text = 0, "
            "tl_context = 0 WHERE doc = ANY(%s) AND indexed",
            (list(docs),),
        )

    def index(self, entries: list[Analysed], lengths_stored: bool) -> None:
        """Add keyword entries: postings with their impact, document frequencies and partition
        totals (every record counts in N, as every document does in tantivy, even one whose
        text is all stop words). ``lengths_stored``: the rows already say so (fresh inserts)."""
        if not entries:
            return
        parts = self._add_totals(entries)
        refs = self._anchor(parts)
        self._add_frequencies(self._copy_postings(entries, refs))
        if not lengths_stored:
            self._store_lengths(entries)

    def _add_totals(self, entries: list[Analysed]) -> list[int]:
        """Count the entries and their field lengths into their partitions; returns those."""
        totals: dict[int, list[int]] = {}
        for e in entries:
            row = totals.setdefault(e.part, [0, 0, 0, 0, 0])
            row[0] += 1
            for i, length in enumerate(e.lengths):
                row[i + 1] += length
        parts = sorted(totals)
        self._session.conn.execute(
            """UPDATE eidetic_partitions p SET docs = p.docs + t.n, len_name = p.len_name + t.ln,
                   len_description = p.len_description + t.ld, len_text = p.len_text + t.lt,
                   len_context = p.len_context + t.lc
               FROM unnest(%s::int[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[])
                    AS t(part, n, ln, ld, lt, lc) WHERE p.part = t.part""",
            [parts, *([totals[p][i] for p in parts] for i in range(5))],
        )
        return parts

    def _copy_postings(self, entries: list[Analysed], refs: dict[int, list[float]]) -> dict[tuple[int, str], list[int]]:
        """Write the entries' postings (one COPY); returns the document frequencies they add
        per (partition, term): overall, then per field."""
        dfs: dict[tuple[int, str], list[int]] = {}
        with (
            self._session.conn.cursor() as cur,
            cur.copy(
                "COPY eidetic_postings(doc, term, part, tf_name, tf_description, tf_text, tf_context, impact) "
                "FROM STDIN"
            ) as copy,
        ):
            for e in entries:
                lengths, ref = e.lengths, refs[e.part]
                for term in set().union(*e.fields):
                    tfs = [min(field[term], MAX_TF) for field in e.fields]
                    copy.write_row((e.doc, term, e.part, *tfs, impact(tfs, lengths, ref)))
                    df = dfs.setdefault((e.part, term), [0, 0, 0, 0, 0])
                    df[0] += 1
                    for i, tf in enumerate(tfs):
                        df[i + 1] += tf > 0
        return dfs

    def _add_frequencies(self, dfs: dict[tuple[int, str], list[int]]) -> None:
        keys = sorted(dfs)
        self._session.conn.execute(
            """INSERT INTO eidetic_terms(part, term, df, df_name, df_description, df_text, df_context)
               SELECT * FROM unnest(%s::int[], %s::text[], %s::int[], %s::int[], %s::int[], %s::int[], %s::int[])
               ON CONFLICT (part, term) DO UPDATE SET df = eidetic_terms.df + excluded.df,
                   df_name = eidetic_terms.df_name + excluded.df_name,
                   df_description = eidetic_terms.df_description + excluded.df_description,
                   df_text = eidetic_terms.df_text + excluded.df_text,
                   df_context = eidetic_terms.df_context + excluded.df_context""",
            [[p for p, _ in keys], [t for _, t in keys], *([dfs[k][i] for k in keys] for i in range(5))],
        )

    def _store_lengths(self, entries: list[Analysed]) -> None:
        """Mark the rows indexed, with the field lengths their postings were written against."""
        self._session.conn.execute(
            """UPDATE eidetic_docs d SET indexed = true, tl_name = t.ln, tl_description = t.ld,
                   tl_text = t.lt, tl_context = t.lc
               FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[], %s::int[]) AS t(doc, ln, ld, lt, lc)
               WHERE d.doc = t.doc""",
            [[e.doc for e in entries], *([e.lengths[i] for e in entries] for i in range(4))],
        )

    def _anchor(self, parts: list[int]) -> dict[int, list[float]]:
        """Each partition's reference averages, re-anchored first where a field's current average
        has left the ``REANCHOR`` band (or has its first tokens): the reference becomes the
        average, and the impacts of postings with that field are recomputed, so impacts stay
        close to the true term-frequency parts and keyword()'s bound stays tight."""
        conn = self._session.conn
        refs: dict[int, list[float]] = {}
        for part, docs, *rest in conn.execute(
            "SELECT part, docs, "
            + ", ".join(f"len_{f}" for f in FIELD_NAMES)
            + ", "
            + ", ".join(f"ref_{f}" for f in FIELD_NAMES)
            + " FROM eidetic_partitions WHERE part = ANY(%s)",
            (parts,),
        ):
            averages, ref = [total / max(docs, 1) for total in rest[:4]], list(rest[4:])
            drifted = [
                i
                for i, (avg, old) in enumerate(zip(averages, ref))
                if avg > 0 and not old / REANCHOR <= avg <= old * REANCHOR
            ]
            for i in drifted:
                ref[i] = averages[i]
            if drifted:
                conn.execute(
                    "UPDATE eidetic_partitions SET "
                    + ", ".join(f"ref_{FIELD_NAMES[i]} = %s" for i in drifted)
                    + " WHERE part = %s",
                    [*(ref[i] for i in drifted), part],
                )
                conn.execute(
                    f"UPDATE eidetic_postings p SET impact = {IMPACT_SQL} FROM eidetic_docs d, eidetic_partitions r "
                    "WHERE p.part = %s AND d.doc = p.doc AND r.part = p.part AND ("
                    + " OR ".join(f"p.tf_{FIELD_NAMES[i]} > 0" for i in drifted)
                    + ")",
                    (part,),
                )
            refs[part] = ref
        return refs
