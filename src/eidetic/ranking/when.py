"""A time named in the query, as a window, and how it moves a record's score. Pure.

``timewords`` finds the window ("last week" -> that calendar week); here a record whose time
falls inside it scores ``1 + TIME_BOOST`` times higher (``blend``), or is the only kind kept
(``filter``). A record's time is when it was recorded (``created``). Chosen on the public
LoCoMo conversations 26, 30 and 41 and reported on 42-44 (docs/benchmarks.md): x1.5 lifted
recall@10 of the questions naming a date and cost nothing elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..timeutil import format_ts, parse_ts

TIME_BOOST = 0.5
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

    def to_dict(self, mode: str) -> dict[str, Any]:
        return {"phrase": self.phrase, "start": format_ts(self.start), "end": format_ts(self.end), "mode": mode}


def factor(window: TimeWindow | None, when: str | None) -> float:
    """What a record's score is multiplied by (1 outside the window or without one)."""
    return 1.0 + TIME_BOOST if window is not None and window.holds(when) else 1.0
