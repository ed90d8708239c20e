"""One recall, as a value: :class:`RecallQuery` owns the modes, every default and all validation.

The CLI (``eidetic recall``), ``memory-recall`` and the MCP server each build one and
:meth:`eidetic.Memory.recall` runs it. The options an interface exposes are read from the
fields' metadata (``help``, the CLI ``flag``), so adding a recall option means adding a field
here; the interfaces pick it up.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from .clocks import as_of_moment
from .errors import option_error, user_error
from .ranking import relevance
from .ranking.access import Access
from .ranking.fields import DEFAULT_MIN_SCORE, DEFAULT_STALE_MONTHS
from .ranking.filters import Filters
from .ranking.when import TIME_MODES
from .settings import MODES, Settings
from .timeutil import now_utc


def option(
    default: Any,
    help: str,
    *,
    flag: str | None = None,
    metavar: str | None = None,
    exposed: bool = True,
    choices: tuple[str, ...] | None = None,
    for_agents: bool = True,
) -> Any:
    """A query field with what an interface needs to offer it: help text, the CLI flag (default
    ``--`` plus the field name with dashes), whether interfaces show it at all, its choices, and
    whether the MCP tool's schema lists it (``for_agents``: every schema an agent reads costs it
    context on every turn, so options agents rarely need are taken but not listed)."""
    return field(
        default=default,
        metadata={
            "help": help,
            "flag": flag,
            "metavar": metavar,
            "exposed": exposed,
            "choices": choices,
            "for_agents": for_agents,
        },
    )


@dataclass(frozen=True)
class RecallQuery:
    """Everything a recall asks: what to find, how to rank it, who asks, what to leave out."""

    text: str = option("", "what to look for (fields mode: may be empty with types, to browse)")
    mode: str = option(
        "hybrid",
        "exact substring, BM25 keyword, vector, their blend (default), or the "
        "transparent fields ranking of markdown memory folders",
    )
    top_k: int = option(5, "number of primary hits, >= 1 (default 5)")
    alpha: float = option(0.5, "hybrid weight of the semantic signal, 0..1 (default 0.5)", for_agents=False)
    case_sensitive: bool = option(False, "exact mode: match case", for_agents=False)
    filters: tuple[str, ...] = option(
        (), "metadata facet KEY=VALUE (typed), KEY>=V, KEY<=V (repeatable)", flag="--filter", metavar="KEY=VALUE"
    )
    source: str | None = option(None, "only records whose metadata.source is this", for_agents=False)
    types: tuple[str, ...] = option((), "only records of this type (repeatable)", flag="--type", metavar="TYPE")
    since: str | None = option(
        None, "only records created on or after this: an ISO date, 7d / 12h / 2w / 3mo / 1y back, or 'last monday'"
    )
    until: str | None = option(
        None, "only records created on or before this: an ISO date (all that day), a duration back, or 'last month'"
    )
    scope: str | None = option(None, "query scope name (default: default)")
    visibility: str | None = option(None, "public (default) or private: private also sees that scope's private records")
    scope_only: bool = option(False, "only records whose scope name is the query's", for_agents=False)
    include_shadowed: bool = option(False, "include superseded records", for_agents=False)
    include_archived: bool = option(False, "include archived records", for_agents=False)
    as_of: str | None = option(
        None,
        "answer as the store stood then: an ISO date (the end of that day, UTC), date-time, a duration "
        "back (30d) or words ('last month': its end); records recorded and valid then, in the lifecycle they had then",
        metavar="DATE",
    )
    min_score: float | None = option(
        None, f"drop hits scoring below this (fields mode: default {DEFAULT_MIN_SCORE})", for_agents=False
    )
    relevance_floor: str | float = option(
        "off",
        "keyword, approximate, hybrid: no hits unless the best one's raw evidence (cosine; BM25 per unit of "
        "the query's idf) reaches the calibrated floor, and none far below it: auto, off, or a line on its "
        "scale (1 = auto, higher is stricter) (default off)",
        metavar="auto|off|N",
    )
    judge_relevance: bool = option(
        False,
        "judge the hits against the calibrated floor even when the floor is off, dropping none: each hit "
        "says whether it is relevant, for a person to read (the CLI and the viewer ask for it)",
        exposed=False,
    )
    depth: int = option(1, "follow links/supersedes from the hits this many hops (default 1, 0 = none)")
    max_nodes: int = option(20, "at most this many linked records (default 20)", for_agents=False)
    stale_months: float = option(
        DEFAULT_STALE_MONTHS,
        f"fields mode: months over which the recency factor falls from 1.5 to 0.5 (default {DEFAULT_STALE_MONTHS:g})",
        for_agents=False,
    )
    explain: bool = option(False, "show how each score was computed", for_agents=False)
    record: bool = option(
        True,
        "count this recall in the records' usage (one asked at another now, or as of a moment, counts nothing)",
        flag="--no-record",
        for_agents=False,
    )
    time_words: str = option(
        "blend",
        "a time the query names ('last week', 'in March 2023'): rank records of that time higher "
        "(blend, default), keep only them (filter), or ignore it (off)",
        choices=TIME_MODES,
        for_agents=False,
    )
    now: datetime | None = option(
        None,
        "the moment the query is asked at, ISO (default: now): freshness and 'last week' count from it",
        for_agents=False,
    )

    def __post_init__(self) -> None:
        for name in ("filters", "types"):  # any iterable given; kept as a tuple (hashable, frozen)
            value = getattr(self, name)
            object.__setattr__(self, name, tuple(value) if value is not None else ())
        object.__setattr__(self, "relevance_floor", _floor_setting(self.relevance_floor))
        if self.now is not None:  # text from the CLI; a datetime, maybe naive (UTC), from Python or MCP
            object.__setattr__(self, "now", _moment(self.now))
        _check(self)

    @classmethod
    def configured(cls, text: str, settings: Settings, **options: Any) -> RecallQuery:
        """A query whose options left out (None) come from ``settings`` (a config file, the
        environment) where they set them, else from the query's own defaults."""
        given = {}
        for name, value in options.items():
            if value is None:
                value = getattr(settings, name, None)
            if value is not None or _FIELD_DEFAULTS[name] is None:
                given[name] = value
        return cls(text, **given)

    def with_access_defaults(self, settings: Settings) -> RecallQuery:
        """This query with the settings' scope and visibility where it names none."""
        return with_access_defaults(self, settings)

    @property
    def browse(self) -> bool:
        """A fields-mode listing of types, with no words to match."""
        return self.mode == "fields" and not self.text.strip() and bool(self.types)

    @property
    def floor_line(self) -> float | None:
        """The relevance floor's line (1.0: the calibrated floor), None when it is off."""
        return relevance.line_of(self.relevance_floor)

    def access(self) -> Access:
        return access_of(self, self.now)

    def filter_set(self) -> Filters:
        return filters_of(self)


_FIELD_DEFAULTS = {f.name: f.default for f in fields(RecallQuery)}
SELECTION = (
    "types",
    "filters",
    "source",
    "since",
    "until",
    "scope",
    "visibility",
    "scope_only",
    "include_shadowed",
    "include_archived",
    "as_of",
)


def access_of(query: Any, now: datetime | None = None) -> Access:
    """The access of a query (a recall or a listing): its scope, visibility, lifecycle flags and
    the moment it asks about (``as_of``, no later than ``now``)."""
    return Access.of(
        query.scope,
        query.visibility,
        scope_only=query.scope_only,
        include_shadowed=query.include_shadowed,
        include_archived=query.include_archived,
        as_of=as_of_of(query.as_of, now),
    )


def as_of_of(value: Any, now: datetime | None = None) -> datetime | None:
    """The moment ``--as-of`` names (``clocks.as_of_moment``), or None; an option error else."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return as_of_moment(value, now or now_utc())
        except ValueError:
            pass
    raise option_error(
        "as_of",
        f"is not a date: {value!r}",
        "an ISO date (the end of that day, UTC) or date-time, a duration back (7d, 1y) or words "
        "(last month: its end) ('eidetic explain time')",
        example="2026-03-01",
    )


def filters_of(query: Any) -> Filters:
    """The filters of a query; its date flags' words count back from its ``now``, if it has one."""
    now = getattr(query, "now", None)
    return Filters.build(list(query.filters), query.source, list(query.types), query.since, query.until, now)


def with_access_defaults(query: Any, settings: Settings) -> Any:
    """``query`` with the settings' scope and visibility where it names none."""
    return replace(
        query,
        scope=query.scope if query.scope is not None else settings.scope,
        visibility=query.visibility if query.visibility is not None else settings.visibility,
    )


def exposed_options() -> list[Any]:
    """The fields an interface offers (all but the query text), in order."""
    return [f for f in fields(RecallQuery) if f.metadata["exposed"] and f.name != "text"]


def flag_of(option: str) -> str:
    """The CLI flag of a query field (``top_k`` -> ``--top-k``, ``filters`` -> ``--filter``)."""
    known = {f.name: f.metadata["flag"] for f in fields(RecallQuery)}
    return known.get(option) or "--" + option.replace("_", "-")


def _check(query: RecallQuery) -> None:
    if query.mode not in MODES:
        raise option_error("mode", f"must be one of {', '.join(MODES)} (got {query.mode!r})", example="hybrid")
    if isinstance(query.top_k, bool) or not isinstance(query.top_k, int) or query.top_k < 1:
        raise option_error("top_k", f"must be an integer >= 1 (got {query.top_k!r})", example=5)
    if not isinstance(query.alpha, (int, float)) or not 0.0 <= query.alpha <= 1.0:
        raise option_error("alpha", f"must be between 0.0 and 1.0 (got {query.alpha!r})", example=0.5)
    for name in ("depth", "max_nodes"):
        value = getattr(query, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise option_error(name, f"must be an integer >= 0 (got {value!r})", example=1)
    check_stale_months(query.stale_months)
    if not isinstance(query.text, str) or not (query.text.strip() or query.browse):
        raise user_error(
            "the query is empty",
            "give the words or phrase to look for"
            + (" (or, in fields mode, only a type, to browse that type)" if query.mode == "fields" else ""),
        )
    if query.time_words not in TIME_MODES:
        raise option_error(
            "time_words", f"must be one of {', '.join(TIME_MODES)} (got {query.time_words!r})", example="blend"
        )
    if "\x00" in query.text:
        raise user_error("the query contains a NUL character", "no record can hold one: remove it")
    query.access()  # scope and visibility are valid
    query.filter_set()  # so are the filters


def _floor_setting(value: Any) -> str | float:
    """``auto``, ``off`` or a number >= 0; text that is a number (a command line's) becomes it."""
    try:
        line = relevance.line_of(value)
    except (TypeError, ValueError):
        raise option_error(
            "relevance_floor", f"must be auto, off or a number >= 0 (got {value!r})", example="auto"
        ) from None
    if isinstance(value, str) and value.strip().lower() in relevance.SETTINGS:
        return value.strip().lower()
    return line if line is not None else "off"


def _moment(value: object) -> datetime:
    from .timeutil import parse_ts

    moment = parse_ts(value) if isinstance(value, (str, datetime)) else None
    if moment is None:
        raise option_error(
            "now",
            f"must be an ISO date or date and time (got {value!r})",
            "a moment of years 1 to 9999 in UTC",
            example="2024-03-01T12:00",
        )
    return moment


def check_stale_months(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise option_error("stale_months", f"must be a number > 0 (got {value!r})", example=6)
