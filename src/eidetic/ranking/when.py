"""A time named in the query, as a window, and how it moves a record's score. Pure.

``timewords`` finds the window ("last week" -> that calendar week: a ``TimeWindow``, which
also says whether a record is of its time); here a record whose time
falls inside it scores ``1 + TIME_BOOST`` times higher (``blend``), or is the only kind kept
(``filter``). A record is of the window's time when it was recorded then (``created``), when
what it tells happened then (``occurred``), or when what it says held at some moment of the
window (``valid_from``/``valid_until`` overlap it; an absent bound is open, so a record with
neither is judged by the other two). Chosen on the public
LoCoMo conversations 26, 30 and 41 and reported on 42-44 (docs/benchmarks.md): x1.5 lifted
recall@10 of the questions naming a date and cost nothing elsewhere.
"""

from __future__ import annotations

from ..timewords import Times, TimeWindow

TIME_BOOST = 0.5
TIME_MODES = ("blend", "filter", "off")


def factor(window: TimeWindow | None, times: Times) -> float:
    """What a record's score is multiplied by (1 outside the window or without one)."""
    return 1.0 + TIME_BOOST if window is not None and window.matches(times) else 1.0
