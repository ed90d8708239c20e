"""The ``recall`` tool's compact answer: what an agent reads of a hit, and nothing it pays for
without reading.

A full hit (``Hit.to_dict``, the JSON of ``eidetic recall --json``) carries the text's hash, the
file's path, usage counts and every unset field as a null: about three times the tokens of the
text itself for a short note. The compact form keeps what answers a question and judges a
memory: id, text, type, when it was created, its scope, its score, and of the other fields only
those that are set. ``detail: "full"`` gives the full form. The tools' schemas are listed lean
for the same reason (``listed_schema``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..results import Hit, RecallResult
from ..timeutil import DATE_UNKNOWN

SCORE_DIGITS = 3  # a ranking an agent reads, not one it re-sorts (the full form keeps every digit)
# Record fields kept only when set, in the order a reader wants them after the text.
_WHEN_SET = (
    "name",
    "description",
    "metadata",
    "added_by",
    "links",
    "supersedes",
    "occurred",
    "valid_from",
    "valid_until",
)


def compact_recall(result: RecallResult) -> dict[str, Any]:
    """A recall's answer with compact hits; the facts that qualify the answer (the relevance
    floor, hidden records, the moment asked about, a time the query names, warnings) only when
    there are any."""
    data: dict[str, Any] = {"items": [compact_hit(hit) for hit in result.items]}
    if result.truncated:
        data["truncated"] = True
    if result.relevance_floor is not None:
        data["relevance_floor"] = result.relevance_floor
        data["below_floor"] = result.below_floor
    if result.hidden:
        data["hidden"] = result.hidden
    if result.as_of is not None:
        data["as_of"] = result.as_of
    if result.time_window:
        data["time_window"] = result.time_window
    if result.warnings:  # the client's log hears them too, but a model may never see its log
        data["warnings"] = result.warnings
    return data


def compact_hit(hit: Hit) -> dict[str, Any]:
    """One hit: id, text, type, created, scope (``name/visibility``), score, then the record's
    fields that are set; a linked record says which link brought it (``via``, ``parent``)."""
    record = hit.record
    data: dict[str, Any] = {"id": record.id, "text": record.text, "type": record.type}
    if record.created != DATE_UNKNOWN:
        data["created"] = record.created
    data["scope"] = f"{record.scope.name}/{record.scope.visibility}"
    data["score"] = round(hit.score, SCORE_DIGITS)
    for key in _WHEN_SET:
        value = getattr(record, key)
        if value:
            data[key] = list(value) if key == "links" else value
    if record.lifecycle != "active":  # only when the call asked for shadowed or archived records
        data["lifecycle"] = record.lifecycle
    if hit.tier == "traversal":
        data.update({"tier": hit.tier, "via": hit.via, "parent": hit.parent})
    if hit.explain is not None:
        data["explain"] = hit.explain
    return data


def listed_schema(schema: dict[str, Any], unlisted: Collection[str]) -> dict[str, Any]:
    """A tool's input schema as its listing shows it: without the ``unlisted`` arguments, the
    titles the validation library derives from the names, and the ``null`` an optional argument
    may be sent as (leaving it out says the same); the tool still takes all of that."""
    properties = {name: _lean(spec) for name, spec in schema.get("properties", {}).items() if name not in unlisted}
    listed = {key: value for key, value in schema.items() if key not in ("title", "properties", "required")}
    listed["properties"] = properties
    required = [name for name in schema.get("required", []) if name not in unlisted]
    if required:
        listed["required"] = required
    return listed


def _lean(spec: dict[str, Any]) -> dict[str, Any]:
    spec = {key: value for key, value in spec.items() if key != "title"}
    options = spec.get("anyOf")
    if options is not None and spec.get("default", ...) is None:
        kept = [option for option in options if option != {"type": "null"}]
        del spec["default"], spec["anyOf"]
        spec = {**kept[0], **spec} if len(kept) == 1 else {"anyOf": kept, **spec}
    return spec
