"""Timestamps: one parser and one formatter so every module agrees on what a date is.

Records carry ISO-8601 strings. Naive values are read as UTC; a bare date means midnight UTC.
``DATE_UNKNOWN`` marks a record with no known creation date (legacy imports): it is
age-neutral in the freshness signal and never archived by age.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

DATE_UNKNOWN = "date-unknown"


def now_utc() -> datetime:
    return datetime.now(UTC)


def format_ts(moment: datetime) -> str:
    """ISO-8601 in UTC with second precision, e.g. ``2026-11-30T08:59:12+00:00``."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def parse_ts(value: object) -> datetime | None:
    """Parse an ISO-8601 date or datetime (str, date or datetime); None when it is not one, or
    names no moment of the calendar in UTC (``9999-12-31T23:59:59-14:00`` is in year 10000
    there): every moment eidetic keeps can be written in UTC, compared and stored."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str) and value and value != DATE_UNKNOWN:
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        return None
    return moment


def to_epoch(value: object) -> float | None:
    moment = parse_ts(value)
    return moment.timestamp() if moment else None


def days_between(earlier: datetime, later: datetime) -> float:
    """Fractional days from ``earlier`` to ``later``, never negative (future dates count as 0)."""
    return max(0.0, (later - earlier).total_seconds() / 86400.0)
