"""A time named in the query, as a window, and how it moves a record's score. Pure.

``timewords`` finds the window ("last week" -> that calendar week); here a record whose time
falls inside it scores ``1 + TIME_BOOST`` times higher (``blend``), or is the only kind kept
(``filter``). A record is of the window's time when it was recorded then (``created``), when
what it tells happened then (``occurred``), or when what it says held at some moment of the
window (``valid_from``/``valid_until`` overlap it; an absent bound is open, so a record with
neither is judged by the other two). Chosen on the public
LoCoMo conversations 26, 30 and 41 and reported on 42-44 (docs/benchmarks.md): x1.5 lifted
recall@10 of the questions naming a date and cost nothing elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..timeutil import format_ts, parse_ts

TIME_BOOST = 0.5


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


TIME_MODES = ("blend", "filter", "off")


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


def factor(window: TimeWindow | None, times: Times) -> float:
    """What a record's score is multiplied by (1 outside the window or without one)."""
    return 1.0 + TIME_BOOST if window is not None and window.matches(times) else 1.0
