"""The values the storage interface passes around: a record as a store holds it, the facts the
blend needs before a record is loaded, and the rows of consolidate, the fields ranking and a
listing.

They belong to the interface (``stores.base``), not to any backend: the SQL both SQL engines
share (``docsql``) and every backend build them, and ``Memory`` reads them. This module imports
only the record model, so every layer below the API may use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..records import Record, Scope


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


class Admitted(NamedTuple):
    """A record a caller may see, as ``consolidate`` groups it: no metadata, links or history."""

    doc: int
    id: str
    scope: Scope
    text: str
    created: str
    updated: str | None


# (doc, id, name, description, text, type, last touched, file mtime ns or None, path or None)
FieldsRow = tuple[int, str, "str | None", "str | None", str, str, "str | None", "int | None", "str | None"]
Listed = tuple[int, str, tuple[Any, ...]]  # (doc, id, sort key), in the store's order
