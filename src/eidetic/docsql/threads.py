"""Conversation-thread neighbours in the docs table, as ``index.context`` defines them: the
active members of one thread (``thread_key``, which includes the partition) in ``thread_order``
then doc order; a member's context window is the ``BEFORE`` members before it and the ``AFTER``
after it. Both keyword indexes (tantivy, and the postgres postings) quote the window's texts in
a member's context, so a change to a member re-indexes the members whose window holds it (the
``AFTER`` before it and the ``BEFORE`` after it); these queries say which they are."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..index.context import AFTER, BEFORE
from . import Source
from .dialect import every

WHOLE_THREAD = 16  # more changed members than this, and a quarter of their thread: read it in order


class Threads:
    """Finds neighbours (inside the caller's transaction, when there is one)."""

    def __init__(self, source: Source) -> None:
        self._source = source

    def _live(self, alias: str) -> str:
        """Records that may lend context: active, and the served copy of their id."""
        return every(self._source.dialect.served(alias), f"{alias}.lifecycle = 'active'")

    def of(self, docs: Iterable[int]) -> dict[int, list[int]]:
        """Each active thread member's context window (none for a member alone in its thread)."""
        return self._around(docs, BEFORE, AFTER)

    def _around(self, docs: Iterable[int], before: int, after: int) -> dict[int, list[int]]:
        """The live members up to ``before`` places before each active thread member and up to
        ``after`` places after it."""
        dialect, conn = self._source.dialect, self._source.conn
        threads: dict[str, list[int]] = {}
        for condition, params in dialect.one_of("d.doc", list(docs)):
            for doc, tkey in conn.execute(
                f"SELECT d.doc, d.thread_key FROM {dialect.table} d "
                f"WHERE {condition} AND d.thread_key IS NOT NULL AND {self._live('d')}",
                params,
            ):
                threads.setdefault(tkey, []).append(doc)
        result: dict[int, list[int]] = {}
        probed: list[int] = []
        for tkey, members in threads.items():
            if len(members) > WHOLE_THREAD and 4 * len(members) >= self._size(tkey):
                result.update(self._in_order(tkey, members, before, after))  # a conversation ingested at once
            else:
                probed += members
        for condition, params in dialect.one_of("d.doc", probed):
            result.update(self.flanking(f"{dialect.table} d WHERE {condition}", params, before, after))
        return result

    def flanking(self, places: str, params: list[Any], before: int, after: int) -> dict[int, list[int]]:
        """The live members up to ``before`` places before and ``after`` places after each place
        in its thread, nearest first on each side. ``places``: what follows FROM, a table ``d``
        with columns doc, thread_key and thread_order (the docs table, or a log of dropped docs,
        whose quoting members are those around the gap they left)."""
        dialect = self._source.dialect
        order, here = dialect.ordered("n.thread_order"), dialect.ordered("d.thread_order")

        def nearest(op: str, direction: str, skip: int) -> str:
            return (
                f"(SELECT n.doc FROM {dialect.table} n WHERE n.thread_key = d.thread_key AND {self._live('n')} "
                f"AND ({order}, n.doc) {op} ({here}, d.doc) ORDER BY {order} {direction}, n.doc {direction} "
                f"LIMIT 1 OFFSET {skip})"
            )

        columns = [nearest("<", "DESC", k) for k in range(before)] + [nearest(">", "ASC", k) for k in range(after)]
        if not columns:
            return {}
        rows = self._source.conn.execute(f"SELECT d.doc, {', '.join(columns)} FROM {places}", params)
        return {doc: [n for n in found if n is not None] for doc, *found in rows}

    def _size(self, tkey: str) -> int:
        dialect = self._source.dialect
        return self._source.conn.execute(
            f"SELECT count(*) FROM {dialect.table} d WHERE d.thread_key = {dialect.mark} AND {self._live('d')}", [tkey]
        ).fetchone()[0]

    def _in_order(self, tkey: str, members: list[int], before: int, after: int) -> dict[int, list[int]]:
        """The members' windows from one ordered read of their whole thread."""
        dialect = self._source.dialect
        ordered = [
            doc
            for (doc,) in self._source.conn.execute(
                f"SELECT d.doc FROM {dialect.table} d WHERE d.thread_key = {dialect.mark} AND {self._live('d')} "
                f"ORDER BY {dialect.ordered('d.thread_order')}, d.doc",
                [tkey],
            )
        ]
        position = {doc: i for i, doc in enumerate(ordered)}
        return {
            doc: [
                ordered[j]
                for j in [
                    *range(position[doc] - 1, position[doc] - before - 1, -1),
                    *range(position[doc] + 1, position[doc] + after + 1),
                ]
                if 0 <= j < len(ordered)
            ]
            for doc in members
        }

    def quoting(self, docs: list[int]) -> set[int]:
        """The docs whose context quotes any of ``docs`` (not themselves): re-indexed once they go."""
        return {n for ns in self._quoters(docs).values() for n in ns} - set(docs)

    def _quoters(self, docs: Iterable[int]) -> dict[int, list[int]]:
        """Each member's quoters: the windows holding a member are those of the ``AFTER``
        members before it and the ``BEFORE`` after it."""
        return self._around(docs, AFTER, BEFORE)

    def spread(self, docs: Iterable[int], moved: Iterable[int]) -> tuple[list[int], dict[int, list[int]]]:
        """The docs whose keyword entries change with ``docs`` (``moved``: those of them added
        or re-elected, which the windows around them now quote), and each one's window."""
        todo = set(docs).union(*self._quoters(moved).values())
        return sorted(todo), self.of(todo)
