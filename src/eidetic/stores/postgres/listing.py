"""A listing on the server (``RecordStore.listing``): the keys of ``listing_sql`` over
``eidetic_docs``, usage joined from ``eidetic_usage`` to sort by it, metadata facets checked in
Python as everywhere on this backend (``scope.where``)."""

from __future__ import annotations

from typing import Any

from ...listing import Order
from ...ranking.access import Access
from ...ranking.filters import Filters
from ..listing_sql import Listed, faceted, facet_hint, ordered, page, sort_keys
from .scope import where


def listing(
    conn: Any,
    access: Access,
    filters: Filters,
    order: Order,
    limit: int | None,
    offset: int,
    refers_to: str | None,
) -> tuple[list[Listed], int]:
    """One page of the admitted records in ``order``, and how many there are."""
    condition, params = where(access, filters)
    if refers_to is not None:
        condition += " AND (d.supersedes = %s OR d.links @> jsonb_build_array(%s::text))"
        params = [*params, refers_to, refers_to]
    hint, hinted = facet_hint(filters, "strpos(d.metadata::text, %s) > 0")
    condition, params = condition + hint, [*params, *hinted]
    join = "LEFT JOIN eidetic_usage u ON u.id = d.id" if order.sort == "recalled" else ""
    keys = sort_keys(order, bool(join), ' COLLATE "C"')
    meta = ", d.metadata" if filters.meta else ""
    sql = (
        f"SELECT d.doc, d.id, {', '.join(keys)}{meta} FROM eidetic_docs d {join} WHERE {condition} "
        f"ORDER BY {ordered(order, keys)}"
    )
    if filters.meta:  # every admitted row is read, and its metadata checked here
        return faceted(conn.execute(sql, params), filters, limit, offset, lambda metadata: metadata)
    listed = page(conn.execute(f"{sql} LIMIT %s OFFSET %s", [*params, limit, offset]))
    if limit is None and offset == 0:
        return listed, len(listed)
    total = conn.execute(f"SELECT count(*) FROM eidetic_docs d WHERE {condition}", params).fetchone()[0]
    return listed, total
