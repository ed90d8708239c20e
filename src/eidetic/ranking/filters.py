"""Record filters: metadata facets with typed values and ranges, source, type and date windows.

``--filter priority=3`` matches the number 3 (and 3.0, and the string "3"); ``--filter
done=true`` matches the boolean; ``KEY>=VALUE`` / ``KEY<=VALUE`` compare numbers with numbers
and ISO dates with ISO dates. A value of another type never matches a range. Dotted keys reach
into nested metadata (``--filter author.team=core``).

The SQL backends apply source, types and the date window in SQL (``docsql.admission``) and the
metadata facets here, on the rows SQL admits: their typed comparisons have this one definition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import option_error
from ..record_intake import load_json
from ..timeutil import now_utc, parse_ts, to_epoch

_MISSING = object()


@dataclass(frozen=True)
class MetaFilter:
    key: str
    op: str  # "=", ">=", "<="
    raw: str
    value: Any

    def matches(self, metadata: dict[str, Any]) -> bool:
        found = _lookup(metadata, self.key)
        if found is _MISSING:
            return False
        if isinstance(found, list) and self.op == "=":
            return any(self._equal(item) for item in found)
        if self.op == "=":
            return self._equal(found)
        return self._in_range(found)

    def _equal(self, found: Any) -> bool:
        if isinstance(found, str):
            return found == self.raw or (isinstance(self.value, str) and found == self.value)
        if isinstance(found, bool) or isinstance(self.value, bool):
            return isinstance(found, bool) and isinstance(self.value, bool) and found == self.value
        if _is_number(found) and _is_number(self.value):
            return float(found) == float(self.value)
        return found == self.value

    def _in_range(self, found: Any) -> bool:
        if _is_number(found) and _is_number(self.value):
            return _compare(float(found), self.op, float(self.value))
        left, right = _as_date(found), _as_date(self.raw)
        return left is not None and right is not None and _compare(left, self.op, right)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _as_date(value: Any) -> datetime | None:
    return parse_ts(value) if isinstance(value, str) else None


def _lookup(metadata: dict[str, Any], key: str) -> Any:
    if key in metadata:
        return metadata[key]
    node: Any = metadata
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def parse_filter(spec: str) -> MetaFilter:
    for op in (">=", "<="):
        key, sep, raw = spec.partition(op)
        if sep:
            break
    else:
        key, sep, raw = spec.partition("=")
        op = "="
    key = key.strip()
    if not sep or not key:
        raise option_error(
            "filters",
            f"entry {spec!r} is malformed",
            "a filter is KEY=VALUE, KEY>=VALUE or KEY<=VALUE",
            example=["source=docs"],
        )
    if op != "=":
        number = _number(raw)
        if number is None and parse_ts(raw.strip()) is None:
            raise option_error(
                "filters",
                f"entry {spec!r} compares neither a number nor an ISO date",
                example=["priority>=2", "due<=2026-12-31"],
            )
        return MetaFilter(key, op, raw.strip(), number if number is not None else raw.strip())
    return MetaFilter(key, op, raw, typed_value(raw))


def _compare(left: Any, op: str, right: Any) -> bool:
    """``>=`` or ``<=`` between two numbers or two dates."""
    return bool(left >= right) if op == ">=" else bool(left <= right)


def _number(raw: str) -> float | int | None:
    value = typed_value(raw.strip())
    return value if _is_number(value) else None


def typed_value(raw: str) -> Any:
    """JSON scalars keep their type (3, 2.5, true, null, "quoted"); anything else is a string.
    How ``--filter`` values and ``remember --meta`` values are read, so they always agree."""
    try:
        value = load_json(raw)
    except ValueError:
        return raw
    return value if not isinstance(value, (dict, list)) else raw


@dataclass(frozen=True)
class Filters:
    """Everything that narrows a recall besides scope and lifecycle (see ``access``)."""

    meta: tuple[MetaFilter, ...] = ()
    source: str | None = None
    types: tuple[str, ...] = ()
    since: float | None = None  # epoch seconds, on ``created``
    until: float | None = None

    @classmethod
    def build(
        cls,
        filters: list[str] | None = None,
        source: str | None = None,
        types: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        now: datetime | None = None,
    ) -> Filters:
        """The filters of a query; ``now``: the moment "7d" or "last monday" count back from."""
        for option, values in (
            ("filters", filters or []),
            ("source", [source]),
            ("types", types or []),
            ("since", [since]),
            ("until", [until]),
        ):
            if any(isinstance(value, str) and "\x00" in value for value in values):
                raise option_error(option, "contains a NUL character", "no record can hold one: remove it")
        meta = [parse_filter(spec) for spec in (filters or [])]
        for item in meta:
            if item.key == "source" and source is not None and not (item.op == "=" and item._equal(source)):
                raise option_error(
                    "source",
                    f"conflicts with a filter: source {source!r}, filter source={item.raw}",
                    "give the source once",
                    example=source,
                )
        return cls(
            tuple(meta),
            source,
            tuple(types or ()),
            date_bound(since, "since", now),
            date_bound(until, "until", now, end=True),
        )

    def matches_meta(self, metadata: dict[str, Any]) -> bool:
        return all(item.matches(metadata) for item in self.meta)

    def matches_source(self, metadata: dict[str, Any]) -> bool:
        return self.source is None or metadata.get("source") == self.source


def date_bound(value: str | None, option: str, now: datetime | None, end: bool = False) -> float | None:
    """A date flag as epoch seconds: an ISO date (a bare date includes that whole day), or the
    words or duration ``timewords.flag_moment`` reads; an option error naming the forms else."""
    if value is None:
        return None
    epoch = to_epoch(value)
    if epoch is None:
        from ..timewords import flag_moment

        moment = flag_moment(value, now or now_utc(), end=end)
        if moment is None:
            raise option_error(
                option,
                f"is not a date: {value!r}",
                "an ISO date, a duration back from now (7d, 12h, 2w, 3mo, 1y) or words (yesterday, last monday)",
                example="2026-11-01",
            )
        return moment.timestamp()
    if end and len(value.strip()) == 10:  # a bare date includes that whole day
        epoch += 86400 - 1e-6
    return epoch
