"""Exact (substring) search on the postgres backend: shortest text first, as in every backend,
through one of two routes.

- The *walk* reads the admitted texts by length (index ``eidetic_docs_len``) and checks each,
  stopping at the first matches it needs: fast when matches are common (``the``), slow when
  they are rare (a phrase found in one long record walks nearly every row).
- The *trigram filter* asks the GIN index for the rows holding the query's rarest trigrams
  (``trigrams``), checks only those and sorts the matches by length: fast when those rows are
  few, slow when they are many, as each is read and checked.

Which is cheaper depends on how common the query's trigrams are, which the server's own
statistics of the column say (``pg_stats``, kept by ANALYZE; read at most once a minute): the
share of rows holding each of the most common trigrams (down to ~14% at the default statistics
target; any other trigram is rarer). A query with a trigram rarer than that takes the filter at
once. A query made only of common trigrams walks first, but only through a quarter of as many
rows as hold its rarest trigram (about what the filter would read, each row there costing more):
a common phrase is found in that stretch, and a rare phrase of common words goes on to the
filter, having cost at most about as much again. Those constants come from timing both routes
on 170 queries at 100k records (docs/benchmarks.md). A query under 3 characters (folded) has no trigram and walks; without statistics
(a store never analysed) the walk is tried for ``UNKNOWN_WALK`` rows first.
"""

from __future__ import annotations

import time
from typing import Any

from ...docsql.admission import Admission
from ...docsql.searches import DocSearches, scored
from ...ranking.access import Access
from ...ranking.filters import Filters
from . import trigrams

KEYS = 6  # the rarest trigrams of a query the filter asks for (each more costs the index scan more)
WALK_SHARE = 0.25  # of the rows holding a common query's rarest trigram, how many are walked first
UNKNOWN_WALK = 1000  # rows walked before the filter when the server has no statistics of the column
STATS_SECONDS = 60.0  # how long the column's statistics are reused before they are read again

Stats = tuple[dict[int, float], float]  # the tracked trigrams' shares of the rows, and the rows


class TrigramStats:
    """The server's statistics of ``eidetic_docs.trigrams`` (ANALYZE's most common elements),
    read at most once every ``STATS_SECONDS``."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._read: tuple[float, Stats | None] | None = None

    def get(self) -> Stats | None:
        """(share of the rows holding each tracked trigram, rows); None before any ANALYZE."""
        now = time.monotonic()
        if self._read is None or now - self._read[0] > STATS_SECONDS:
            row = self._source.conn.execute(
                "SELECT s.most_common_elems::text::int[], s.most_common_elem_freqs, c.reltuples "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname "
                "WHERE c.oid = 'eidetic_docs'::regclass AND s.attname = 'trigrams'"
            ).fetchone()
            stats = None
            if row is not None and row[0] is not None:
                stats = (dict(zip(row[0], row[1])), max(float(row[2]), 0.0))
            self._read = (now, stats)
        return self._read[1]


def plan(grams: list[int], stats: Stats | None) -> tuple[list[int], int]:
    """The trigrams the filter asks for (the ``KEYS`` rarest), and how many rows to walk
    before asking it: none when one is rarer than the statistics track, else ``WALK_SHARE`` of
    the rows holding the rarest (the filter would read about as many, each at a higher cost)."""
    if stats is None:
        return grams[:KEYS], UNKNOWN_WALK
    shares, rows = stats
    ranked = sorted(grams, key=lambda gram: (shares.get(gram, 0.0), gram))
    keys = ranked[:KEYS]
    return keys, int(WALK_SHARE * shares.get(keys[0], 0.0) * rows)


class PostgresSearches(DocSearches):
    """The shared searches over ``eidetic_docs`` (``docsql.searches``), exact search routed."""

    def __init__(self, source: Any) -> None:
        super().__init__(source)
        self.stats = TrigramStats(source)

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) for texts containing ``query``, shortest first
        (then by id), by the walk or the trigram filter (see the module's docstring)."""
        grams = trigrams.of_query(query)
        if grams is None:
            return super().exact(query, case_sensitive, access, filters, limit, offset)
        keys, walk = plan(grams, self.stats.get())
        admission = self.admission(access, filters)
        check, needle = self._source.dialect.text_contains(query, case_sensitive)
        want = offset + limit
        if walk:
            rows = self._walk(admission, check, needle, want, walk)
            if len(rows) >= want:
                return scored(query, rows[offset:want])
        found = self._shortest(admission, check, needle, limit, offset, (trigrams.CANDIDATES, [keys]))
        return scored(query, found)

    def _walk(self, admission: Admission, check: str, needle: str, want: int, rows: int) -> list[Any]:
        """(doc, length) of the matches among the ``rows`` shortest admitted texts, shortest
        first: the first ``want`` of them (all, when metadata facets are checked in Python)."""
        dialect = self._source.dialect
        order = f"d.len, {dialect.ordered('d.id')}"
        outer, params = ("", []) if admission.filters.meta else (" LIMIT %s", [want])
        sql = (
            f"SELECT d.doc, d.len{admission.metadata} FROM (SELECT d.doc, d.len, d.id, d.text{admission.metadata} "
            f"FROM {dialect.table} d WHERE {admission.sql} ORDER BY {order} LIMIT %s) d "
            f"WHERE {check} ORDER BY {order}{outer}"
        )
        return admission.kept(self._source.conn.execute(sql, [*admission.params, rows, needle, *params]).fetchall())
