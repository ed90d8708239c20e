"""Who may see what: the no-leak scope rule and the lifecycle filter, in one place.

Every read path (primary hits, traversal, overview, export) asks this module; both SQL
engines state the same rule as SQL in ``docsql.admission``. A public record is served to every query; a private record only to a query with the
same scope name and ``visibility=private``. ``scope_only`` further restricts results to the
query's own scope name. Shadowed and archived records are hidden unless asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..records import DEFAULT_SCOPE, Scope, check_scope


@dataclass(frozen=True)
class Access:
    scope: Scope = DEFAULT_SCOPE
    scope_only: bool = False
    include_shadowed: bool = False
    include_archived: bool = False
    # exactly these lifecycle states, when given (a listing by lifecycle); else active plus the
    # states the two flags add
    states: tuple[str, ...] = ()

    @classmethod
    def of(cls, scope: str | None = None, visibility: str | None = None, **flags: Any) -> "Access":
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
        return self.can_serve(record_scope) and lifecycle in self.lifecycles()
