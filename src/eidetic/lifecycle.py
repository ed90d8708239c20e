"""Lifecycle rules (``eidetic explain sweep``): which records ``sweep`` shadows or archives. Pure: records,
their usage and ``now`` in; decisions out. Nothing is ever deleted here.

- A record superseded by another record of the same scope (name and visibility) is shadowed.
  Records in a supersedes cycle are left alone: neither can be "the newer one".
- An active record created more than 365 days ago, or whose freshness signal is below 0.25,
  is archived. Shadowed records stay shadowed (already hidden; the supersedes link says why).
- ``metadata.protected`` (any truthy value) exempts a record from both rules.
- Same-scope active records with the same text (ignoring case and surrounding space) are
  reported as suggestions for a person to resolve, with the ``eidetic forget`` commands that
  keep the earliest; sweep changes nothing about them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .ranking.freshness import signal
from .records import Record, Scope
from .timeutil import DATE_UNKNOWN, days_between, parse_ts

ARCHIVE_AGE_DAYS = 365.0
ARCHIVE_SIGNAL = 0.25


@dataclass(frozen=True)
class Usage:
    recall_count: float = 0.0
    last_recall: str | None = None


@dataclass(frozen=True)
class SweepPlan:
    changes: dict[str, str]  # id -> new lifecycle
    shadowed: int
    archived: int
    suggestions: list[dict]


def protected(record: Record) -> bool:
    return bool(record.metadata.get("protected"))


def _in_cycle(start: str, by_id: dict[str, Record]) -> bool:
    seen = set()
    current = by_id.get(start)
    while current is not None and current.supersedes:
        if current.supersedes == start:
            return True
        if current.supersedes in seen:
            return False
        seen.add(current.supersedes)
        current = by_id.get(current.supersedes)
    return False


def plan_sweep(records: Sequence[Record], usage: dict[str, Usage], now: datetime) -> SweepPlan:
    by_id = {record.id: record for record in records}
    changes: dict[str, str] = {}
    shadowed = archived = 0
    for record in records:
        old = by_id.get(record.supersedes) if record.supersedes else None
        if old is None or old.id == record.id or old.scope != record.scope:
            continue
        if protected(old) or old.lifecycle != "active" or old.id in changes or _in_cycle(record.id, by_id):
            continue
        changes[old.id] = "shadowed"
        shadowed += 1
    for record in records:
        if record.id in changes or record.lifecycle != "active" or protected(record):
            continue
        use = usage.get(record.id, Usage())
        created = parse_ts(record.created) if record.created != DATE_UNKNOWN else None
        too_old = created is not None and days_between(created, now) > ARCHIVE_AGE_DAYS
        weak = signal(record.created, use.recall_count, use.last_recall, now) < ARCHIVE_SIGNAL
        if too_old or weak:
            changes[record.id] = "archived"
            archived += 1
    groups: dict[tuple, list[Record]] = defaultdict(list)
    for record in records:
        if record.lifecycle == "active" and record.id not in changes and not protected(record):
            groups[(record.scope, record.text.strip().casefold())].append(record)
    suggestions = [_overlap(group) for group in sorted(groups.values(), key=lambda g: sorted(r.id for r in g))]
    return SweepPlan(changes, shadowed, archived, [s for s in suggestions if len(s["ids"]) > 1])


def _overlap(group: list[Record]) -> dict:
    """A suggestion for records of one scope with the same text: keep the earliest (by
    ``created``, then id) and archive the others, each with the command that does it."""
    kept, *others = sorted(group, key=lambda r: (parse_ts(r.created) is None, r.created, r.id))
    return {
        "reason": "same-scope text overlap (possible conflict)",
        "ids": sorted(r.id for r in group),
        "scope": kept.scope.to_dict(),
        "keep": kept.id,
        "commands": [command("forget", r.id, r.scope) for r in others],
    }


def command(verb: str, rid: str, scope: Scope) -> str:
    """The ``eidetic`` command line that runs ``verb`` on one record, quoted for a POSIX shell;
    a private record is reached with its scope, and an id that looks like a flag follows ``--``."""
    import shlex

    words = ["eidetic", verb]
    if scope.visibility == "private":
        words += ["--scope", scope.name, "--visibility", "private"]
    return shlex.join([*words, *(["--"] if rid.startswith("-") else []), rid])
