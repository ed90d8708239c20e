"""What a caller may see, as SQL over the docs table ``d``: the no-leak scope rule and the
lifecycles it admits (``ranking.access``), the column filters (``ranking.filters``) and the served
copy of each id. Metadata facets are checked in Python on the rows the SQL admits
(``Filters.matches_meta``), so their typed comparisons have one definition, in either engine."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..ranking.access import Access
from ..ranking.filters import Filters
from .dialect import Dialect, every


def scope_sql(dialect: Dialect, access: Access) -> tuple[str, list[Any]]:
    """``Access.admits`` as a condition over columns scope, visibility and lifecycle."""
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


@dataclass(frozen=True)
class Admission:
    """One caller's admission: ``sql`` (with ``params``) over ``d``, then the metadata facets
    of ``filters`` on what it admits (:meth:`kept`)."""

    dialect: Dialect
    sql: str
    params: list[Any]
    filters: Filters

    @classmethod
    def of(cls, dialect: Dialect, access: Access, filters: Filters) -> Admission:
        scope, params = scope_sql(dialect, access)
        columns, column_params = _filters_sql(dialect, filters)
        return cls(dialect, every(dialect.served(), scope, *columns), params + column_params, filters)

    @property
    def metadata(self) -> str:
        """What a query adds to its columns for :meth:`kept`: the metadata, only when a facet needs it."""
        return ", d.metadata" if self.filters.meta else ""

    def kept(self, rows: Iterable[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows the metadata facets admit, without the metadata column :attr:`metadata`
        added (the last one)."""
        if not self.filters.meta:
            return list(rows)
        decode, matches = self.dialect.json, self.filters.matches_meta
        return [row[:-1] for row in rows if matches(decode(row[-1]))]
