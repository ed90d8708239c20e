"""The searches of a record database that SQL answers or admits.

The keyword indexes (tantivy) rank candidates; SQLite admits them: the caller's scope and
lifecycles (``ranking.access``), its filters (``ranking.filters``) and the served copy of each
id, so nothing the caller may not see leaves this module. Windows of ranked candidates grow
until enough are admitted or none are left.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ranking.access import Access
from ..ranking.filters import Filters
from ..sqlite_db import chunks as _chunks
from .text_index import MIN_CHUNKED_QUERY, partitions_in_reach

if TYPE_CHECKING:
    from .database import RecordDatabase

# (doc, id, name, description, text, type, last touched, file mtime ns, path)
FieldsCandidate = tuple[int, str, "str | None", "str | None", str, str, "str | None", "int | None", "str | None"]


class SqlSearches:
    """Keyword, exact and ``fields`` candidates over one record database, admitted in SQL."""

    def __init__(self, db: RecordDatabase) -> None:
        self.db = db

    @staticmethod
    def reach(access: Access) -> list[str]:
        """The text indexes a caller may search: the public one, and its own private one."""
        return partitions_in_reach(access.scope)

    def _where(self, access: Access, filters: Filters) -> tuple[str, list[object]]:
        self.db.meta_filter = filters
        scope_sql, scope_params = access.sql("d")
        filter_sql, filter_params = filters.sql("d")
        return f"d.winner=1 AND {scope_sql} AND {filter_sql}", scope_params + filter_params

    def _admitted(self, docs: list[int], where: str, params: list[object]) -> set[int]:
        admitted: set[int] = set()
        for chunk in _chunks(docs, 500):
            marks = ",".join("?" * len(chunk))
            admitted.update(
                d
                for (d,) in self.db.conn.execute(
                    f"SELECT d.doc FROM docs d WHERE d.doc IN ({marks}) AND {where}", [*chunk, *params]
                )
            )
        return admitted

    def admitted_docs(self, docs: list[int], access: Access, filters: Filters) -> set[int]:
        """Which of these docs the caller may see (scope, lifecycle, filters, served copy)."""
        where, params = self._where(access, filters)
        return self._admitted(docs, where, params)

    def keyword(
        self, terms: list[str], access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, BM25 score) of records sharing a term, best first, after scope, lifecycle and
        filters. The keyword index ranks; SQLite admits."""
        if not terms:
            return []
        where, params = self._where(access, filters)
        want = offset + limit
        window = max(want + want // 4, 50)  # most candidates pass admission: grow only if not
        while True:
            ranked = self.db.text.search(self.reach(access), terms, window)
            admitted = self._admitted([doc for doc, _ in ranked], where, params)
            rows = [(doc, score) for doc, score in ranked if doc in admitted]
            if len(rows) >= want or len(ranked) < window:
                return rows[offset:want]
            window *= 4

    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsCandidate]:
        """(doc, id, name, description, text, type, last touched, file mtime ns, path) of the
        records the caller may see that contain any term in name, description or text (all of
        them when there are no terms: a browse). The ``fields`` ranking scores them
        (``ranking.fields``)."""
        where, params = self._where(access, filters)
        checks = []
        for term in terms:
            spaced = term.replace("-", " ").replace("_", " ")
            checks.append(
                "instr(replace(replace(lower(coalesce(d.name, '')), '-', ' '), '_', ' '), ?)"
                " OR instr(lower(coalesce(d.name, '')), ?)"
                " OR instr(lower(coalesce(d.description, '')), ?) OR instr(lower(d.text), ?)"
            )
            params += [spaced, term, term, term]
        match = f" AND ({' OR '.join(checks)})" if checks else ""
        return list(
            self.db.conn.execute(
                f"SELECT d.doc, d.id, d.name, d.description, d.text, d.type, {self.db.LAST_TOUCHED}, f.mtime_ns, d.path "
                f"FROM docs d LEFT JOIN files f ON f.path = d.path WHERE {where}{match}",
                params,
            )
        )

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) for texts containing ``query``, shortest first.

        ASCII queries of 5+ characters take candidates from the chunk index, shortest first, and
        SQLite confirms them (and applies scope, lifecycle and filters) in growing windows.
        Shorter or non-ASCII queries walk the texts shortest-first in SQLite and stop as soon as
        enough match (short substrings match often)."""
        if not query:
            return []
        where, params = self._where(access, filters)
        if query.isascii():
            check, needle = (
                ("instr(d.text, ?)", query) if case_sensitive else ("instr(lower(d.text), ?)", query.lower())
            )
        else:
            self.db.conn.create_function(
                "eidetic_contains", 2, _contains if case_sensitive else _contains_casefold, deterministic=True
            )
            check, needle = "eidetic_contains(d.text, ?)", query
        qlen = len(query)
        want = offset + limit
        if query.isascii() and qlen >= MIN_CHUNKED_QUERY:
            window = max(2 * want, 50)
            while True:
                ranked = self.db.text.shortest_containing(self.reach(access), query, window)
                confirmed = self._admitted([doc for doc, _ in ranked], f"{where} AND {check}", [*params, needle])
                rows = [(doc, length) for doc, length in ranked if doc in confirmed]
                if len(rows) >= want or len(ranked) < window:
                    break
                window *= 4
            rows = rows[offset:want]
        else:
            sql = (
                f"SELECT d.doc, d.len FROM docs d INDEXED BY docs_len WHERE {where} AND {check} "
                f"ORDER BY d.len, d.id LIMIT ? OFFSET ?"
            )
            rows = list(self.db.conn.execute(sql, [*params, needle, limit, offset]))
        return [(doc, min(1.0, qlen / length) if length else 0.0) for doc, length in rows]


def _contains(text: str, needle: str) -> bool:
    return needle in text


def _contains_casefold(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()
