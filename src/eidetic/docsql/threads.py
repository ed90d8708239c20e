"""Conversation-thread members in the docs table, as ``ranking.threads`` defines them, for the
context recall adds at query time (``ranking.windows``): where a record sits in its thread, and
which live members sit just before and after a place in a thread. Recall asks every store of
the union the same, so a window may take its members from several stores and partitions."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

from ..ranking.access import Access, partitions_in_reach
from ..ranking.threads import named, thread_key_of
from ..ranking.windows import Member, Place
from . import Source
from .dialect import every

Row = tuple[str, str, str, int]  # a member as the docs table holds it: (thread key, order key, id, doc)
WHOLE_THREAD = 16  # places in one thread from which the thread is read in order, once


class Threads:
    """Finds thread members (inside the caller's transaction, when there is one)."""

    def __init__(self, source: Source) -> None:
        self._source = source

    def _live(self, alias: str) -> str:
        """Records that may lend context: active, and the served copy of their id."""
        return every(self._source.dialect.served(alias), f"{alias}.lifecycle = 'active'")

    def places(self, docs: Iterable[int]) -> dict[int, Member]:
        """The docs that are live thread members, each with its place (its thread by name)."""
        return {doc: named(row) for doc, row in self._rows(docs).items()}

    def around(self, places: Sequence[Place], access: Access, span: int) -> list[Member]:
        """The live members in ``access``'s partitions up to ``span`` places before and after
        each (thread, order key, id) place, their threads by name: one thread of one name in
        every partition in reach."""
        keys = partitions_in_reach(access.scope)
        probes = [(thread_key_of(key, thread), order, rid) for thread, order, rid in places for key in keys]
        return [named(row) for row in self._around(probes, span)]

    def _rows(self, docs: Iterable[int]) -> dict[int, Row]:
        """The docs that are live thread members, as the docs table holds them."""
        dialect, conn = self._source.dialect, self._source.conn
        found: dict[int, Row] = {}
        for condition, params in dialect.one_of("d.doc", list(docs)):
            for tkey, order, rid, doc in conn.execute(
                f"SELECT d.thread_key, d.thread_order, d.id, d.doc FROM {dialect.table} d "
                f"WHERE {condition} AND d.thread_key IS NOT NULL AND {self._live('d')}",
                params,
            ):
                found[doc] = (tkey, order, rid, doc)
        return found

    def _around(self, places: Sequence[tuple[str, str, str]], span: int) -> list[Row]:
        """The live members up to ``span`` places before and ``span`` after each (thread key,
        order key, id) place, in order of (order key, id): the place need not be in this store.
        A thread asked about in many places is read once, in order; otherwise each place's
        nearest members are looked up by the thread index."""
        if not places or span <= 0:
            return []
        by_thread: dict[str, list[tuple[str, str]]] = {}
        for tkey, order, rid in places:
            by_thread.setdefault(tkey, []).append((order, rid))
        found: dict[int, Row] = {}
        probed: list[tuple[str, str, str]] = []
        for tkey, around in by_thread.items():
            if len(around) > WHOLE_THREAD:
                members = self._thread(tkey)
                keys = [(member[1], member[2]) for member in members]
                for place in around:
                    at = bisect.bisect_left(keys, place)
                    start = at - span
                    end = at + span + (1 if at < len(keys) and keys[at] == place else 0)
                    found.update((member[3], member) for member in members[max(start, 0) : end])
            else:
                probed += [(tkey, order, rid) for order, rid in around]
        found.update(self._nearest(probed, span))
        return sorted(found.values(), key=lambda member: (member[1], member[2]))

    def _thread(self, tkey: str) -> list[Row]:
        """A thread's live members in order of (order key, id)."""
        dialect = self._source.dialect
        rows = self._source.conn.execute(
            f"SELECT d.thread_key, d.thread_order, d.id, d.doc FROM {dialect.table} d "
            f"WHERE d.thread_key = {dialect.mark} AND {self._live('d')} "
            f"ORDER BY {dialect.ordered('d.thread_order')}, {dialect.ordered('d.id')}",
            [tkey],
        )
        return [(tkey, order, rid, doc) for tkey, order, rid, doc in rows]

    def _nearest(self, places: list[tuple[str, str, str]], span: int) -> dict[int, Row]:
        """The live members up to ``span`` before and after each place, by the thread index."""
        if not places:
            return {}
        dialect, conn = self._source.dialect, self._source.conn
        order, here = dialect.ordered("n.thread_order"), dialect.ordered("p.ord")
        rid, here_id = dialect.ordered("n.id"), dialect.ordered("p.rid")

        def nearest(op: str, direction: str, skip: int) -> str:
            return (
                f"(SELECT n.doc FROM {dialect.table} n WHERE n.thread_key = p.tkey AND {self._live('n')} "
                f"AND ({order}, {rid}) {op} ({here}, {here_id}) ORDER BY {order} {direction}, {rid} {direction} "
                f"LIMIT 1 OFFSET {skip})"
            )

        columns = [nearest(op, way, k) for op, way in (("<", "DESC"), (">", "ASC")) for k in range(span)]
        docs: set[int] = set()
        for start in range(0, len(places), 150):  # 3 parameters a place: within SQLite's limit
            chunk = places[start : start + 150]
            values = ", ".join(f"({dialect.mark}, {dialect.mark}, {dialect.mark})" for _ in chunk)
            params: list[Any] = [value for place in chunk for value in place]
            rows = conn.execute(
                f"WITH p(tkey, ord, rid) AS (VALUES {values}) SELECT {', '.join(columns)} FROM p", params
            )
            docs.update(doc for row in rows for doc in row if doc is not None)
        return self._rows(docs)
