"""NDJSON, the port format: one record per line in the remember format, plus what a store
adds (``lifecycle``, ``updated``, ``hash``, ``recall_count``, ``last_recall``). ``eidetic
export`` writes it (:func:`export_line`) and ``eidetic import`` reads it back (:func:`read`),
so a store exported and imported elsewhere is the same store."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..record_intake import load_json
from ..records import Record
from . import Entry, Usage


def export_line(record: Record, usage: Usage | None, *, with_usage: bool = True) -> str:
    """One exported record; usage as recall shows it (a whole count as an int)."""
    data: dict[str, Any] = record.to_dict()
    if with_usage:
        count, last = usage or (0.0, None)
        data["recall_count"] = int(count) if float(count).is_integer() else count
        data["last_recall"] = last
    return json.dumps(data, ensure_ascii=False) + "\n"


def read(lines: Iterable[str | bytes], name: str | None) -> Iterator[Entry]:
    """Every non-blank line parsed; one that is not UTF-8 or not JSON becomes an error entry
    naming its line (and ``name``, the file, when there is one)."""
    for number, line in enumerate(lines, start=1):
        where: dict[str, Any] = {"line": number} if name is None else {"path": name, "line": number}
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield Entry(where, error=f"not UTF-8 (byte {exc.start + 1})")
                continue
        if not line.strip():
            continue
        try:
            yield Entry(where, load_json(line))
        except json.JSONDecodeError as exc:
            yield Entry(where, error=f"invalid JSON ({exc.msg} at column {exc.colno})")


def read_file(path: Path, name: str | None = None) -> Iterator[Entry]:
    """A file, read line by line (bytes, so one bad line cannot fail the others); errors name
    it ``name`` (default: the path as given)."""
    with path.open("rb") as handle:
        yield from read(handle, name or str(path))
