"""A listing (``RecordStore.listing``) over the docs table, in either engine: one page of what
an admission lets through, in an order, and how many there are.

Each sort is a few key columns over ``d`` (and the usage row ``u``), all ordered one way, the id
last; a store returns each row's key, and Python compares keys exactly as SQL ordered them (code
points, numbers), so the pages of several stores merge without re-sorting. Both engines index
the keys of ``updated``, ``created`` and ``name`` (``index.schema``, ``stores.postgres.schema``:
the expressions there must stay these), so a page is read from the front of an index. Metadata
facets are checked in Python on the rows SQL admits (``admission``), in one ordered pass; a
plain ``key=word`` facet first narrows them in SQL (:func:`facet_hint`).
"""

from __future__ import annotations

import re
from typing import Any

from ..listing import Order
from ..stores.types import Listed
from . import Source
from .admission import Admission

Join = tuple[str, list[Any]]  # a JOIN clause that brings the usage row ``u``, and its parameters

_LAST_WRITE = "coalesce(d.updated, nullif(d.created, 'date-unknown'), '')"
_PLAIN = re.compile(r"[A-Za-z0-9_ .:@/+-]+")


def sort_keys(source: Source, order: Order, usage: bool) -> list[str]:
    """The key columns of ``order``: text keys compare by code point in either engine, and the
    name is folded by ``lower`` on that collation, which folds ASCII letters only in both;
    ``usage``: whether the usage row ``u`` is joined (without it, nothing was recalled)."""
    text = source.dialect.ordered
    if order.sort == "updated":
        keys = [text(_LAST_WRITE)]
    elif order.sort == "created":
        keys = ["coalesce(d.created_ts, -1e300)"]  # an unknown date is the oldest
    elif order.sort == "recalled":
        count, last = ("coalesce(u.recall_count, 0)", "coalesce(u.last_recall, '')") if usage else ("0", "''")
        keys = [count, text(last), text(_LAST_WRITE)]
    else:
        keys = [f"lower({text('substr(coalesce(d.name, d.text), 1, 32)')})"]
    return [*keys, text("d.id")]


def _positions(order: Order, keys: list[str], first: int = 3) -> str:
    """ORDER BY the key columns, which start at column ``first`` of the SELECT (a position, so
    a constant key is never read as a column number)."""
    direction = " DESC" if order.descending else ""
    return ", ".join(f"{first + n}{direction}" for n in range(len(keys)))


def _page(rows: Any) -> list[Listed]:
    return [(doc, rid, tuple(keys)) for doc, rid, *keys in rows]


def facet_hint(source: Source, admission: Admission) -> tuple[str, list[Any]]:
    """A cheap condition every row the metadata facets match meets, so SQL rules most rows out
    before Python checks them: the metadata's JSON text holds each key's last part (closed by
    its quote), and for ``key=word`` the word as a JSON string. Only for plain words, which JSON
    writes as they are."""
    contains = source.dialect.contains("CAST(d.metadata AS TEXT)")
    parts: list[str] = []
    params: list[Any] = []
    for facet in admission.filters.meta:
        last = facet.key.rsplit(".", 1)[-1]
        if _PLAIN.fullmatch(last):
            parts.append(contains)
            params.append(f'{last}"')
        if facet.op == "=" and isinstance(facet.value, str) and _PLAIN.fullmatch(facet.raw):
            parts.append(contains)
            params.append(f'"{facet.raw}"')
    return "".join(f" AND {part}" for part in parts), params


def _refers(source: Source, rid: str) -> tuple[str, list[Any]]:
    """Records whose ``supersedes`` or ``links`` name ``rid``: few, found through two small
    indexes (then sorted), not by walking a sort index over every row."""
    dialect = source.dialect
    return (
        f" AND d.doc IN (SELECT doc FROM {dialect.table} WHERE supersedes = {dialect.mark} UNION ALL "
        f"SELECT doc FROM {dialect.table} WHERE {dialect.links_hold()})",
        [rid, rid],
    )


def listing(
    source: Source,
    admission: Admission,
    order: Order,
    limit: int | None,
    offset: int,
    usage: Join | None,
    refers_to: str | None = None,
) -> tuple[list[Listed], int]:
    """One page of the admitted records in ``order`` (``limit`` None: all), and how many there
    are. ``usage``: the join that brings the usage row, to sort by it (None: nothing recalled)."""
    dialect = source.dialect
    where, params = admission.sql, list(admission.params)
    hint, hinted = facet_hint(source, admission)
    where, params = where + hint, params + hinted
    if refers_to is not None:
        refers, referred = _refers(source, refers_to)
        where, params = where + refers, params + referred
    join, joined = usage if usage is not None and order.sort == "recalled" else ("", [])
    keys = sort_keys(source, order, bool(join))
    sql = (
        f"SELECT d.doc, d.id, {', '.join(keys)}{admission.metadata} FROM {dialect.table} d {join} "
        f"WHERE {where} ORDER BY {_positions(order, keys)}"
    )
    conn = source.conn
    if admission.in_python:  # every admitted row, its metadata (or its past) checked in Python
        kept = admission.kept(conn.execute(sql, [*joined, *params]))
        return _page(kept[offset : None if limit is None else offset + limit]), len(kept)
    page = f"{sql} LIMIT {dialect.mark} OFFSET {dialect.mark}"
    listed = _page(conn.execute(page, [*joined, *params, dialect.no_limit if limit is None else limit, offset]))
    if limit is None and offset == 0:
        return listed, len(listed)
    return listed, conn.execute(f"SELECT count(*) FROM {dialect.table} d WHERE {where}", params).fetchone()[0]
