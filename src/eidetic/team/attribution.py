"""Who wrote a record, on a server with members: the member whose token made the call, never
what the client says. A client's own attribution (a record's ``added_by``, else the call's) is
kept apart as ``metadata.claimed_by`` when it names someone else, so nothing it said is lost
and nothing it said is taken as the truth."""

from __future__ import annotations

from typing import Any


def attributed(batch: list[Any], member: str, claimed: str | None = None) -> list[Any]:
    """``batch`` with every record's ``added_by`` set to ``member``, and a differing claim (the
    record's ``added_by``, else ``claimed``) moved to its ``metadata.claimed_by``. What is not a
    record (not an object) is left for the validation to refuse, as is a ``metadata`` that is
    not an object."""
    out: list[Any] = []
    for raw in batch:
        if not isinstance(raw, dict):
            out.append(raw)
            continue
        record = dict(raw)
        claim = record.get("added_by", claimed)
        record["added_by"] = member
        metadata = record.get("metadata")
        if claim is not None and claim != member and (metadata is None or isinstance(metadata, dict)):
            record["metadata"] = {**(metadata or {}), "claimed_by": claim}
        out.append(record)
    return out
