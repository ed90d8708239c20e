"""How a row of the docs table becomes a record as a store holds it (``stores.types``), in
either engine: the record database (``index``) and the postgres backend read their rows here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..clocks import history_of_row
from ..records import Record, Scope
from ..stores.types import IndexedRecord
from .dialect import Dialect


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
