"""A record's values as the docs table stores them, in either SQL engine: the record database
(``database``) and the postgres backend (``stores.postgres.writes``) write the same columns,
and read them back through ``docsql.rows``."""

from __future__ import annotations

import json
from contextlib import closing
from typing import Any

from ..clocks import history_json
from ..docsql.dialect import Dialect
from ..ranking.threads import order_key, thread_key, thread_of
from ..records import Record, normal_key
from ..timeutil import to_epoch

# as json.dumps(..., ensure_ascii=False), with no encoder made per call
_JSON = json.JSONEncoder(ensure_ascii=False).encode
BACKFILL_BATCH = 2000  # rows read and updated at a time when a store gains ``norm`` (an upgrade)

# The columns a record fills, in the order of :func:`stored`; each engine adds its own before
# (doc, id, and a path or partition) and after (an elected copy, or keyword lengths).
RECORD_COLUMNS = (
    "scope, visibility, lifecycle, type, name, description, text, hash, len, created, created_ts, updated, "
    "added_by, supersedes, links, metadata, source, thread_key, thread_order, occurred, valid_from, valid_until, "
    "history, norm"
)


def stored(r: Record) -> tuple[Any, ...]:
    """The values of :data:`RECORD_COLUMNS`: the record's fields (links and metadata as JSON
    text), and what searches need of them: the text's length, ``created`` in epoch seconds, the
    ``source`` filter, the record's thread and place in it (``context``), and the key of its
    normalised text (``records.normal_key``: its near-duplicates by text)."""
    ts = to_epoch(r.created)
    tkey = thread_key(r.scope.visibility, r.scope.name, thread_of(r.metadata))
    source = r.metadata.get("source")
    return (
        r.scope.name,
        r.scope.visibility,
        r.lifecycle,
        r.type,
        r.name,
        r.description,
        r.text,
        r.hash,
        len(r.text),
        r.created,
        ts,
        r.updated,
        r.added_by,
        r.supersedes,
        _JSON(r.links),
        _JSON(r.metadata),
        source if isinstance(source, str) else None,
        tkey,
        order_key(ts, r.id) if tkey else None,
        r.occurred,
        r.valid_from,
        r.valid_until,
        history_json(r.history),
        r.norm,
    )


def backfill_norm(conn: Any, dialect: Dialect) -> None:
    """Fill ``norm`` of the rows that have none (written before the column was there), in
    batches by doc number, inside the caller's transaction (an upgrade's: the store is never
    seen half filled). In Python, with the function every write uses, so both agree."""
    table, mark = dialect.table, dialect.mark
    last = -1
    while True:
        rows = conn.execute(
            f"SELECT doc, text FROM {table} WHERE doc > {mark} AND norm IS NULL ORDER BY doc LIMIT {mark}",
            (last, BACKFILL_BATCH),
        ).fetchall()
        if not rows:
            return
        with closing(conn.cursor()) as cursor:
            cursor.executemany(
                f"UPDATE {table} SET norm = {mark} WHERE doc = {mark}", [(normal_key(text), doc) for doc, text in rows]
            )
        last = rows[-1][0]
