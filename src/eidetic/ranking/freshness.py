"""The freshness signal and its blend into a relevance score exactly as docs/guide.md's Recall section states it.

Pure functions: ``now`` is always passed in, so a recall, a sweep and the tests agree on time.
"""

from __future__ import annotations

from datetime import datetime

from ..timeutil import DATE_UNKNOWN, days_between, parse_ts

DECAY_RATE = 0.01
SIGNAL_BASE = 0.5
ACCESS_BONUS_PER_RECALL = 0.05
ACCESS_BONUS_CAP = 0.5
BLEND_BETA = 0.25


def signal(created: str | None, recall_count: float, last_recall: str | None, now: datetime) -> float:
    """clamp((0.5 - staleness + access_bonus) * age_factor, 0, 1)."""
    access_bonus = min(ACCESS_BONUS_CAP, recall_count * ACCESS_BONUS_PER_RECALL)
    created_at = parse_ts(created) if created and created != DATE_UNKNOWN else None
    age_factor = 1.0 / (1.0 + days_between(created_at, now) * DECAY_RATE) if created_at else 1.0
    recalled_at = parse_ts(last_recall) if last_recall else None
    staleness = days_between(recalled_at, now) * DECAY_RATE if recalled_at else 0.0
    return min(1.0, max(0.0, (SIGNAL_BASE - staleness + access_bonus) * age_factor))


def is_neutral(created: str | None, recall_count: float, last_recall: str | None) -> bool:
    """No temporal data at all: the blend is skipped so such records keep their raw score."""
    return (not created or created == DATE_UNKNOWN) and not recall_count and not last_recall


def blend(score: float, signal_value: float) -> float:
    return score * (1.0 + BLEND_BETA * (signal_value - SIGNAL_BASE))


# The blend multiplies a score by at most this much: bounds for exact top-k under the blend.
MAX_BLEND_FACTOR = 1.0 + BLEND_BETA * (1.0 - SIGNAL_BASE)


def max_blend_factor(max_recall_count: float) -> float:
    """The most the blend can lift a score in a store whose records were recalled at most
    ``max_recall_count`` times: staleness only lowers the signal and the age factor is at most
    1, so the signal is at most 0.5 + access_bonus. In a store nobody has recalled from yet no
    score can rise at all, and top-k stops at the first raw score below the k-th."""
    bonus = min(ACCESS_BONUS_CAP, max_recall_count * ACCESS_BONUS_PER_RECALL)
    return min(MAX_BLEND_FACTOR, 1.0 + BLEND_BETA * (min(1.0, SIGNAL_BASE + bonus) - SIGNAL_BASE))
