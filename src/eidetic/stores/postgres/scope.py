"""What a caller may see, in the postgres backend's terms: the ids of the visibility partitions
in reach (scope, lifecycle and filters as SQL are ``docsql.admission``, shared with sqlite)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...ranking.access import Access, partitions_in_reach

if TYPE_CHECKING:
    from .connection import Session


class Partitions:
    """Partition ids by key (``public``, ``private:<scope>``), cached: an id never changes once
    the partition is created."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._ids: dict[str, int] = {}

    def ids(self, keys: Iterable[str], create: bool) -> dict[str, int]:
        """The ids of the partitions ``keys`` that exist (all of them with ``create``)."""
        wanted = [key for key in set(keys) if key not in self._ids]
        if wanted and create:
            self._session.conn.execute(
                "INSERT INTO eidetic_partitions(key, visibility, scope) SELECT k, v, s FROM "
                "unnest(%s::text[], %s::text[], %s::text[]) AS t(k, v, s) ON CONFLICT (key) DO NOTHING",
                (
                    wanted,
                    ["public" if k == "public" else "private" for k in wanted],
                    [None if k == "public" else k[len("private:") :] for k in wanted],
                ),
            )
        if wanted:
            self._ids.update(
                self._session.conn.execute(
                    "SELECT key, part FROM eidetic_partitions WHERE key = ANY(%s)", (wanted,)
                ).fetchall()
            )
        return {key: self._ids[key] for key in keys if key in self._ids}

    def in_reach(self, access: Access) -> list[int]:
        """The ids of the existing partitions ``access`` may read."""
        return list(self.ids(partitions_in_reach(access.scope), create=False).values())
