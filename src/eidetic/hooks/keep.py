"""Captured statements kept as records: provenance in their metadata, nothing stored twice.

A statement is left out, reported as a ``duplicate`` of the record it repeats (``duplicate_of``,
with the ``rule`` and ``score`` that decided it):

- when a record the writer may see already says the same words: the very text in the writer's
  scope (found by the id derived from both), or the same words once normalised
  (``records.normalised``) among the top keyword hits for it (no model is loaded);
- when ``remember`` finds it a near-duplicate of an active record of its own scope
  (``on_similar="skip"``, ``memory.similar``): the same words once normalised, or, when the
  statements are embedded (``embed``: the hook daemon, whose model is loaded, and ``eidetic
  capture``), a meaning as close as ``ranking.similar.SIMILAR_COSINE`` with the same numbers,
  ids, dates and names (``ranking.similar.near_in_meaning``). Another scope's private records are
  never compared, so never named.

A statement that holds a credential (``credentials``: a cloud key, a token, a private key, a
password, a URL with a password) is left out whole, whatever the visibility, and only counted
(``credentials_left_out``, with their kinds): a transcript says such things in passing, and a
record is no place for them. It is not redacted and kept: what is left of "the staging key is
[...]" is worth little, and a redaction that misses a part would keep that part.

Without ``embed`` the new records are written without vectors (computed at the first semantic
recall that needs them), so a session's end stays quick where no model is loaded.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from .capture import Captured, unique

if TYPE_CHECKING:
    from ..memory import Memory


def keep(
    memory: Memory,
    found: list[Captured],
    provenance: dict[str, str],
    access: dict[str, str | None],
    now: datetime,
    dry_run: bool = False,
    embed: bool = False,
) -> dict[str, Any]:
    """Remember the statements not stored yet; what happened to each, as ``{"found", "written",
    "credentials_left_out", "credential_kinds", "items": [{"text", "type", "status", "id"?,
    "duplicate_of"?, "rule"?, "score"?}]}`` (a statement left out for a credential is counted,
    never listed). A dry run judges by words alone (nothing is embedded)."""
    from ..credentials import kinds

    items: list[dict[str, Any]] = []
    fresh: list[tuple[Captured, dict[str, Any]]] = []
    withheld: set[str] = set()
    left_out = 0
    for statement in unique(found):
        if held := kinds(statement.text):
            left_out += 1
            withheld.update(held)
            continue
        stored = _stored_as(memory, statement.text, access)
        entry: dict[str, Any] = {"text": statement.text, "type": statement.type, "said_by": statement.role}
        if stored is not None:
            entry.update(status="duplicate", duplicate_of=stored, rule="text", score=1.0)
        else:
            entry["status"] = "new"
            fresh.append((statement, entry))
        items.append(entry)
    written = 0
    if fresh and not dry_run:
        records = [_record(statement, provenance, now) for statement, _ in fresh]
        result = memory.remember(
            records, scope=access["scope"], visibility=access["visibility"], embed=embed, on_similar="skip"
        )
        for (_, entry), reported in zip(fresh, result.items):
            entry.update(_outcome(reported))
        written = sum(1 for _, entry in fresh if entry["status"] in ("new", "updated"))
    return {
        "found": len(found),
        "written": written,
        "dry_run": dry_run,
        "credentials_left_out": left_out,
        "credential_kinds": sorted(withheld),
        "items": items,
    }


def _outcome(reported: dict[str, Any]) -> dict[str, Any]:
    """What ``remember`` did with one statement, in the report's terms: a near-duplicate left
    out is a ``duplicate`` of the closest record (``similar_to`` is best first)."""
    if reported.get("status") == "similar":
        near = reported["similar_to"][0]
        return {"status": "duplicate", "duplicate_of": near["id"], "rule": near["rule"], "score": near["score"]}
    found = {"id": reported.get("id"), "status": reported.get("status", "new")}
    if reported.get("duplicate_of"):
        found.update(duplicate_of=reported["duplicate_of"], rule="text", score=1.0)
    return found


def _stored_as(memory: Memory, text: str, access: dict[str, str | None]) -> str | None:
    """The id of a record the writer may see that says ``text`` in the same words, if any: the
    record of this very text in the writer's scope (its id derives from both; else ``remember``
    would rewrite it with this session's provenance), else one among the top keyword hits."""
    from ..errors import EideticError
    from ..query import RecallQuery
    from ..records import derived_id, normalised

    scope = memory.access(access["scope"], access["visibility"]).scope
    try:
        same = memory.get(derived_id(scope, text), scope=access["scope"], visibility=access["visibility"])
    except EideticError:
        same = None
    if same is not None and same.scope == scope and same.text == text:
        return same.id
    words = normalised(text)
    query = RecallQuery(
        text,
        mode="keyword",
        top_k=5,
        depth=0,
        record=False,
        time_words="off",
        scope=access["scope"],
        visibility=access["visibility"],
    )
    for hit in memory.recall(query).items:
        if normalised(hit.record.text) == words:
            return hit.record.id
    return None


def _record(statement: Captured, provenance: dict[str, str], now: datetime) -> dict[str, Any]:
    metadata = {**provenance, "said_by": statement.role, "captured": now.date().isoformat()}
    record: dict[str, Any] = {"text": statement.text, "type": statement.type, "metadata": metadata}
    if statement.at:
        record["occurred"] = statement.at
    return record
