"""Markdown memory folders (as coding agents keep them; also an eidetic files store): one ``.md`` file per record,
front matter ``name``/``description``/``type`` (and any record field), the body is the text.

Files are found and parsed exactly as the files store finds and parses them (``RecordFolder.walk``,
``frontmatter.parse``): ``MEMORY.md``, hidden files and symlinks are skipped, and a file without
an ``id`` takes its path without ``.md``, so a folder imported gets the ids it has when used
directly with ``--memory-dir``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .. import frontmatter
from ..records import Scope
from ..stores.files.folder import RecordFolder
from . import Entry


def read(root: Path, default_scope: Scope) -> Iterator[Entry]:
    """Every record file under ``root``, in path order; ``default_scope`` for files naming none."""
    files = RecordFolder(root)
    paths = sorted(rel for _, _, found in files.walk() for rel in found)
    for rel in paths:
        where = {"path": rel}
        try:
            content, _ = files.read_text(rel)
            record = frontmatter.parse(content, rel[:-3], default_scope)
        except UnicodeDecodeError:
            yield Entry(where, error="not UTF-8")
        except (OSError, ValueError) as exc:
            yield Entry(where, error=str(exc))
        else:
            yield Entry(where, record.to_dict())
