"""A record as the properties of its ``:Memory`` node, and back.

Every field is a property a Cypher user can read as it is: ``links`` a list of ids, the
clocks and dates as the text eidetic writes. ``metadata`` and ``history`` are JSON text:
Neo4j properties cannot hold maps. A missing value is no property (a rewrite replaces every
property of the node: ``SET m = props``).
"""

from __future__ import annotations

import json
from typing import Any

from ...clocks import history_json, history_of_row
from ...records import Record, Scope


def properties(record: Record) -> dict[str, Any]:
    """The node's properties for ``record`` (not its ``id``, which identifies the node), the
    missing ones left out."""
    found = {
        "scope": record.scope.name,
        "visibility": record.scope.visibility,
        "lifecycle": record.lifecycle,
        "type": record.type,
        "name": record.name,
        "description": record.description,
        "text": record.text,
        "hash": record.hash,
        "created": record.created,
        "updated": record.updated,
        "added_by": record.added_by,
        "supersedes": record.supersedes,
        "links": list(record.links),
        "metadata": json.dumps(record.metadata, ensure_ascii=False),
        "occurred": record.occurred,
        "valid_from": record.valid_from,
        "valid_until": record.valid_until,
        "history": history_json(record.history),
    }
    return {key: value for key, value in found.items() if value is not None}


def record_of(props: dict[str, Any]) -> Record:
    """The record a node's properties (with ``id``) hold."""
    return Record(
        id=props["id"],
        text=props["text"],
        type=props["type"],
        name=props.get("name"),
        description=props.get("description"),
        metadata=json.loads(props.get("metadata") or "{}"),
        scope=Scope(props["scope"], props["visibility"]),
        created=props["created"],
        updated=props.get("updated"),
        added_by=props.get("added_by"),
        supersedes=props.get("supersedes"),
        links=list(props.get("links") or []),
        lifecycle=props["lifecycle"],
        occurred=props.get("occurred"),
        valid_from=props.get("valid_from"),
        valid_until=props.get("valid_until"),
        history=history_of_row(props.get("history")),
    )
