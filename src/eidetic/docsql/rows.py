"""A record as a store holds it, and how a row of the docs table becomes one, in either engine.

It lives at the bottom of the SQL layer because every backend passes it around; the record
database (``index``) and the postgres backend read it from their rows here, and
``eidetic.stores.base`` re-exports it for callers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..clocks import history_of_row
from ..records import Record, Scope
from .dialect import Dialect


@dataclass
class IndexedRecord:
    """A record as a store holds it: its doc number and, for files, its file's relative path."""

    doc: int
    path: str | None
    record: Record


class RankingFacts(NamedTuple):
    """What the blend needs of a hit before its record is loaded: its id, its record clock's
    ``created`` (freshness) and its event clock (a time named in the query)."""

    id: str
    created: str | None
    occurred: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None


def doc_columns(dialect: Dialect) -> str:
    """The columns of ``d`` that make up a record, in the order :func:`indexed` reads them."""
    return (
        f"d.doc, d.id, {dialect.path}, d.scope, d.visibility, d.lifecycle, d.type, d.name, d.description, "
        "d.text, d.created, d.updated, d.added_by, d.supersedes, d.links, d.metadata, d.occurred, d.valid_from, "
        "d.valid_until, d.history"
    )


def indexed(dialect: Dialect, row: Sequence[Any]) -> IndexedRecord:
    """The record of a row read as :func:`doc_columns`."""
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
        occurred,
        valid_from,
        valid_until,
        history,
    ) = row
    record = Record(
        id=rid,
        text=text,
        type=rtype,
        name=name,
        description=description,
        metadata=dialect.json(metadata),
        scope=Scope(scope, visibility),
        created=created,
        updated=updated,
        added_by=added_by,
        supersedes=supersedes,
        links=list(dialect.json(links)),
        lifecycle=lifecycle,
        occurred=occurred,
        valid_from=valid_from,
        valid_until=valid_until,
        history=history_of_row(history),
    )
    return IndexedRecord(doc, path or None, record)
