"""Conversation threads: which records form one, and in what order.

A chat turn rarely repeats the words of the question it answers; the turns around it usually
do, so a thread member is also found through its neighbours' words (``ranking.windows``, where
recall reads them at query time over every store and partition the caller may read).

Records whose metadata share a ``thread`` (or ``thread_id``, ``conversation_id``) value form a
thread, ordered by ``created`` and then by id in natural order (``turn-2`` before ``turn-10``); a
record's window is the ``BEFORE`` members before it and the ``AFTER`` after it. Links do not
lend context: recall already returns a hit's linked records as its traversal bundle, and a
linked record turning into a hit of its own would blur that tier (a chat ingester that links
turns should also name the thread). Only active records lend context, and only those the
caller may read: another scope's private turns never do.

This module holds the definitions (pure); the SQL that finds thread members, in either SQL
engine, is ``docsql.threads``.
"""

from __future__ import annotations

import re
from typing import Any

from .access import partition_of

THREAD_KEYS = ("thread", "thread_id", "conversation_id")
# A member's window: the two records before it and the one after. A reply answers what came
# just before it, often two turns back ("What concert was it?" sits between a question and its
# answer), so the window reaches further back than forward; on LoCoMo this beat one either side
# (docs/benchmarks.md, "Choosing the ranking defaults").
BEFORE, AFTER = 2, 1
_EPOCH_OFFSET = 1e12  # keeps order keys of dates before 1970 sortable as text


def thread_of(metadata: dict[str, Any]) -> str | None:
    """The conversation a record belongs to, from its metadata (first key present)."""
    for key in THREAD_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


def thread_key(visibility: str, scope: str, thread: str | None) -> str | None:
    """A member's thread key in the docs table: the thread per partition, so the members a
    caller may read are found by one index range per partition in reach (recall joins them by
    the thread's name, ``named``)."""
    return None if thread is None else thread_key_of(partition_of(visibility, scope), thread)


def thread_key_of(partition: str, thread: str) -> str:
    """The thread key of ``thread`` in a partition (``ranking.access.partition_of``'s key)."""
    return f"{partition}\x1f{thread}"


def named(row: tuple[str, str, str, int]) -> tuple[str, str, str, int]:
    """A member row (thread key, order, id, doc) with its thread's name for its key: windows
    join members of one thread from every partition and store."""
    return (row[0].split("\x1f", 1)[1], row[1], row[2], row[3])


def order_key(created_ts: float | None, rid: str) -> str:
    """Sortable text: creation time, then the id with its numbers compared as numbers."""
    natural = re.sub(r"\d+", lambda m: f"{len(m.group().lstrip('0') or '0'):03d}{m.group().lstrip('0') or '0'}", rid)
    when = "" if created_ts is None else f"{created_ts + _EPOCH_OFFSET:020.6f}"
    return f"{when}\x1f{natural}"
