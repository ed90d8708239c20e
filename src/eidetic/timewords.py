"""A time named in a question ("last week", "yesterday", "in March 2023", "two days ago", "since
Monday", "2023-03-01"), as the window of time it means relative to the query's ``now``.

Which words may name a time is a short pattern here (month and weekday names, "ago", "last
...", ISO dates, a year after "in"); what they mean is the ``dateparser`` library's reading
of them, with the unit it read ("last week": a week) widening the date to a window: the day,
the calendar week (Monday first), the month or the year. "since X" runs from X to ``now``.
Only the first time named counts. A month name alone must look like one ("in May", "May 3",
"May 2023"): "what may help" names no time. dateparser costs ~0.4 s to import, so it is
imported only when the pattern finds a candidate.

The time is a condition on the records, not words to match: :func:`read_question` also gives the
question without it, for keyword and semantic search ("last week" would find "this week").
Windows are held inside the calendar (years 1 to 9999); a time past it is left as words, with a
warning. The date flags take the same words, and durations ("7d"): :func:`flag_moment`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from .timeutil import format_ts, parse_ts


class Times(Protocol):
    """A record's two clocks as the blend sees them (ISO text or None)."""

    @property
    def created(self) -> str | None: ...
    @property
    def occurred(self) -> str | None: ...
    @property
    def valid_from(self) -> str | None: ...
    @property
    def valid_until(self) -> str | None: ...


@dataclass(frozen=True)
class TimeWindow:
    """``start`` <= t < ``end`` (UTC); ``phrase``: the words of the query that named it."""

    phrase: str
    start: datetime
    end: datetime

    def holds(self, when: str | None) -> bool:
        """Whether a record's timestamp (ISO text, maybe "date-unknown") falls inside."""
        moment = parse_ts(when)
        return moment is not None and self.start <= moment < self.end

    def overlaps(self, valid_from: str | None, valid_until: str | None) -> bool:
        """Whether a validity interval (``valid_until`` excluded) shares a moment with the
        window; False when neither bound is given (it says nothing about time)."""
        if valid_from is None and valid_until is None:
            return False
        start, end = parse_ts(valid_from), parse_ts(valid_until)
        return (start is None or start < self.end) and (end is None or end > self.start)

    def matches(self, times: Times) -> bool:
        """Whether a record is of the window's time, by either clock."""
        return (
            self.holds(times.created)
            or self.holds(times.occurred)
            or self.overlaps(times.valid_from, times.valid_until)
        )

    def to_dict(self, mode: str, searched: str) -> dict[str, Any]:
        """The window as a result shows it; ``searched``: the words searched without the phrase."""
        shown = {"phrase": self.phrase, "start": format_ts(self.start), "end": format_ts(self.end), "mode": mode}
        return shown | {"searched": searched}


_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_SHORT_MONTHS = "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBER = r"\d{1,3}(?:[ ,]\d{3})+|\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+few|a\s+couple\s+of"
_UNIT = r"days?|weeks?|months?|years?"
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
_MONTH = rf"(?:{_MONTHS}|(?:{_SHORT_MONTHS})\.?)"
_DATE = (
    rf"(?:{_ORDINAL}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?"  # 24 October 2023, 3rd of May
    rf"|{_MONTH}\s+{_ORDINAL}(?:,?\s+\d{{4}})?"  # October 24, 2023
    rf"|{_MONTH},?\s+\d{{4}})"  # March 2023
)
_CANDIDATES = re.compile(
    rf"""\b(?P<since>since\s+)?(?P<phrase>
        \d{{4}}-\d{{2}}(?:-\d{{2}})?                                  # ISO date or month
      | {_DATE}
      | (?:yesterday|today|tonight)
      | (?:last|this|past|previous)\s+(?:week|month|year|{_DAYS})
      | (?:{_NUMBER})\s+(?:{_UNIT})\s+ago
      | (?<=\bin\s)(?:{_MONTHS})\b                                    # in May
      | (?<=\bin\s)(?:19|20)\d{{2}}                                   # in 2019
      | (?<=\bon\s)(?:{_DAYS}) | (?<=\bsince\s)(?:{_DAYS})              # on Monday, since Monday
      | (?<=\bsince\s)(?:{_MONTHS}|(?:19|20)\d{{2}})                  # since March, since 2019
    )\b""",
    re.IGNORECASE | re.VERBOSE,
)
FIRST = datetime.min.replace(tzinfo=UTC)  # the calendar's ends, where windows are held
LAST = datetime.max.replace(tzinfo=UTC)
MAX_QUERY_CHARS = 2000  # longer texts are not questions; they are searched without a time
# a word that only ties the time to the question ("decided in May", "notes from last week"):
# it goes with the time, so the words left read as a question of their own
_LEAD = re.compile(r"\b(?:in|on|during|from|over|of)\s+$", re.IGNORECASE)
_GROUPED = re.compile(r"(?<=\d)[ ,](?=\d{3}\b)")  # "10 000 000 years ago"
_NUMERIC_DATE = re.compile(r"\s*[+-]?\d+[-/.]\d")  # "2026-13-01", "10000-01-01": a bad date, not words
MAX_FLAG_CHARS = 100  # a date flag is a few words
_BARE_NUMBER = re.compile(r"\s*[+-]?\d+\s*")
_YEAR = re.compile(r"\s*\d{4}\s*")
_UNITS = {"h": "hours", "d": "days", "w": "weeks", "mo": "months", "y": "years"}
_UNITS |= {f"{word}{plural}": word + "s" for word in ("hour", "day", "week", "month", "year") for plural in ("", "s")}
_DURATION = re.compile(
    rf"(?P<count>\d{{1,3}}(?:[ ,]\d{{3}})+|\d+)\s*(?P<unit>{'|'.join(sorted(_UNITS, key=len, reverse=True))})(?:\s+ago)?",
    re.IGNORECASE,
)
_SPACED = re.compile(r"\s+([?!.,;:])")  # "decide ?" once the time between went
_TAIL = re.compile(r"^(?:'s|\u2019s)\b", re.IGNORECASE)  # "yesterday's standup"


@dataclass(frozen=True)
class TimeQuestion:
    """A question split in two: the window its time words name (None: none named) and the
    words left for keyword and semantic search, which the time words would only blur."""

    window: TimeWindow | None
    words: str
    warnings: tuple[str, ...] = ()


def read_question(text: str, now: datetime) -> TimeQuestion:
    """The first time ``text`` names, relative to ``now``, and ``text`` without it. A window
    reaching past the calendar is held at its ends ("9999-12-31" ends at its last moment); a
    time wholly beyond it ("10 000 000 years ago") is named in a warning and left in the words."""
    warnings: list[str] = []
    for match in _CANDIDATES.finditer(text[:MAX_QUERY_CHARS]):
        phrase = match.group("phrase")
        try:
            found = _read(phrase, now)
        except (OverflowError, ValueError):  # dateparser or the window's arithmetic left the calendar
            warnings.append(f"{match.group(0).strip()!r} is beyond the calendar (years 1 to 9999): searched as words")
            continue
        if found is None:
            continue
        start, end = found
        if match.group("since"):
            window = TimeWindow(match.group(0).strip(), start, max(end, now))
        else:
            window = TimeWindow(phrase, start, end)
        return TimeQuestion(window, _without(text, match.start(), match.end()), tuple(warnings))
    return TimeQuestion(None, text, tuple(warnings))


def window_in(text: str, now: datetime) -> TimeWindow | None:
    """The window the first time named in ``text`` means, relative to ``now``; None if none."""
    return read_question(text, now).window


def flag_moment(value: str, now: datetime, *, end: bool) -> datetime | None:
    """The moment a date flag's words name (``--since``, ``--until``, ``--as-of``), relative to
    ``now``: a duration back from it ("7d", "12h", "2w", "3 months") is that exact moment; named
    time ("yesterday", "last monday", "last month", "March 2026") is the window it means, its
    first moment (``end`` False) or its last. A duration beyond the calendar is its first
    moment. A number alone is a year only with four digits ("2019"): dateparser would read
    "5", "-5" or "13" as a month or a day, a guess, not a date. None when the words name no
    time (an ISO date is the caller's to read first)."""
    if _NUMERIC_DATE.match(value):  # an ISO date the caller could not read: wrong, not words
        return None
    if _BARE_NUMBER.fullmatch(value) and not _YEAR.fullmatch(value):
        return None
    duration = _DURATION.fullmatch(value.strip())
    try:
        if duration is not None:
            count, unit = _GROUPED.sub("", duration["count"]), _UNITS[duration["unit"].lower()]
            data = _parser(now, exact=True).get_date_data(f"{count} {unit} ago")
            if data.date_obj is None:  # too many units back for dateparser
                return FIRST
            return data.date_obj.replace(tzinfo=UTC)
        if len(value) > MAX_FLAG_CHARS:
            return None
        found = _read(value, now)
    except (OverflowError, ValueError):
        return FIRST
    if found is None:
        return None
    start, stop = found
    return start if not end else stop if stop == LAST else stop - timedelta(microseconds=1)


def _without(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` taken out, with the word tying it in and a possessive."""
    before, after = text[:start], text[end:]
    before = _LEAD.sub("", before)
    after = _TAIL.sub("", after)
    words = " ".join(f"{before.rstrip()} {after.lstrip()}".split())
    return _SPACED.sub(r"\1", words)


def _read(phrase: str, now: datetime) -> tuple[datetime, datetime] | None:
    """dateparser's date and unit for ``phrase``, widened to the window the unit spans."""
    data = _parser(now).get_date_data(_GROUPED.sub("", phrase))
    if data.date_obj is None:
        if phrase.lower().endswith("ago"):  # a count dateparser cannot go back by
            raise OverflowError(phrase)
        return None
    day = data.date_obj.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=UTC)
    period = data.period or "day"
    if period == "week":
        start = _moved(day, -day.weekday())
        return start, _moved(start, 7)
    if period == "month":
        start = day.replace(day=1)
        return start, _moved(start, 32).replace(day=1) if start.year < 9999 or start.month < 12 else LAST
    if period == "year":
        start = day.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1) if start.year < 9999 else LAST
    return day, _moved(day, 1)


def _moved(day: datetime, days: int) -> datetime:
    """``day`` plus ``days``, held at the calendar's first or last moment."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return FIRST if days < 0 else LAST


def _parser(now: datetime, exact: bool = False) -> Any:
    """dateparser reading relative to ``now``; ``exact``: a count of months or years back keeps
    the day of the month (3 months before the 22nd is a 22nd), else a month means its 1st."""
    from dateparser.date import DateDataParser

    base = now.astimezone(UTC).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    if not exact:
        settings["PREFER_DAY_OF_MONTH"] = "first"
    return DateDataParser(languages=["en"], settings=settings)
