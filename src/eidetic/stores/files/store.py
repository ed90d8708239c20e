"""The ``files`` backend, :class:`MarkdownStore`: records are markdown files in a folder
(:class:`~eidetic.stores.files.folder.RecordFolder`), searched through a derived SQLite + tantivy
index in the cache folder (``stores.files.folder_index``) that catches up with hand edits on every
sync and can be dropped at any time."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ... import frontmatter
from ...errors import user_error
from ...locations import index_path_for, store_key
from ...progress import Progress
from ...ranking.access import Access
from ...ranking.filters import Filters
from ...records import Record
from ...settings import Settings
from ...usage import UsageState
from ..base import FieldsRow, IndexedRecord, RecordStore
from ..indexed import IndexedStore
from .folder import RecordFolder
from .folder_index import FolderIndex, SyncReport
from .layout import layout_for


class MarkdownStore(IndexedStore):
    """The ``files`` backend: a folder of markdown record files, laid out as eidetic's own or
    as a coding agent's memory folder (``stores.files.layout``, chosen when the store opens), and
    its derived index."""

    backend = "files"
    index: FolderIndex

    def __init__(self, root: Path, usage: UsageState, settings: Settings, progress: Progress | None = None) -> None:
        self.root = root
        self.layout = layout_for(root)
        self.folder = RecordFolder(root, self.layout.scratch)
        index = FolderIndex(
            self.folder,
            index_path_for(root, settings.cache_dir),
            verify_files=settings.verify_files,
            ann_threshold=settings.ann_threshold,
        )
        index.progress = progress or index.progress
        super().__init__(index, store_key(root), str(root), usage)

    def exists(self) -> bool:
        return self.folder.exists()

    def sync(self, full: bool = False) -> None:
        self.index.sync(full=full)

    def broken(self) -> list[tuple[str, str]]:
        return [(str(self.root / path), error) for path, error in self.index.broken()]

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self.folder.lock():
            self.folder.remove_abandoned_staging()  # a crashed writer's leftovers
            yield

    def current(self, item: IndexedRecord) -> Record:
        """The record as its file says now (a hand edit may not be indexed yet)."""
        assert item.path is not None
        try:
            content, _ = self.folder.read_text(item.path)
            return frontmatter.parse(content, item.path[:-3])
        except (OSError, ValueError, UnicodeDecodeError):
            return item.record

    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> dict[str, str | None]:
        """Each record to its file (new ids to a fresh path from the layout), files and index
        written together. What the layout adds (MEMORY.md) is written first in the same batch,
        so running a killed batch again completes both."""
        fresh = iter(self.layout.new_paths([r for old, r in items if old is None or not old.path], self.folder))
        placed = [(old.path if old is not None and old.path else next(fresh), record) for old, record in items]
        changes = [(old, rel, record) for (old, _), (rel, record) in zip(items, placed)]

        def write_files() -> dict:
            files = self.layout.index_files(self.folder, changes)  # read here: under the lock, just in time
            files += [(rel, self.layout.render(record)) for rel, record in placed]
            return self.folder.write_many(files)

        self.index.apply_writes(placed, write_files)
        return {record.id: str(self.root / rel) for rel, record in placed}

    def delete(self, item: IndexedRecord) -> None:
        assert item.path is not None
        with self.folder.lock():
            self.folder.delete(item.path, self.layout.index_files(self.folder, [(item, item.path, None)]))
            self.index.sync()

    def file_of(self, item: IndexedRecord) -> str | None:
        return str(self.root / item.path) if item.path else None

    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        return [
            (*row[:8], str(self.root / row[8]) if row[8] else None)
            for row in self.search.fields_candidates(terms, access, filters)
        ]

    def rebuild(self) -> dict[str, Any]:
        report = self.index.rebuild()
        with self.folder.lock():
            self.folder.remove_abandoned_staging()
        return {
            "store": self.location,
            "index": str(self.index.path),
            "records": self.index.docs.count(),
            "unparseable": len(report.broken),
        }


def watch(
    stores: Sequence[RecordStore],
    stop_event: Any = None,
    on_change: Callable[[Path, SyncReport], None] | None = None,
    ready: Callable[[list[Path]], None] | None = None,
) -> None:
    """Keep the indexes of these stores current as their files change, until ``stop_event`` is set.

    A file watcher (inotify, FSEvents, ReadDirectoryChangesW through ``watchfiles``) reports
    every change, including edits in place that folder mtimes do not show; each batch is
    marked for re-checking and synced at once, so recall sees it within ~0.1 s at any size.
    Optional: without it, recall still finds every change (see ``stores.files.folder_changes``).
    ``ready`` gets the watched folders once they are synced; ``on_change`` each sync's report.
    """
    import watchfiles

    present: list[MarkdownStore] = []
    for store in stores:
        if not isinstance(store, MarkdownStore):
            raise user_error(
                f"watch follows record files; the {store.backend} backend has none",
                "its writes are visible to the next recall already",
            )
        if store.exists():
            present.append(store)
    if not present:
        raise user_error(
            "no store folder exists yet to watch", "remember something first, or name one with --memory-dir"
        )
    for store in present:
        store.sync(full=True)
    roots = {str(store.root.resolve()): store for store in present}
    if ready is not None:
        ready([store.root for store in present])
    for changes in watchfiles.watch(
        *roots, watch_filter=None, debounce=40, step=10, stop_event=stop_event, rust_timeout=500, yield_on_timeout=True
    ):
        touched: dict[str, list[str]] = {}
        for _, path in changes:
            for root in roots:
                if path.startswith(root + os.sep):
                    touched.setdefault(root, []).append(path[len(root) + 1 :].replace(os.sep, "/"))
        for root, paths in touched.items():
            store = roots[root]
            store.index.mark_dirty(paths)  # checked by content on the next sync
            report = store.index.sync()
            if on_change is not None:
                on_change(store.root, report)


def open_store(root: str | Path, usage: UsageState, settings: Settings, progress: Progress) -> MarkdownStore:
    """The files store at the folder ``root`` (``stores.backends`` opens every backend so)."""
    return MarkdownStore(Path(root), usage, settings, progress)
