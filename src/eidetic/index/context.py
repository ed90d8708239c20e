"""Conversation context: a record is also findable through the records around it.

A chat turn rarely repeats the words of the question it answers ("Yes, last Tuesday!"); the
turns before and after it usually do. So a thread member's keyword ``context`` field holds its
text together with its neighbours' (the window), and keyword scores add that field's BM25 to
the record's own fields' (``text_index.FIELDS``). On LoCoMo this lifted keyword recall@10 more
than any other change (``docs/benchmarks.md``).

Neighbours, as a chat ingester writes conversations: records whose metadata share a
``thread`` (or ``thread_id``, ``conversation_id``) value form a thread, ordered by ``created``
and then by id in natural order (``turn-2`` before ``turn-10``); a record's neighbours are the
one before and the one after it. Links do not lend context: recall already returns a hit's
linked records as its traversal bundle, and a linked record turning into a hit of its own
would blur that tier (a chat ingester that links turns should also name the thread).
Only active records of the same visibility partition count: a public record never carries
private text, not even into a ranking, and a forgotten (archived), shadowed or conflicting
copy lends nothing.

This module is SQL over the record database's ``docs`` table plus pure helpers; the keyword
index itself is written by the record database (``database``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..sqlite_db import chunks as _chunks
from .text_index import partition_of

THREAD_KEYS = ("thread", "thread_id", "conversation_id")
_EPOCH_OFFSET = 1e12  # keeps order keys of dates before 1970 sortable as text
_LIVE = "winner=1 AND lifecycle = 'active'"  # records that may lend context


def thread_of(metadata: dict[str, Any]) -> str | None:
    """The conversation a record belongs to, from its metadata (first key present)."""
    for key in THREAD_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def thread_key(visibility: str, scope: str, thread: str | None) -> str | None:
    """Threads are per partition: a public and a private thread of one name are unrelated."""
    return None if thread is None else f"{partition_of(visibility, scope)}\x1f{thread}"


def order_key(created_ts: float | None, rid: str) -> str:
    """Sortable text: creation time, then the id with its numbers compared as numbers."""
    natural = re.sub(r"\d+", lambda m: f"{len(m.group().lstrip('0') or '0'):03d}{m.group().lstrip('0') or '0'}", rid)
    when = "" if created_ts is None else f"{created_ts + _EPOCH_OFFSET:020.6f}"
    return f"{when}\x1f{natural}"


class Neighbourhood:
    """Finds records' neighbours in the index database (inside the caller's transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def of(self, docs: Iterable[int]) -> dict[int, list[int]]:
        """Each active doc's neighbours (the record before it in its thread, the one after).
        The relation is symmetric: they quote the doc in their context, so they are re-indexed
        whenever it changes."""
        rows = self._rows(docs)
        result: dict[int, list[int]] = {doc: [] for doc in rows}
        self._thread_neighbours(rows, result)
        return result

    def _rows(self, docs: Iterable[int]) -> dict[int, tuple[str, str]]:
        """doc -> (thread key, order key), for active docs in a thread."""
        out = {}
        for chunk in _chunks(list(docs), 500):
            marks = ",".join("?" * len(chunk))
            for doc, tkey, order in self.conn.execute(
                f"SELECT doc, thread_key, thread_order FROM docs "
                f"WHERE doc IN ({marks}) AND thread_key IS NOT NULL AND {_LIVE}",
                chunk,
            ):
                out[doc] = (tkey, order)
        return out

    def _thread_neighbours(self, rows: dict[int, tuple[str, str]], result: dict[int, list[int]]) -> None:
        by_thread: dict[str, list[int]] = {}
        for doc, (tkey, _) in rows.items():
            by_thread.setdefault(tkey, []).append(doc)
        for tkey, members in by_thread.items():
            if (
                len(members) > 16
                and len(members) * 4
                >= self.conn.execute(f"SELECT count(*) FROM docs WHERE thread_key=? AND {_LIVE}", (tkey,)).fetchone()[0]
            ):
                # much of the thread (a conversation ingested at once): read it once, in order
                ordered = [
                    d
                    for (d,) in self.conn.execute(
                        f"SELECT doc FROM docs WHERE thread_key=? AND {_LIVE} ORDER BY thread_order, doc", (tkey,)
                    )
                ]
                position = {d: i for i, d in enumerate(ordered)}
                for doc in members:
                    i = position[doc]
                    result[doc] += [ordered[j] for j in (i - 1, i + 1) if 0 <= j < len(ordered)]
                continue
            for doc in members:
                order = rows[doc][1]
                for op, direction in (("<", "DESC"), (">", "ASC")):
                    found = self.conn.execute(
                        f"SELECT doc FROM docs WHERE thread_key=? AND {_LIVE} AND (thread_order, doc) {op} (?, ?) "
                        f"ORDER BY thread_order {direction}, doc {direction} LIMIT 1",
                        (tkey, order, doc),
                    ).fetchone()
                    if found:
                        result[doc].append(found[0])
