"""The ``fields`` ranking of markdown memory folders (``eidetic explain fields``): transparent, deterministic, no embeddings.

    score = (keyword + type_prior + usage_boost) x recency_factor

- keyword, per query term: +5 when the name contains it, +3 when the description does, +1 per
  occurrence in the body up to 3; case-insensitive substrings; hyphens and underscores in a
  name count as spaces (``deploy-checklist`` matches "deploy checklist");
- type_prior: feedback 1.0, user 0.75, project 0.5, reference 0.25, any other type 0; it only
  re-orders records that matched a term;
- usage_boost = log2(1 + recall_count) x 0.5;
- recency_factor = clamp(1.5 - months_since_touched / stale_months, 0.5, 1.5), where touched is
  the latest of the file's mtime, ``updated`` and the newest date in a ``## History`` section,
  and a month is 365.25 / 12 days.

A record with no keyword hit is not a result, except in a browse (a type filter and no terms),
which ranks that type by recency and usage alone: score = (1 + usage_boost) x recency_factor.
Pure: every input, including ``now``, is passed in, and :func:`score` returns each of them so
``--explain`` can show how a number came about.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from ..timeutil import days_between, parse_ts

NAME_WEIGHT = 5.0
DESCRIPTION_WEIGHT = 3.0
BODY_WEIGHT = 1.0
BODY_CAP = 3
TYPE_PRIORS = {"feedback": 1.0, "user": 0.75, "project": 0.5, "reference": 0.25}
USAGE_WEIGHT = 0.5
DAYS_PER_MONTH = 365.25 / 12
DEFAULT_MIN_SCORE = 0.5
DEFAULT_STALE_MONTHS = 6.0

_HISTORY = re.compile(r"^##\s+History\s*$(.*?)(?=^#{1,2}\s|\Z)", re.MULTILINE | re.DOTALL | re.IGNORECASE)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(Z|[+-]\d{2}:?\d{2})?)?\b")


def terms_of(query: str) -> list[str]:
    """Lower-cased words of a query, each once, in order (a leading ``query`` word is the
    seed's optional verb, not a term)."""
    words = query.lower().split()
    if words[:1] == ["query"]:
        words = words[1:]
    return list(dict.fromkeys(words))


def history_date(body: str) -> datetime | None:
    """The newest date written in the body's ``## History`` section, if any."""
    if "history" not in body.lower():
        return None  # the common case, without running the section pattern
    newest = None
    for section in _HISTORY.findall(body):
        for day, clock, zone in _DATE.findall(section):
            moment = parse_ts(f"{day}T{clock}{zone}" if clock else day)
            if moment is not None and (newest is None or moment > newest):
                newest = moment
    return newest


def last_touched(mtime_ns: int | None, updated: str | None, body: str) -> datetime | None:
    """The latest of the file's mtime (ns since the epoch), ``updated`` and the History date."""
    mtime = datetime.fromtimestamp(mtime_ns / 1e9, UTC) if mtime_ns else None
    candidates = [m for m in (mtime, parse_ts(updated), history_date(body)) if m is not None]
    return max(candidates) if candidates else None


@dataclass
class Breakdown:
    keyword: float
    type_prior: float
    usage_boost: float
    recency_factor: float
    recency_months: float | None
    score: float
    hits: dict[str, dict[str, float]]  # term -> {name, description, body} points

    def to_dict(self) -> dict[str, object]:
        return {
            "keyword": self.keyword,
            "type_prior": self.type_prior,
            "usage_boost": self.usage_boost,
            "recency_factor": self.recency_factor,
            "recency_months": None if self.recency_months is None else round(self.recency_months, 3),
            "score": self.score,
            "terms": self.hits,
            "formula": "(keyword + type_prior + usage_boost) * recency_factor",
        }


def keyword_points(
    terms: list[str], name: str | None, description: str | None, body: str
) -> tuple[float, dict[str, dict[str, float]]]:
    name_text = (name or "").lower().replace("-", " ").replace("_", " ")
    description_text = (description or "").lower()
    body_text = body.lower()
    total, hits = 0.0, {}
    for term in terms:
        spaced = term.replace("-", " ").replace("_", " ")
        points = {
            "name": NAME_WEIGHT if spaced in name_text or term in (name or "").lower() else 0.0,
            "description": DESCRIPTION_WEIGHT if term in description_text else 0.0,
            "body": BODY_WEIGHT * min(BODY_CAP, body_text.count(term)),
        }
        if any(points.values()):
            hits[term] = points
            total += sum(points.values())
    return total, hits


def recency(touched: datetime | None, now: datetime, stale_months: float) -> tuple[float, float | None]:
    """(factor, months since touched); an undated record counts as neither fresh nor stale (1.0)."""
    if touched is None:
        return 1.0, None
    months = days_between(touched, now) / DAYS_PER_MONTH
    return min(1.5, max(0.5, 1.5 - months / stale_months)), months


def upper_bound(terms: list[str], keyword: float, rtype: str, recall_count: float) -> float:
    """The highest score a record with these points can have, whatever its dates (recency at
    most 1.5): candidates below the k-th exact score need no dates read."""
    usage_boost = math.log2(1.0 + max(0.0, recall_count)) * USAGE_WEIGHT
    base = keyword + TYPE_PRIORS.get(rtype, 0.0) + usage_boost if terms else 1.0 + usage_boost
    return base * 1.5


def score(
    terms: list[str],
    name: str | None,
    description: str | None,
    body: str,
    rtype: str,
    recall_count: float,
    touched: datetime | None,
    now: datetime,
    stale_months: float = DEFAULT_STALE_MONTHS,
) -> Breakdown | None:
    """The record's breakdown, or None when it is not a result (no term hit, outside a browse)."""
    usage_boost = math.log2(1.0 + max(0.0, recall_count)) * USAGE_WEIGHT
    factor, months = recency(touched, now, stale_months)
    if not terms:  # browse: recency and usage alone
        return Breakdown(0.0, 0.0, usage_boost, factor, months, (1.0 + usage_boost) * factor, {})
    keyword, hits = keyword_points(terms, name, description, body)
    if not hits:
        return None
    prior = TYPE_PRIORS.get(rtype, 0.0)
    return Breakdown(keyword, prior, usage_boost, factor, months, (keyword + prior + usage_boost) * factor, hits)


def snippet(body: str, terms: list[str], width: int = 160) -> str:
    """A one-line excerpt of the body around the first term it contains (else its start)."""
    flat = " ".join(body.split())
    lowered = flat.lower()
    at = min((i for i in (lowered.find(t) for t in terms) if i >= 0), default=0)
    start = max(0, at - width // 3)
    excerpt = flat[start : start + width]
    return ("..." if start else "") + excerpt + ("..." if start + width < len(flat) else "")
