"""A listing of records, as a value: :class:`ListQuery` says which records (the same selection as
a recall: scope, lifecycle flags and filters, :class:`~eidetic.query.RecallQuery`'s own fields),
in what order and which page. ``eidetic list`` builds one from its flags and
:meth:`eidetic.Memory.list_records` runs it. A listing ranks nothing and is never counted as a
recall: it shows what is stored, not what a reader needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .errors import option_error
from .query import RecallQuery, access_of, filters_of, option, with_access_defaults
from .ranking.access import Access
from .ranking.filters import Filters
from .records import LIFECYCLES
from .settings import Settings

SORTS = ("updated", "created", "recalled", "name")
DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class Order:
    """How a store orders a listing. ``updated``: the last write (else ``created``); ``created``:
    creation time, unknown dates oldest; ``recalled``: recall count, then the last recall, then
    the last write; ``name``: the name, else the text's start, ASCII letters case-folded. Ties go
    by id, in the same direction, so pages never overlap."""

    sort: str = "updated"
    descending: bool = True


def _shared(name: str) -> Any:
    """A field of :class:`RecallQuery`, as it is there (default, help, flag)."""
    spec = next(f for f in fields(RecallQuery) if f.name == name)
    return field(default=spec.default, metadata=spec.metadata)


@dataclass(frozen=True)
class ListQuery:
    """Which records to list, in what order, which page."""

    types: tuple[str, ...] = _shared("types")
    filters: tuple[str, ...] = _shared("filters")
    source: str | None = _shared("source")
    since: str | None = _shared("since")
    until: str | None = _shared("until")
    scope: str | None = _shared("scope")
    visibility: str | None = _shared("visibility")
    scope_only: bool = _shared("scope_only")
    include_shadowed: bool = _shared("include_shadowed")
    include_archived: bool = _shared("include_archived")
    as_of: str | None = _shared("as_of")
    lifecycle: tuple[str, ...] = option(
        (),
        "only records in this lifecycle state: active, shadowed or archived (repeatable; "
        "default: active, plus what --include-shadowed and --include-archived add)",
        metavar="STATE",
    )
    sort: str = option(
        "updated",
        "order by: updated (default), created, recalled (most recalled first) or name (A to Z)",
        choices=SORTS,
    )
    reverse: bool = option(False, "reverse the order (oldest, least recalled or Z to A first)")
    limit: int = option(DEFAULT_LIMIT, f"at most this many records (default {DEFAULT_LIMIT})")
    offset: int = option(0, "skip this many first (for the next page)")

    def __post_init__(self) -> None:
        for name in ("filters", "types", "lifecycle"):
            value = getattr(self, name)
            object.__setattr__(self, name, tuple(value) if value is not None else ())
        wrong = [state for state in self.lifecycle if state not in LIFECYCLES]
        if wrong:
            raise option_error("lifecycle", f"must be {', '.join(LIFECYCLES)} (got {wrong[0]!r})", example=["archived"])
        if self.sort not in SORTS:
            raise option_error("sort", f"must be one of {', '.join(SORTS)} (got {self.sort!r})", example="updated")
        for name, least, example in (("limit", 1, DEFAULT_LIMIT), ("offset", 0, DEFAULT_LIMIT)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise option_error(name, f"must be an integer >= {least} (got {value!r})", example=example)
        self.access()  # scope and visibility are valid
        self.filter_set()  # so are the filters

    def order(self) -> Order:
        return Order(self.sort, (self.sort != "name") != self.reverse)

    def access(self) -> Access:
        return replace(access_of(self), states=tuple(dict.fromkeys(self.lifecycle)))

    def filter_set(self) -> Filters:
        return filters_of(self)

    def with_access_defaults(self, settings: Settings) -> ListQuery:
        return with_access_defaults(self, settings)


def list_options() -> list[Any]:
    """The fields ``eidetic list`` offers as flags, in order: all of them."""
    return list(fields(ListQuery))
