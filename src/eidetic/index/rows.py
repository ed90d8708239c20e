"""A record as a store holds it, and how a row of the ``docs`` table becomes one.

It lives at the bottom of the index layer because the index returns it and every backend
(``stores``) passes it around; ``eidetic.stores.base`` re-exports it for callers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..records import Record, Scope


@dataclass
class IndexedRecord:
    """A record as a store holds it: its doc number and, for files, its file's relative path."""

    doc: int
    path: str | None
    record: Record


# The columns of ``docs`` that make up a record, in the order row_to_indexed reads them.
DOC_COLUMNS = (
    "doc, id, path, scope, visibility, lifecycle, type, name, description, text, "
    "created, updated, added_by, supersedes, links, metadata"
)


def row_to_indexed(row: Sequence[Any]) -> IndexedRecord:
    (
        doc,
        rid,
        path,
        scope,
        visibility,
        lifecycle,
        rtype,
        name,
        description,
        text,
        created,
        updated,
        added_by,
        supersedes,
        links,
        metadata,
    ) = row
    record = Record(
        id=rid,
        text=text,
        type=rtype,
        name=name,
        description=description,
        metadata=json.loads(metadata),
        scope=Scope(scope, visibility),
        created=created,
        updated=updated,
        added_by=added_by,
        supersedes=supersedes,
        links=json.loads(links),
        lifecycle=lifecycle,
    )
    return IndexedRecord(doc, path or None, record)
