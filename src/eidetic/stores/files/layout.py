"""How a files store lays out its folder: where a new record's file goes, what the file says
first, what else a write updates, and where the writer's lock and staging live.

- :class:`HashedLayout`, eidetic's own: ``<2 hex chars>/<file name>`` (``records.record_path``),
  the lock and staging folders hidden in the store.
- :class:`AgentLayout`, a coding agent's memory folder (one holding ``MEMORY.md``): flat files
  named from the record's name, front matter led by the fields the agent reads (``name``,
  ``description``, ``type``; eidetic's own follow, so it reads the file back whole), one
  ``MEMORY.md`` line per active record (``memory_md``), and nothing of eidetic's in the folder:
  the lock and staging live in a hidden folder beside it, on its file system.

``MarkdownStore`` asks its layout and never which one it has.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ... import frontmatter
from ...errors import env_error, user_error
from ...records import RESERVED_STEMS, Record, record_path
from ..base import IndexedRecord
from . import memory_md
from .folder import RecordFolder

# (the stored copy or None, its file relative to the store, the new version or None when deleted)
Change = tuple["IndexedRecord | None", str, "Record | None"]
AGENT_LEAD = ("name", "description", "type")  # what the agent reads, written first
MAX_STEM = 64


class Layout(Protocol):
    scratch: Path | None  # where the lock and staging live; None: hidden in the store

    def render(self, record: Record) -> str:
        """The text of a record's file."""

    def new_paths(self, records: Sequence[Record], folder: RecordFolder) -> list[str]:
        """Free, distinct files (relative to the store) for records new to it, in order."""

    def index_files(self, folder: RecordFolder, changes: Sequence[Change]) -> list[tuple[str, str]]:
        """Files to write in the same batch as these changes, before the record files (the
        caller holds the lock)."""


def layout_for(root: Path) -> Layout:
    """The agent layout for a folder holding ``MEMORY.md`` (even a dangling link: eidetic then
    refuses to write rather than switch layouts), else the hashed layout."""
    return AgentLayout(root) if os.path.lexists(root / memory_md.NAME) else HashedLayout()


class HashedLayout:
    scratch: Path | None = None

    def render(self, record: Record) -> str:
        return frontmatter.render(record)

    def new_paths(self, records: Sequence[Record], folder: RecordFolder) -> list[str]:
        return [self._new_path(record.id, folder) for record in records]

    def _new_path(self, rid: str, folder: RecordFolder) -> str:
        """The id's own path; a hash-suffixed name if something (a hand-written file, a folder)
        is already there."""
        path = record_path(rid)
        if not folder.taken(path):
            return path
        shard, _, name = path.partition("/")
        alt = f"{shard}/{name[:-3].split('~')[0][:60]}~{hashlib.sha256(rid.encode()).hexdigest()[:16]}.md"
        if not folder.taken(alt):
            return alt
        raise user_error(
            f"cannot find a free file name for id {rid!r}", f"move or rename the file {path} in {folder.root}"
        )

    def index_files(self, folder: RecordFolder, changes: Sequence[Change]) -> list[tuple[str, str]]:
        return []


class AgentLayout:
    def __init__(self, root: Path) -> None:
        real = root.resolve()  # beside the real folder: on its file system
        self.scratch: Path | None = real.parent / f".{real.name or 'root'}.eidetic"

    def render(self, record: Record) -> str:
        return frontmatter.render(record, AGENT_LEAD)

    def new_paths(self, records: Sequence[Record], folder: RecordFolder) -> list[str]:
        """Flat names from each record's name (else its id), told apart by ``-2``, ``-3``...:
        never a name the folder holds in any letter case, nor one given earlier in the batch."""
        taken = {name.lower() for name in folder.names()}
        paths = []
        for record in records:
            name = free_name(record, taken)
            taken.add(name.lower())
            paths.append(name)
        return paths

    def index_files(self, folder: RecordFolder, changes: Sequence[Change]) -> list[tuple[str, str]]:
        """``MEMORY.md`` with a line for each record that became active, the line of each that
        changed title or hook rewritten, and the lines of records archived, shadowed or deleted
        removed; unchanged when no line changes (the user's own wording is kept)."""
        lines: dict[str, str | None] = {}
        for old, rel, new in changes:
            line = _line(new, rel)
            if old is None or _line(old.record, rel) != line:
                lines[rel] = line
        if not lines:
            return []
        text = _read_index(folder)
        revised = memory_md.revise(text, lines)
        return [] if revised == text else [(memory_md.NAME, revised)]


def _line(record: Record | None, rel: str) -> str | None:
    """The record's MEMORY.md line; None when it has none (deleted, archived or shadowed)."""
    return memory_md.entry_line(record, rel) if record is not None and record.lifecycle == "active" else None


def _read_index(folder: RecordFolder) -> str:
    """The folder's MEMORY.md ('' when gone), read without following a symlink."""
    where = folder.root / memory_md.NAME
    try:
        return folder.read_text(memory_md.NAME)[0]
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise env_error(
            f"{where} is not UTF-8 text, so eidetic cannot add its line without changing yours",
            "save it as UTF-8; nothing was written",
        ) from None
    except OSError as exc:
        reason = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise env_error(f"refusing to rewrite {where}: {reason}", "make it a plain file; nothing was written") from None


def free_name(record: Record, taken: set[str]) -> str:
    """A file name for a new record that no name in ``taken`` (lower case) has."""
    stem = file_stem(record)
    digest = hashlib.sha256(record.id.encode("utf-8")).hexdigest()[:16]
    for candidate in (stem, *(f"{stem}-{number}" for number in range(2, 100)), f"{stem}-{digest}"):
        if candidate not in RESERVED_STEMS and f"{candidate}.md" not in taken:
            return f"{candidate}.md"
    raise user_error(
        f"cannot find a free file name for record {record.id!r}", "give it another name, or tidy the memory folder"
    )


def file_stem(record: Record) -> str:
    """The record's name (else its id) as lower-case ASCII letters, digits, ``_`` and ``-``, at
    most 64 characters: no separators, dots or hidden names, so it stays in the folder."""
    for source in (record.name, record.id):
        stem = slug(source or "")
        if stem:
            return stem
    return "note-" + hashlib.sha256(record.id.encode("utf-8")).hexdigest()[:8]


def slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9_-]+", "_", ascii_text).strip("_-")[:MAX_STEM].strip("_-")
