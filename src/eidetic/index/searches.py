"""The searches of a record database: the keyword indexes (tantivy) rank candidates, SQL admits.

Admission, the ``fields`` candidates and the shortest-first walk for exact substrings are the
SQL both SQL backends share (``docsql.searches``). What is this database's own: keyword search,
where tantivy offers candidates and BM25 under the caller's union statistics ranks them, and exact search for queries long enough for tantivy's chunk index
to offer candidates shortest first. Windows of ranked candidates grow until enough are admitted
or none are left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..docsql.searches import DocSearches, grown, scored
from ..ranking.access import Access, partitions_in_reach
from ..ranking.bm25 import KeywordStats
from ..ranking.filters import Filters
from .text_index import MIN_CHUNKED_QUERY

if TYPE_CHECKING:
    from .database import RecordDatabase


class RecordSearches(DocSearches):
    """Keyword, exact and ``fields`` candidates over one record database, admitted in SQL."""

    def __init__(self, db: RecordDatabase) -> None:
        # a record's file, where it has one (a files store): its mtime counts as a write too
        super().__init__(db, db.LAST_TOUCHED, ("LEFT JOIN files f ON f.path = d.path", "f.mtime_ns, d.path"))
        self.db = db

    @staticmethod
    def reach(access: Access) -> list[str]:
        """The text indexes a caller may search: the public one, and its own private one."""
        return partitions_in_reach(access.scope)

    def keyword(
        self,
        terms: list[str],
        access: Access,
        filters: Filters,
        limit: int,
        offset: int = 0,
        stats: KeywordStats | None = None,
    ) -> list[tuple[int, float]]:
        """(doc, BM25 score) of records sharing a term, best first, after scope, lifecycle and
        filters, under ``stats`` (the caller's union over every store; by default this store's
        partitions in reach). The keyword index ranks; SQLite admits."""
        if not terms:
            return []
        admission = self.admission(access, filters)
        reach = self.reach(access)
        union = stats if stats is not None else self.keyword_stats(terms, access)
        want = offset + limit
        return self.db.text.search(reach, terms, union, want, lambda docs: self.admitted(docs, admission))[offset:want]

    def keyword_stats(self, terms: list[str], access: Access) -> KeywordStats:
        """This database's share of the BM25 statistics of what ``access`` may read."""
        return self.db.text.statistics(self.reach(access), terms)

    def term_counts(self, terms: list[str], access: Access) -> tuple[int, dict[str, int]]:
        """Records in the caller's partitions (any lifecycle) and how many hold each term."""
        return self.db.text.term_counts(self.reach(access), terms)

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) for texts containing ``query``, shortest first.

        ASCII queries of 5+ characters take candidates from the chunk index, shortest first, and
        SQLite confirms them (and applies scope, lifecycle and filters) in growing windows.
        Shorter or non-ASCII queries walk the texts shortest-first in SQLite and stop as soon as
        enough match (short substrings match often)."""
        if not (query.isascii() and len(query) >= MIN_CHUNKED_QUERY):
            return super().exact(query, case_sensitive, access, filters, limit, offset)
        admission = self.admission(access, filters)
        check, needle = self.db.dialect.text_contains(query, case_sensitive)
        reach = self.reach(access)
        want = offset + limit
        rows = grown(
            lambda window: self.db.text.shortest_containing(reach, query, window),
            lambda docs: self.admitted(docs, admission, check, needle),
            want,
            max(2 * want, 50),
        )
        return scored(query, rows[offset:want])
