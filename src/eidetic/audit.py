"""Audit rules (as coding agents' memory-audit tools grade memory folders): is a memory fresh, stale, or pointing at files that
are gone? Pure: the caller passes the record's dates, its usage, ``now`` and which of the paths
it names exist.

- dead-reference: the memory names a repository file path (``src/x.py``, ``docs/y.md:12``,
  ``.github/workflows/ci.yml``) that does not exist under the repository root;
- stale: neither touched (latest of file mtime, ``updated``, ``## History`` date) nor recalled
  within ``stale_months``;
- fresh: otherwise.
A memory that is both gets the worse grade, dead-reference, with both reasons.
"""

from __future__ import annotations

import re
from datetime import datetime

from .ranking.fields import DAYS_PER_MONTH
from .timeutil import days_between, parse_ts

GRADES = ("fresh", "stale", "dead-reference")

# A relative path with at least one folder and a file extension, optionally :line. Not preceded
# by characters that make it part of a URL, an absolute path or a longer word.
_PATH = re.compile(r"(?<![\w/.:~@-])((?:\.?[\w-][\w.-]*/)+[\w.-]*\w\.[A-Za-z0-9]{1,8})(?::\d+(?:-\d+)?)?(?![\w/])")
_DOMAIN = re.compile(r"^[\w-]+(\.[\w-]+)*\.(com|org|net|io|dev|ai|app|co|edu|gov|uk|de)$", re.IGNORECASE)


def references(text: str) -> list[str]:
    """Repository file paths a text names, each once, in order (URLs and domains left out)."""
    found = []
    for match in _PATH.finditer(text):
        path = match.group(1)
        if _DOMAIN.match(path.split("/", 1)[0]):
            continue  # docs.python.org/3/x.html: a web address, not a file
        if path not in found:
            found.append(path)
    return found


def months_since(moment: datetime | None, now: datetime) -> float | None:
    return None if moment is None else days_between(moment, now) / DAYS_PER_MONTH


def grade(
    touched: datetime | None, last_recall: str | None, missing: list[str], now: datetime, stale_months: float
) -> tuple[str, list[str]]:
    """(grade, reasons) for one memory."""
    reasons = [f"names {path}, which does not exist in the repository" for path in missing]
    touched_months = months_since(touched, now)
    recalled_months = months_since(parse_ts(last_recall), now)
    recent = [m for m in (touched_months, recalled_months) if m is not None]
    touched_text = "never dated" if touched_months is None else f"last touched {touched_months:.1f} months ago"
    recalled_text = "never recalled" if recalled_months is None else f"last recalled {recalled_months:.1f} months ago"
    if not recent or min(recent) > stale_months:
        reasons.append(f"stale: {touched_text}, {recalled_text} (limit {stale_months:g} months)")
        return ("dead-reference" if missing else "stale"), reasons
    if missing:
        return "dead-reference", reasons
    return "fresh", [f"{touched_text}, {recalled_text}"]
