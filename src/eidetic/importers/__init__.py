"""``eidetic import``: records from other stores' files, carried into a store by ``Memory.restore``.

Each source format has one reader (``ndjson``, ``eidetic_cli``, ``markdown``) that turns what it
finds into :class:`Entry` values: where an item came from, and either the item as a dict in the
export format (the remember format plus ``lifecycle``, ``updated``, ``recall_count`` and
``last_recall``) or why it could not be read. One validator then checks every dict as remember
does, so every format obeys the same rules, and :func:`import_entries` writes the good ones in
batches: a bad line is reported with its place and never stops the lines around it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clocks import parse_history
from ..credentials import Screen
from ..errors import EideticError, user_error
from ..record_intake import record_from_input
from ..records import LIFECYCLES, Record, Scope
from ..timeutil import parse_ts

if TYPE_CHECKING:
    from ..memory import Memory

FORMATS = ("ndjson", "eidetic-cli", "markdown")
BATCH = 2000  # records per write: bounded memory, a progress step, little redone if interrupted

Usage = tuple[float, str | None]


@dataclass(frozen=True)
class Entry:
    """One item of a source: ``where`` is ``{"line"}``, ``{"path", "line"}`` or ``{"path"}``."""

    where: dict[str, Any]
    raw: Any = None
    error: str | None = None


def detect(source: Path | None) -> str:
    """The format of a source when ``--format`` is not given: stdin and files are NDJSON (an
    eidetic-cli scope file ``<scope>__<visibility>.jsonl`` excepted); a folder of ``*.jsonl``
    files is an eidetic-cli store; a folder of ``.md`` files is a markdown memory folder."""
    if source is None:
        return "ndjson"
    if source.is_file():
        return "eidetic-cli" if source.name.endswith(("__public.jsonl", "__private.jsonl")) else "ndjson"
    if source.is_dir():
        if any(source.glob("*.jsonl")):
            return "eidetic-cli"
        if any(source.rglob("*.md")):
            return "markdown"
        raise user_error(
            f"{source} holds neither *.jsonl store files nor .md memory files",
            "name an NDJSON file, an eidetic-cli store folder or a markdown memory folder",
        )
    raise user_error(f"no such file or folder: {source}", "check the path, or pipe NDJSON on stdin with '-'")


def read(source: Path | None, fmt: str, stdin: Iterable[str | bytes], default_scope: Scope) -> Iterator[Entry]:
    """The entries of ``source`` (None: ``stdin``) read as ``fmt``."""
    from . import eidetic_cli, markdown, ndjson

    if fmt == "ndjson":
        if source is None:
            return ndjson.read(stdin, None)
        if not source.is_file():
            raise user_error(f"not a file: {source}", "NDJSON comes from a file or from stdin ('-')")
        return ndjson.read_file(source)
    if source is None:
        raise user_error(f"the {fmt} format reads a folder, not stdin", "name the folder to import")
    if fmt == "eidetic-cli":
        return eidetic_cli.read(source)
    if not source.is_dir():
        raise user_error(f"not a folder: {source}", "a markdown memory folder is a directory of .md files")
    return markdown.read(source, default_scope)


def validate(raw: Any, default_scope: Scope, max_text_bytes: int) -> tuple[Record, Usage | None]:
    """An item checked like remember checks its input (``record_from_input``), but keeping what
    an import carries across: lifecycle, its history, updated and usage (remember ignores them)."""
    record, _ = record_from_input(raw, default_scope=default_scope, added_by=None, max_text_bytes=max_text_bytes)
    lifecycle = raw.get("lifecycle") or "active"
    if lifecycle not in LIFECYCLES:
        raise user_error(f"unknown lifecycle {lifecycle!r}", "lifecycle is one of " + ", ".join(LIFECYCLES))
    updated = _timestamp(raw, "updated")
    count = raw.get("recall_count") or 0
    if isinstance(count, bool) or not isinstance(count, (int, float)) or not math.isfinite(count) or count < 0:
        raise user_error(f"'recall_count' must be a number >= 0 (got {count!r})", 'e.g. "recall_count": 3')
    last = _timestamp(raw, "last_recall")
    usage = (float(count), last) if count or last else None
    try:
        history = parse_history(raw.get("history"))
    except ValueError as exc:
        raise user_error(
            str(exc), 'e.g. "history": [{"at": "2026-11-30T08:00:00+00:00", "from": "active", "to": "archived"}]'
        ) from None
    return record.with_changes(lifecycle=lifecycle, updated=updated, history=history), usage


def _timestamp(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is not None and (not isinstance(value, str) or parse_ts(value) is None):
        raise user_error(f"'{key}' is not an ISO-8601 date: {value!r}", "e.g. 2026-11-30T08:00:00+00:00, or null")
    return value


def import_entries(
    memory: Memory,
    entries: Iterable[Entry],
    default_scope: Scope,
    max_text_bytes: int,
    progress: Callable[[int], None] | None = None,
    allow_secrets: bool = False,
) -> dict[str, Any]:
    """Validate every entry, write the good ones in atomic batches, report the bad ones;
    ``progress`` hears how many were imported so far, after each batch.

    A public record that holds a credential is a bad one (skipped, ``"credential": true``) unless
    ``allow_secrets``; a private one is imported, and ``warnings`` say so (``credentials``).

    An id given twice with the same content is imported once (concatenated per-scope exports
    repeat the public records); with different content the later one is skipped: eidetic ids
    are unique across scopes, and silently keeping either would lose the other.
    """
    seen: dict[str, tuple[dict[str, Any], str]] = {}  # id -> (where first seen, content digest)
    skipped: list[dict[str, Any]] = []
    batch: list[tuple[Record, Usage | None]] = []
    imported = written = 0
    screen = Screen(allow_secrets)

    def flush() -> None:
        nonlocal imported, written, batch
        done = memory.restore(batch)
        imported, written = imported + done["records"], written + done["written"]
        if progress is not None:
            progress(imported)
        batch = []

    for entry in entries:
        if entry.error is not None:
            skipped.append({**entry.where, "error": entry.error})
            continue
        try:
            record, usage = validate(entry.raw, default_scope, max_text_bytes)
            screen.check(record)
        except EideticError as exc:
            skipped.append({**entry.where, "error": exc.message, **({"credential": True} if exc.override else {})})
            continue
        digest = _digest(record, usage)
        if record.id in seen:
            first, first_digest = seen[record.id]
            if first_digest != digest:
                skipped.append(
                    {
                        **entry.where,
                        "error": f"id {record.id!r} was already imported with other content from {place(first)}",
                    }
                )
            continue
        seen[record.id] = (entry.where, digest)
        batch.append((record, usage))
        if len(batch) >= BATCH:
            flush()
    flush()
    return {
        "imported": imported,
        "written": written,
        "unchanged": imported - written,
        "skipped": skipped,
        "warnings": screen.warnings(),
    }


def _digest(record: Record, usage: Usage | None) -> str:
    text = json.dumps([record.to_dict(), usage], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def place(where: dict[str, Any]) -> str:
    """Where an item came from, for people: ``file:line``, ``file`` or ``line N``."""
    if "path" in where:
        return ":".join(str(where[key]) for key in ("path", "line") if key in where)
    return f"line {where['line']}"
