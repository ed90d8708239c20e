"""The searches SQL answers alone, in either engine: admitting ranked candidates, exact
substrings shortest first, and the candidates of the ``fields`` ranking. Every one applies the
caller's admission (``admission``) inside, so nothing the caller may not see leaves here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..ranking.access import Access
from ..ranking.filters import Filters
from ..stores.types import FieldsRow
from . import Source
from .admission import Admission

EXACT_PAGE = 200  # rows per page of a shortest-first walk whose metadata facets are checked in Python
LAST_WRITE = "coalesce(d.updated, d.created)"  # a record's last write where it has no file

Score = TypeVar("Score")


def grown(
    ranked: Callable[[int], list[tuple[int, Score]]], admit: Callable[[list[int]], set[int]], want: int, window: int
) -> list[tuple[int, Score]]:
    """The admitted docs among a ranking's first ``window`` (with their scores, in its order),
    the window growing x4 until ``want`` are admitted or the ranking runs out."""
    while True:
        page = ranked(window)
        admitted = admit([doc for doc, _ in page])
        rows = [(doc, score) for doc, score in page if doc in admitted]
        if len(rows) >= want or len(page) < window:
            return rows
        window *= 4


class DocSearches:
    """Searches over one docs table. ``touched``: SQL for a record's last write (the ``fields``
    ranking's recency); ``files``: the join and columns (mtime ns, path) of records' files, for
    a table that has them."""

    def __init__(self, source: Source, touched: str = LAST_WRITE, files: tuple[str, str] = ("", "NULL, NULL")) -> None:
        self._source = source
        self._touched = touched
        self._files = files

    def admission(self, access: Access, filters: Filters) -> Admission:
        return Admission.of(self._source.dialect, access, filters)

    def admitted(self, docs: list[int], admission: Admission, check: str = "", needle: str | None = None) -> set[int]:
        """Which of ``docs`` the admission lets through (and, given, satisfy ``check`` with its ``needle``)."""
        dialect, conn = self._source.dialect, self._source.conn
        extra, extra_params = (f" AND {check}", [needle]) if check else ("", [])
        found: set[int] = set()
        for condition, params in dialect.one_of("d.doc", docs):
            rows = conn.execute(
                f"SELECT d.doc{admission.metadata} FROM {dialect.table} d WHERE {condition} AND {admission.sql}{extra}",
                [*params, *admission.params, *extra_params],
            )
            found.update(doc for (doc,) in admission.kept(rows))
        return found

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) for texts containing ``query``, shortest first
        (then by id): a walk of the texts by length that stops at the first ``limit`` matches."""
        if not query:
            return []
        admission = self.admission(access, filters)
        check, needle = self._source.dialect.text_contains(query, case_sensitive)
        return scored(query, self._shortest(admission, check, needle, limit, offset))

    def _shortest(
        self,
        admission: Admission,
        check: str,
        needle: str,
        limit: int,
        offset: int,
        narrow: tuple[str, list[Any]] | None = None,
    ) -> list[Any]:
        """(doc, length) of the admitted texts satisfying ``check``, ranks ``offset`` to
        ``offset + limit`` shortest first; in pages when metadata facets are checked in Python.
        Without ``narrow``, a walk of the texts by length that stops at the matches it needs.
        ``narrow``: a condition (and its parameters) that every match meets and an index finds
        (the postgres backend's trigram filter): the rows it finds are checked, then sorted."""
        dialect, conn = self._source.dialect, self._source.conn
        columns, order = f"d.doc, d.len{admission.metadata}", f"d.len, {dialect.ordered('d.id')}"
        page = f"ORDER BY {order} LIMIT {dialect.mark} OFFSET {dialect.mark}"
        params: list[Any] = [*admission.params, needle]
        if narrow is None:
            sql = (
                f"SELECT {columns} FROM {dialect.table} d {dialect.by_length} WHERE {admission.sql} AND {check} {page}"
            )
        else:  # materialised: planned alone, so the server cannot prefer walking the length index
            sql = (
                f"WITH d AS MATERIALIZED (SELECT {columns}, d.id FROM {dialect.table} d "
                f"WHERE {narrow[0]} AND {admission.sql} AND {check}) SELECT {columns} FROM d {page}"
            )
            params = [*narrow[1], *params]
        if not admission.in_python:
            return conn.execute(sql, [*params, limit, offset]).fetchall()
        want, start = offset + limit, 0
        found: list[tuple[Any, ...]] = []
        while len(found) < want:
            page = conn.execute(sql, [*params, EXACT_PAGE, start]).fetchall()
            found += admission.kept(page)
            if len(page) < EXACT_PAGE:
                break
            start += EXACT_PAGE
        return found[offset:want]

    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        """Records the caller may see with any term as a lower-cased substring of name (hyphens
        and underscores read as spaces), description or text; all of them when there are no
        terms (a browse). The ``fields`` ranking scores them (``ranking.fields``)."""
        dialect = self._source.dialect
        admission = self.admission(access, filters)
        params = list(admission.params)
        name, description = dialect.lower("coalesce(d.name, '')"), dialect.lower("coalesce(d.description, '')")
        spaced_name = f"replace(replace({name}, '-', ' '), '_', ' ')"
        checks = []
        for term in terms:
            checks.append(
                " OR ".join(
                    dialect.contains(field) for field in (spaced_name, name, description, dialect.lower("d.text"))
                )
            )
            params += [term.replace("-", " ").replace("_", " "), term, term, term]
        match = f" AND ({' OR '.join(checks)})" if checks else ""
        join, file_columns = self._files
        rows = self._source.conn.execute(
            f"SELECT d.doc, d.id, d.name, d.description, d.text, d.type, {self._touched}, {file_columns}"
            f"{admission.metadata} FROM {dialect.table} d {join} WHERE {admission.sql}{match}",
            params,
        )
        return cast(list[FieldsRow], admission.kept(rows))


def scored(query: str, rows: list[tuple[int, int]]) -> list[tuple[int, float]]:
    """Exact matches' scores: how much of each text the query covers."""
    qlen = len(query)
    return [(doc, min(1.0, qlen / length) if length else 0.0) for doc, length in rows]
