"""A record's two clocks, and its lifecycle at any moment (``eidetic explain time``). Pure.

The *record clock* is when eidetic learnt and changed a record: ``created``, ``updated``, and
``history``, one dated entry per lifecycle change (``{at, from, to}``: forget, restore, a
supersede that shadowed it, a sweep). The *event clock* is what the record says about the world,
each optional: ``occurred`` (when what it tells happened) and ``valid_from`` / ``valid_until``
(when what it says holds; ``valid_until`` is the first moment it no longer does).

As of a moment D, a record was in the store when it was created by D (a record of unknown
creation date always was); its lifecycle then is the ``from`` of its first change after D, or
its lifecycle now when none came after D (a record without history has had its lifecycle since
it was created); and it was valid then when ``valid_from <= D < valid_until`` (an absent bound
is open). A superseded record's validity ends where it was superseded: its ``to: shadowed``
change. Nothing here imports the record model, so ``records`` can use it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from .timeutil import DATE_UNKNOWN, parse_ts

EVENT_FIELDS = ("occurred", "valid_from", "valid_until")
STATES = ("active", "shadowed", "archived")  # records.LIFECYCLES, which imports this module
MAX_CHANGES = 1000  # entries of one record's history: a hand edit cannot make a record unbounded


@dataclass(frozen=True)
class Change:
    """One lifecycle change: at ``at`` the record went from ``old`` to ``new``."""

    at: str
    old: str
    new: str

    def to_dict(self) -> dict[str, str]:
        return {"at": self.at, "from": self.old, "to": self.new}


History = tuple[Change, ...]


def check_moment(value: object, key: str) -> str | None:
    """``value`` if it is an ISO-8601 date or date-time (or None); ValueError naming ``key`` else."""
    if value is None:
        return None
    if isinstance(value, str) and parse_ts(value) is not None:
        return value
    raise ValueError(f"'{key}' is not an ISO-8601 date: {value!r}")


def check_interval(valid_from: str | None, valid_until: str | None) -> None:
    """A validity interval must not end before it starts."""
    start, end = parse_ts(valid_from), parse_ts(valid_until)
    if start is not None and end is not None and end < start:
        raise ValueError(f"'valid_until' ({valid_until}) is before 'valid_from' ({valid_from})")


def parse_history(value: object) -> History:
    """A history as a file or an import gives it (a list of ``{at, from, to}`` mappings), oldest
    first; ValueError saying what is wrong with it. Entries out of order are put in order."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError("'history' must be a list of {at, from, to} changes")
    if len(value) > MAX_CHANGES:
        raise ValueError(f"'history' holds more than {MAX_CHANGES} changes")
    changes = [_change(entry, number) for number, entry in enumerate(value, start=1)]
    return tuple(sorted(changes, key=lambda change: _moment(change.at)))


def _change(entry: object, number: int) -> Change:
    if not isinstance(entry, dict) or set(entry) != {"at", "from", "to"}:
        raise ValueError(f"'history' entry {number} must have exactly the keys at, from and to")
    at = entry["at"]
    if hasattr(at, "isoformat"):  # YAML reads an unquoted date as a date
        at = at.isoformat()
    if not isinstance(at, str) or parse_ts(at) is None:
        raise ValueError(f"'history' entry {number}: 'at' is not an ISO-8601 date: {at!r}")
    for key in ("from", "to"):
        if entry[key] not in STATES:
            raise ValueError(f"'history' entry {number}: '{key}' must be one of {', '.join(STATES)}")
    return Change(at, entry["from"], entry["to"])


def _moment(value: str) -> datetime:
    moment = parse_ts(value)
    assert moment is not None  # checked when the history was read
    return moment


def history_of_row(value: object) -> History:
    """The history of a docs-table row: JSON text (sqlite), decoded JSON (postgres) or NULL."""
    return parse_history(json.loads(value) if isinstance(value, str) else value)


def history_json(history: History) -> str | None:
    """How the docs table stores a history: JSON text, NULL (None) when there is none."""
    return json.dumps([change.to_dict() for change in history]) if history else None


def appended(history: History, old: str, new: str, at: str) -> History:
    """``history`` with one more change, from ``old`` to ``new`` at ``at``."""
    return (*history, Change(at, old, new))


def recorded_by(created: str | None, moment: datetime) -> bool:
    """Whether a record created at ``created`` was in the store at ``moment`` (a record of
    unknown or unreadable creation date always was)."""
    when = parse_ts(created) if created and created != DATE_UNKNOWN else None
    return when is None or when <= moment


def lifecycle_at(lifecycle: str, history: Sequence[Change], moment: datetime) -> str:
    """The lifecycle a record had at ``moment``: the ``from`` of its first change after it,
    else its lifecycle now."""
    for change in history:
        if _moment(change.at) > moment:
            return change.old
    return lifecycle


def valid_at(valid_from: str | None, valid_until: str | None, moment: datetime) -> bool:
    """Whether ``moment`` falls in ``[valid_from, valid_until)`` (an absent bound is open)."""
    start, end = parse_ts(valid_from), parse_ts(valid_until)
    return (start is None or start <= moment) and (end is None or moment < end)


def up_to(history: History, moment: datetime) -> History:
    """The changes made by ``moment``: the history as it stood then."""
    return tuple(change for change in history if _moment(change.at) <= moment)


def superseded_at(lifecycle: str, history: Sequence[Change]) -> str | None:
    """When a shadowed record's validity closed: its last change to ``shadowed`` (None when it
    is not shadowed, or was shadowed before history was kept)."""
    if lifecycle != "shadowed":
        return None
    return next((change.at for change in reversed(history) if change.new == "shadowed"), None)


def interval_text(valid_from: str | None, valid_until: str | None, lifecycle: str, history: History) -> str:
    """The validity interval as people read it: ``from A until B``, an open side left out; a
    superseded record's interval ends where it was superseded, said so. Empty when it always holds."""
    end = valid_until
    closed = superseded_at(lifecycle, history)
    closing, ending = parse_ts(closed), parse_ts(valid_until)
    if closing is not None and (ending is None or closing < ending):
        end = f"{closed} (superseded)"
    return " ".join(([f"from {valid_from}"] if valid_from else []) + ([f"until {end}"] if end else []))


def visible_then(row: Sequence[Any], moment: datetime, states: Sequence[str]) -> bool:
    """Whether a docs-table row of :data:`AS_OF_COLUMNS` was in the store at ``moment``, valid
    then, in one of ``states`` then. A history the store holds was checked when it was written."""
    lifecycle, created, history, valid_from, valid_until = row
    if not recorded_by(created, moment) or not valid_at(valid_from, valid_until, moment):
        return False
    return lifecycle_at(lifecycle, history_of_row(history), moment) in states


AS_OF_COLUMNS = ("d.lifecycle", "d.created", "d.history", "d.valid_from", "d.valid_until")


def as_of_moment(value: str, now: datetime) -> datetime:
    """The moment ``--as-of VALUE`` names: an ISO date-time (naive: UTC), or a bare date, which
    means the end of that day in UTC; else a duration back from ``now`` or time words, read by
    ``timewords.flag_moment`` ("last month": its last moment). A moment after ``now`` is ``now``
    (the store as it is). ValueError when it is none of these."""
    moment = parse_ts(value)
    if moment is None:
        from .timewords import flag_moment

        moment = flag_moment(value, now, end=True)
        if moment is None:
            raise ValueError(value)
        return min(moment, now)
    try:
        date.fromisoformat(value.strip())
    except ValueError:
        pass  # a date-time
    else:  # a bare date includes that whole day
        moment += timedelta(days=1, microseconds=-1)
    return min(moment, now)
