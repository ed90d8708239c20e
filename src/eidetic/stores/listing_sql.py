"""The SQL of a listing (``RecordStore.listing``) for both SQL engines, and the record database's
(files and sqlite backends) query.

Each sort is a few key columns over ``docs d`` (and the usage row ``u``), all ordered one way,
the id last: a store returns each row's key, and Python compares keys exactly as SQL ordered
them (code points, numbers), so the pages of several stores merge without re-sorting. The
record database indexes the keys of ``updated``, ``created`` and ``name`` (``index.schema``:
the expressions there must stay these), so a page is read from the front of an index.
Metadata facets are checked in Python on the rows SQL admits, in one ordered pass.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..listing import Order
from ..ranking.filters import Filters

Listed = tuple[int, str, tuple[Any, ...]]  # (doc, id, sort key), in the store's order

_LAST_WRITE = "coalesce(d.updated, nullif(d.created, 'date-unknown'), '')"


def sort_keys(order: Order, usage: bool, collate: str = "") -> list[str]:
    """The key columns of ``order``; ``collate`` follows each text key (postgres compares by
    code point only with ``COLLATE "C"``, where lower() also folds ASCII letters only, as
    SQLite's does); ``usage``: whether the usage row ``u`` is joined."""
    if order.sort == "updated":
        keys = [f"{_LAST_WRITE}{collate}"]
    elif order.sort == "created":
        keys = ["coalesce(d.created_ts, -1e300)"]  # an unknown date is the oldest
    elif order.sort == "recalled":
        count, last = ("coalesce(u.recall_count, 0)", "coalesce(u.last_recall, '')") if usage else ("0", "''")
        keys = [count, f"{last}{collate}", f"{_LAST_WRITE}{collate}"]
    else:
        keys = [f"lower(substr(coalesce(d.name, d.text), 1, 32){collate})"]
    return [*keys, f"d.id{collate}"]


def ordered(order: Order, keys: list[str], first: int = 3) -> str:
    """ORDER BY the key columns, which start at column ``first`` of the SELECT (a position, so
    a constant key is never read as a column number)."""
    direction = " DESC" if order.descending else ""
    return ", ".join(f"{first + n}{direction}" for n in range(len(keys)))


def page(rows: Any) -> list[Listed]:
    return [(doc, rid, tuple(keys)) for doc, rid, *keys in rows]


def sqlite_listing(
    conn: sqlite3.Connection,
    admitted: tuple[str, list[Any]],
    filters: Filters,
    order: Order,
    limit: int | None,
    offset: int,
    usage: tuple[Path, str] | None,
    refers_to: str | None,
) -> tuple[list[Listed], int]:
    """One page of a record database's docs that the condition ``admitted`` (scope, lifecycle,
    column filters) lets through and ``filters``' metadata facets match, and how many there
    are. ``usage``: the usage state database and this store's key in it (recall counts are read
    from it, attached, only to sort by them)."""
    where, params = admitted
    if refers_to is not None:  # few rows: found through two small indexes, then sorted
        where += (
            " AND d.doc IN (SELECT doc FROM docs WHERE supersedes = ? UNION ALL SELECT doc FROM docs"
            " WHERE links <> '[]' AND EXISTS (SELECT 1 FROM json_each(links) WHERE json_each.value = ?))"
        )
        params = [*params, refers_to, refers_to]
    hint, hinted = facet_hint(filters, "instr(d.metadata, ?) > 0")
    where, params = where + hint, [*params, *hinted]
    join, joined = "", []
    if order.sort == "recalled" and usage is not None and usage[0].is_file():
        if "usage_state" not in {row[1] for row in conn.execute("PRAGMA database_list")}:
            conn.execute("ATTACH DATABASE ? AS usage_state", (str(usage[0]),))
        join, joined = "LEFT JOIN usage_state.usage u ON u.store = ? AND u.id = d.id", [usage[1]]
    keys = sort_keys(order, bool(join))
    meta = ", d.metadata" if filters.meta else ""
    sql = (
        f"SELECT d.doc, d.id, {', '.join(keys)}{meta} FROM docs d {join} WHERE {where} ORDER BY {ordered(order, keys)}"
    )
    if filters.meta:
        return faceted(conn.execute(sql, [*joined, *params]), filters, limit, offset, json.loads)
    listed = page(conn.execute(f"{sql} LIMIT ? OFFSET ?", [*joined, *params, -1 if limit is None else limit, offset]))
    if limit is None and offset == 0:
        return listed, len(listed)
    return listed, conn.execute(f"SELECT count(*) FROM docs d WHERE {where}", params).fetchone()[0]


_PLAIN = re.compile(r"[A-Za-z0-9_ .:@/+-]+")


def facet_hint(filters: Filters, contains: str) -> tuple[str, list[Any]]:
    """A cheap condition every row a metadata facet matches meets, so SQL rules most rows out
    before Python checks them: the metadata's JSON text contains the key's last part (closed by
    its quote), and for ``key=word`` the word as a JSON string. Only for plain words, which JSON
    writes as they are; ``contains`` tests the metadata text for the next parameter."""
    parts: list[str] = []
    params: list[Any] = []
    for facet in filters.meta:
        last = facet.key.rsplit(".", 1)[-1]
        if _PLAIN.fullmatch(last):
            parts.append(contains)
            params.append(f'{last}"')
        if facet.op == "=" and isinstance(facet.value, str) and _PLAIN.fullmatch(facet.raw):
            parts.append(contains)
            params.append(f'"{facet.raw}"')
    return "".join(f" AND {part}" for part in parts), params


def faceted(
    rows: Iterable[Sequence[Any]], filters: Filters, limit: int | None, offset: int, decode: Callable[[Any], Any]
) -> tuple[list[Listed], int]:
    """The page of ordered rows (their metadata last) whose metadata the facets match, and how
    many match in all."""
    kept = [row[:-1] for row in rows if filters.matches_meta(decode(row[-1]))]
    return page(kept[offset : None if limit is None else offset + limit]), len(kept)
