"""eidetic-cli's files store: one JSONL file per scope and visibility
(``<scope>__<visibility>.jsonl``), each line an *envelope*::

    {"id", "hash", "content", "scope": {"name", "visibility"},
     "metadata": {"type", "record_metadata", "created", "last_recall", "recall_count",
                  "links", "supersedes", "lifecycle", "added_by"}}

The caller's metadata is nested under ``record_metadata``. Lines older than the envelope format
(its ``migrate store`` rewrote them) are flat records with ``text`` in place of ``content``;
both are read. Usage (``recall_count``, ``last_recall``) and the lifecycle are kept. Values
eidetic-cli accepted unvalidated (an unknown lifecycle, a garbage ``created``) are reported by
the validator like any other bad line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import Entry
from .ndjson import read_file


def read(source: Path) -> Iterator[Entry]:
    """Every line of every ``*.jsonl`` file of a store folder (or of one such file); errors name
    a store's files by their names."""
    files = sorted(source.glob("*.jsonl")) if source.is_dir() else [source]
    for path in files:
        for entry in read_file(path, path.name if source.is_dir() else None):
            if entry.error is not None:
                yield entry
                continue
            try:
                yield Entry(entry.where, _flat(entry.raw))
            except ValueError as exc:
                yield Entry(entry.where, error=str(exc))


def _flat(line: Any) -> Any:
    """An envelope or a legacy record line as a dict in the export format."""
    if not isinstance(line, dict):
        return line  # the validator says what it should have been
    if "content" not in line:  # a legacy record line: already flat
        flat = dict(line)
        flat["type"] = line.get("type") or None  # eidetic-cli read a missing type as ""
        return flat
    meta = line.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ValueError("envelope 'metadata' must be an object")
    return {
        "id": line.get("id"),
        "text": line.get("content"),
        "type": meta.get("type") or None,
        "metadata": meta.get("record_metadata") or {},
        "scope": line.get("scope"),
        "created": meta.get("created"),
        "added_by": meta.get("added_by"),
        "supersedes": meta.get("supersedes"),
        "links": meta.get("links"),
        "lifecycle": meta.get("lifecycle"),
        "recall_count": meta.get("recall_count"),
        "last_recall": meta.get("last_recall"),
    }
