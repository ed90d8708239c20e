"""Which records a session start or a prompt gets, framed and fitted to a budget.

A session start gets the most useful records the session may see: active lessons, decisions and
feedback (``START_TYPES``), the most recalled and the most recently written, ranked by the
freshness signal (age and usage, ``ranking/freshness.py``). A prompt gets a hybrid recall on its
text with the relevance floor on (``auto``): nothing at all unless something clears it, and of
what does, only the hits near the best (``PROMPT_OF_BEST``). Either way,
records this session was given already are skipped, and the rest are taken in rank order while
they fit the budget (``budget``). Scope: the caller's access, as ``eidetic recall`` has it; another
scope's private records never reach a candidate list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import budget, framing
from .session import SessionState

if TYPE_CHECKING:
    from ..memory import Memory
    from ..records import Record

START_TYPES = ("lesson", "decision", "feedback")
START_POOL = 50  # records read per order (most recalled, newest) before ranking
PROMPT_CANDIDATES = 8
MAX_PROMPT_CHARS = 2000  # a prompt's first characters are what is recalled on
# Which of a prompt's hits are given. Recall keeps every hit that reaches its mode's share of the
# relevance floor's line (hybrid: half of it; ``ranking/relevance.py``), so that a search shows
# what lies near its best; a hook puts records into the agent's context unasked, where a near
# miss is noise. So a hit is given only when its relevance (the floor's scale) is at least this
# share of the best hit's. benchmarks/hook_relevance.py chose it on the tuning half of its prompts:
# among 60 memories of one team, the records injected that had nothing to do with the prompt fell
# from 35 to 3 on the held-out half (docs/benchmarks.md, "Hooks: unrelated records injected").
PROMPT_OF_BEST = 0.9
MIN_CLIPPED = 24  # tokens: a record cut shorter than this is left out instead
WHY = {"start": "most useful at a session's start", "prompt": "recalled on the user's prompt"}


@dataclass
class Injected:
    """One record as it was put into the context."""

    id: str
    type: str
    date: str
    source: str
    scope: dict[str, str]
    text: str  # neutralised, possibly clipped
    flags: tuple[str, ...]
    tokens: int
    truncated: bool
    score: float | None = None
    path: str | None = None
    relevance: float | None = None  # a prompt's hit: its evidence over the calibrated floor (1.0: on it)

    def to_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "type": self.type,
            "date": self.date,
            "source": self.source,
            "scope": self.scope,
            "text": self.text,
            "flags": list(self.flags),
            "tokens": self.tokens,
            "truncated": self.truncated,
            "path": self.path,
        }
        if self.score is not None:
            data["score"] = self.score
        if self.relevance is not None:
            data["relevance"] = self.relevance
        return data


@dataclass
class ContextResult:
    """What one hook event put into the context (``context``: the framed text; empty: nothing)."""

    event: str
    session: str | None
    budget: int
    items: list[Injected] = field(default_factory=list)
    context: str = ""
    tokens: int = 0
    skipped: dict[str, int] = field(default_factory=lambda: {"seen": 0, "budget": 0})
    below_floor: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "session": self.session,
            "budget": self.budget,
            "tokens": self.tokens,
            "items": [item.to_dict() for item in self.items],
            "skipped": self.skipped,
            "below_floor": self.below_floor,
            "context": self.context,
        }


Candidate = tuple["Record", float | None, str | None, float | None]  # record, score, path, relevance


def prompt_candidates(
    memory: Memory, prompt: str, access: dict[str, Any], mode: str = "hybrid", of_best: float = PROMPT_OF_BEST
) -> Any:
    """The recall of a prompt, relevance floor on, the hits below ``of_best`` times the best's
    relevance left out (counted below the floor); ``access``: ``scope``/``visibility`` (None: the
    settings'). Returns (candidates, hits below the floor, warnings)."""
    from ..query import RecallQuery

    text = prompt.replace("\x00", " ")[:MAX_PROMPT_CHARS]
    if not text.strip():
        return [], 0, []
    query = RecallQuery(text, mode=mode, top_k=PROMPT_CANDIDATES, relevance_floor="auto", depth=0, **access)
    result = memory.recall(query)
    found: list[Candidate] = [(hit.record, hit.score, hit.path, hit.relevance) for hit in result.items]
    kept = strong(found, of_best)
    return kept, result.below_floor + len(found) - len(kept), result.warnings


def strong(found: list[Candidate], of_best: float) -> list[Candidate]:
    """The candidates whose relevance reaches ``of_best`` times the best's (a hit not judged,
    relevance None, is kept: ``exact`` mode needs no floor)."""
    judged = [relevance for *_, relevance in found if relevance is not None]
    line = of_best * max(judged) if judged else 0.0
    return [each for each in found if each[3] is None or each[3] >= line]


def start_candidates(memory: Memory, access: dict[str, Any], types: tuple[str, ...], now: datetime) -> list[Candidate]:
    """The most recalled and the newest active records of ``types``, ranked by freshness signal."""
    from ..listing import ListQuery
    from ..ranking.freshness import signal

    pool: dict[str, tuple[float, Candidate]] = {}
    for order in ("recalled", "updated"):
        page = memory.list_records(ListQuery(types=types, sort=order, limit=START_POOL, **access))
        for item in page.items:
            rank = signal(item.record.created, item.recall_count, item.last_recall, now)
            pool[item.record.id] = (rank + 0.01 * min(item.recall_count, 50), (item.record, rank, item.path, None))
    return [candidate for _, candidate in sorted(pool.values(), key=lambda pair: -pair[0])]


def fit(event: str, candidates: list[Candidate], state: SessionState | None, room: int) -> ContextResult:
    """Frame the candidates not yet given to this session, in order, while they fit ``room`` tokens."""
    result = ContextResult(event, state.session if state else None, room)
    left = room - framing.frame_cost(WHY[event])
    blocks: list[str] = []
    for record, score, path, relevance in candidates:
        if state is not None and state.seen(record.id):
            result.skipped["seen"] += 1
            continue
        item, block = _framed(record, score, path, left) if left >= MIN_CLIPPED else (None, "")
        if item is not None:
            item.relevance = relevance
        if item is None:
            result.skipped["budget"] += 1
            continue
        blocks.append(block)
        result.items.append(item)
        left -= item.tokens
    result.context = framing.frame(blocks, WHY[event])
    result.tokens = budget.tokens(result.context) if blocks else 0
    return result


def _framed(record: Record, score: float | None, path: str | None, left: int) -> tuple[Injected | None, str]:
    """One record's block, clipped to ``left`` tokens if need be (None: it does not fit)."""
    text, flags = framing.neutralise(record.text)
    fields = {
        "id": record.id,
        "type": record.type,
        "date": _date(record),
        "source": _source(record),
        "scope": f"{record.scope.name}/{record.scope.visibility}",
    }
    head = framing.header(fields, flags)
    whole = head + "\n" + framing.quoted(text)
    cost = budget.tokens(whole) + 1  # the blank line between blocks
    truncated = False
    if cost > left:
        room = left - budget.tokens(head) - 4
        if room < MIN_CLIPPED:
            return None, ""
        text, truncated = budget.clip(text, room), True
        whole = (
            head
            + "\n"
            + framing.quoted(text + f" (cut to fit; `eidetic show {framing.one_line(record.id, 256)}` has it all)")
        )
        cost = budget.tokens(whole) + 1
        if cost > left:
            return None, ""
    item = Injected(
        record.id,
        record.type,
        fields["date"],
        fields["source"],
        record.scope.to_dict(),
        text,
        flags,
        cost,
        truncated,
        score,
        path,
    )
    return item, whole


def _date(record: Record) -> str:
    """The day a record tells of: when it happened (``occurred``), else when it was created; never
    ``updated``, which an import or an edit sets to its own day. Empty when neither is a date
    (``date-unknown``): the header then has no date rather than a cut-off word."""
    from ..timeutil import parse_ts

    for stamp in (record.occurred, record.created):
        if stamp and parse_ts(stamp) is not None:
            return stamp.strip()[:10]
    return ""


def _source(record: Record) -> str:
    """Where a record came from: its ``metadata.source``, else who added it."""
    source = record.metadata.get("source") if isinstance(record.metadata, dict) else None
    return str(source) if source not in (None, "") else (record.added_by or "")
