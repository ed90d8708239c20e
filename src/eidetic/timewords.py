"""A time named in a question ("last week", "yesterday", "in March 2023", "two days ago", "since
Monday", "2023-03-01"), as the window of time it means relative to the query's ``now``.

Which words may name a time is a short pattern here (month and weekday names, "ago", "last
...", ISO dates, a year after "in"); what they mean is the ``dateparser`` library's reading
of them, with the unit it read ("last week": a week) widening the date to a window: the day,
the calendar week (Monday first), the month or the year. "since X" runs from X to ``now``.
Only the first time named counts. A month name alone must look like one ("in May", "May 3",
"May 2023"): "what may help" names no time. dateparser costs ~0.4 s to import, so it is
imported only when the pattern finds a candidate.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from .ranking.when import TimeWindow

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_SHORT_MONTHS = "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBER = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+few|a\s+couple\s+of"
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
MAX_QUERY_CHARS = 2000  # longer texts are not questions; they are searched without a time


def window_in(text: str, now: datetime) -> TimeWindow | None:
    """The window the first time named in ``text`` means, relative to ``now``; None if none."""
    for match in _CANDIDATES.finditer(text[:MAX_QUERY_CHARS]):
        phrase = match.group("phrase")
        found = _read(phrase, now)
        if found is None:
            continue
        start, end = found
        if match.group("since"):
            return TimeWindow(match.group(0).strip(), start, max(end, now))
        return TimeWindow(phrase, start, end)
    return None


def _read(phrase: str, now: datetime) -> tuple[datetime, datetime] | None:
    """dateparser's date and unit for ``phrase``, widened to the window the unit spans."""
    data = _parser(now).get_date_data(phrase)
    if data.date_obj is None:
        return None
    day = data.date_obj.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=timezone.utc)
    period = data.period or "day"
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return start, start + timedelta(days=7)
    if period == "month":
        start = day.replace(day=1)
        return start, (start + timedelta(days=32)).replace(day=1)
    if period == "year":
        start = day.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1)
    return day, day + timedelta(days=1)


def _parser(now: datetime) -> Any:
    from dateparser.date import DateDataParser

    base = now.astimezone(timezone.utc).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "PREFER_DAY_OF_MONTH": "first"}
    return DateDataParser(languages=["en"], settings=settings)
