"""Who may see what: the no-leak scope rule and the lifecycle filter, in one place.

Every read path (primary hits, traversal, overview, export) asks this module; both SQL
engines state the same rule as SQL in ``docsql.admission``. A public record is served to every query; a private record only to a query with the
same scope name and ``visibility=private``. ``scope_only`` further restricts results to the
query's own scope name. Shadowed and archived records are hidden unless asked for.

``as_of`` asks for the store as it stood at a moment (``clocks``): only records recorded by
then and valid then, judged by the lifecycle they had then (:meth:`Access.sees`), and shown as
they stood (:meth:`Access.view`). The SQL engines narrow in SQL and decide these rows in Python,
with the same functions (``docsql.admission``).

The same rule splits every store into partitions (``partition_of``): the public one, and one per
scope's private records; a caller reads only those in its reach (``partitions_in_reach``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import clocks
from ..records import DEFAULT_SCOPE, Record, Scope, check_scope


@dataclass(frozen=True)
class Access:
    scope: Scope = DEFAULT_SCOPE
    scope_only: bool = False
    include_shadowed: bool = False
    include_archived: bool = False
    # exactly these lifecycle states, when given (a listing by lifecycle); else active plus the
    # states the two flags add
    states: tuple[str, ...] = ()
    as_of: datetime | None = None  # the store as it stood then (``clocks``); None: as it is

    @classmethod
    def of(cls, scope: str | None = None, visibility: str | None = None, **flags: Any) -> Access:
        """The caller's access from a scope name and visibility as given (None: the defaults),
        validated."""
        return cls(check_scope(scope or DEFAULT_SCOPE.name, visibility or DEFAULT_SCOPE.visibility), **flags)

    def lifecycles(self) -> tuple[str, ...]:
        if self.states:
            return self.states
        states = ["active"]
        if self.include_shadowed:
            states.append("shadowed")
        if self.include_archived:
            states.append("archived")
        return tuple(states)

    def can_serve(self, record_scope: Scope) -> bool:
        """The no-leak rule alone (lifecycle aside)."""
        if self.scope_only and record_scope.name != self.scope.name:
            return False
        if record_scope.visibility == "public":
            return True
        return (
            record_scope.visibility == "private"
            and self.scope.visibility == "private"
            and record_scope.name == self.scope.name
        )

    def admits(self, record_scope: Scope, lifecycle: str) -> bool:
        """The scope rule and the lifecycle filter, for a record as it is now (``as_of`` aside)."""
        return self.can_serve(record_scope) and lifecycle in self.lifecycles()

    def sees(self, record: Record) -> bool:
        """Whether this caller may see ``record``: :meth:`admits`, or under ``as_of`` the same
        rule for the record as it stood then (not at all when it was not recorded or valid)."""
        if self.as_of is None:
            return self.admits(record.scope, record.lifecycle)
        if not self.can_serve(record.scope) or not clocks.recorded_by(record.created, self.as_of):
            return False
        if not clocks.valid_at(record.valid_from, record.valid_until, self.as_of):
            return False
        return clocks.lifecycle_at(record.lifecycle, record.history, self.as_of) in self.lifecycles()

    def view(self, record: Record) -> Record:
        """``record`` as this caller sees it: under ``as_of``, with the lifecycle and the history
        it had then; else as it is."""
        if self.as_of is None:
            return record
        return record.with_changes(
            lifecycle=clocks.lifecycle_at(record.lifecycle, record.history, self.as_of),
            history=clocks.up_to(record.history, self.as_of),
        )


def partitions_in_reach(scope: Scope) -> list[str]:
    """The partitions a caller of ``scope`` may search: the public one, and its own private one
    when it asks as private. Every backend's search uses it."""
    keys = ["public"]
    if scope.visibility == "private":
        keys.append(partition_of("private", scope.name))
    return keys


def partition_of(visibility: str, scope_name: str) -> str:
    """Which partition (a text index, a postgres partition id) holds a record: all public records
    share one; each scope's private records have their own. BM25 statistics (document frequencies, lengths) are per index, so
    a caller's scores depend only on records it may see: another scope's private records cannot
    shift them, not even in the order of public hits."""
    return "public" if visibility == "public" else f"private:{scope_name}"
