"""What a caller may see, as SQL over the docs table ``d``: the no-leak scope rule and the
lifecycles it admits (``ranking.access``), the column filters (``ranking.filters``) and the served
copy of each id. Metadata facets are checked in Python on the rows the SQL admits
(``Filters.matches_meta``), so their typed comparisons have one definition, in either engine.
So is a caller's ``as_of`` (the store as it stood then, ``clocks``): SQL keeps the rows recorded
by then whose lifecycle could have been admitted then (any row with a history, else one whose
lifecycle is admitted now), and Python decides each from its history and validity."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from .. import clocks
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..records import LIFECYCLES
from .dialect import Dialect, every


def scope_sql(dialect: Dialect, access: Access) -> tuple[str, list[Any]]:
    """``Access.admits`` as a condition over columns scope, visibility and lifecycle (``as_of``
    aside: :class:`Admission` adds it)."""
    states = access.lifecycles()
    parts = [f"d.lifecycle IN ({dialect.marks(len(states))})"]
    params: list[Any] = list(states)
    if access.scope.visibility == "private":
        parts.append(f"(d.visibility = 'public' OR (d.visibility = 'private' AND d.scope = {dialect.mark}))")
        params.append(access.scope.name)
    else:
        parts.append("d.visibility = 'public'")
    if access.scope_only:
        parts.append(f"d.scope = {dialect.mark}")
        params.append(access.scope.name)
    return " AND ".join(parts), params


def _filters_sql(dialect: Dialect, filters: Filters) -> tuple[list[str], list[Any]]:
    """The filters on indexed columns: source, types, and the window on ``created``."""
    parts: list[str] = []
    params: list[Any] = []
    if filters.source is not None:
        parts.append(f"d.source = {dialect.mark}")
        params.append(filters.source)
    if filters.types:
        parts.append(f"d.type IN ({dialect.marks(len(filters.types))})")
        params.extend(filters.types)
    if filters.since is not None:
        parts.append(f"d.created_ts >= {dialect.mark}")
        params.append(filters.since)
    if filters.until is not None:
        parts.append(f"d.created_ts <= {dialect.mark}")
        params.append(filters.until)
    return parts, params


def _as_of_sql(dialect: Dialect, access: Access) -> tuple[str, list[Any]]:
    """The rows that may have been admitted at ``access.as_of``: recorded by then (or at an
    unknown date), and with a history, or in an admitted lifecycle now."""
    states = access.lifecycles()
    return (
        f"(d.created_ts IS NULL OR d.created_ts <= {dialect.mark}) AND "
        f"(d.history IS NOT NULL OR d.lifecycle IN ({dialect.marks(len(states))}))"
    ), [access.as_of.timestamp() if access.as_of else None, *states]


@dataclass(frozen=True)
class Admission:
    """One caller's admission: ``sql`` (with ``params``) over ``d``, then the metadata facets
    of ``filters`` and the ``as_of`` of ``access`` on what it admits (:meth:`kept`)."""

    dialect: Dialect
    sql: str
    params: list[Any]
    filters: Filters
    access: Access

    @classmethod
    def of(cls, dialect: Dialect, access: Access, filters: Filters) -> Admission:
        if access.as_of is None:
            scope, params = scope_sql(dialect, access)
        else:  # every lifecycle in SQL: which one the record had then is decided in Python
            scope, params = scope_sql(dialect, replace(access, states=LIFECYCLES))
            then, then_params = _as_of_sql(dialect, access)
            scope, params = f"{scope} AND {then}", params + then_params
        columns, column_params = _filters_sql(dialect, filters)
        return cls(dialect, every(dialect.served(), scope, *columns), params + column_params, filters, access)

    @property
    def in_python(self) -> bool:
        """Whether :meth:`kept` decides some rows (else SQL decided them all)."""
        return bool(self.filters.meta) or self.access.as_of is not None

    @property
    def metadata(self) -> str:
        """What a query adds to its columns for :meth:`kept`: the metadata, when a facet needs
        it, and what ``as_of`` reads."""
        return ("" if not self.filters.meta else ", d.metadata") + (
            "" if self.access.as_of is None else ", " + ", ".join(clocks.AS_OF_COLUMNS)
        )

    def kept(self, rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows the metadata facets and ``as_of`` admit, without the columns
        :attr:`metadata` added (the last ones)."""
        if not self.in_python:
            return list(rows)
        moment, states = self.access.as_of, self.access.lifecycles()
        then = len(clocks.AS_OF_COLUMNS) if moment is not None else 0
        extra = then + bool(self.filters.meta)
        decode, matches = self.dialect.json, self.filters.matches_meta
        kept = []
        for row in rows:
            if self.filters.meta and not matches(decode(row[-extra])):
                continue
            if moment is not None and not clocks.visible_then(row[len(row) - then :], moment, states):
                continue
            kept.append(row[:-extra])
        return kept
