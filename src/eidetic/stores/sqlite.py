"""The ``sqlite`` backend: one database file is the store (for large private stores, 1M+
records). It has the same schema as the files backend's index, so the same SQL answers every
query, but here it is the store of record: writes are SQLite transactions (WAL, busy timeout:
concurrent writers queue, a crash loses nothing committed) and it is never dropped. Its keyword
and vector indexes are derived, kept in the cache folder, and rebuilt from it when lost.

Processes with different cache folders (two users, a container) may share one database. What
they must agree on lives beside it: the writers' lock (``<database>.lock``). What each derives
on its own side records which database it reflects (the file's ``instance``) and how far into
its history, and catches up with what the others wrote (``index.store_database``); a
database replaced by another file, or restored from a backup, makes it start over."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..index.store_database import StoreDatabase
from ..locations import store_key
from ..progress import Progress
from ..records import Record
from ..settings import Settings
from ..usage import UsageState
from .base import IndexedRecord
from .indexed import IndexedStore

LOCK_TIMEOUT_SECONDS = 60.0


def derived_path_for(database: Path, cache: Path) -> Path:
    """Where the database's derived indexes live: the cache folder, one name per database."""
    digest = hashlib.sha256(store_key(database).encode("utf-8")).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() else "-" for ch in database.stem)[:40] or "db"
    return cache / "sqlite" / f"{safe}-{digest}"


class SqliteStore(IndexedStore):
    """The ``sqlite`` backend: one database file is the store."""

    backend = "sqlite"
    index: StoreDatabase

    def __init__(self, database: Path, usage: UsageState, settings: Settings, progress: Progress | None = None) -> None:
        self.database = database.expanduser().absolute()
        derived = derived_path_for(self.database, settings.cache_dir)
        index = StoreDatabase(self.database, derived, settings.ann_threshold)
        index.progress = progress or index.progress
        super().__init__(index, store_key(self.database), str(self.database), usage)

    def exists(self) -> bool:
        return self.database.is_file()

    def sync(self, full: bool = False) -> None:
        """Bring the derived indexes up to what any process wrote to the database."""
        self.index.follow()

    def broken(self) -> list[tuple[str, str]]:
        return []  # rows are written whole by transactions: nothing can be half-parsed

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Serialises writers' decide-then-write steps (the transaction serialises only the
        writes), for every process on this database: the lock file is beside it, not in a
        cache folder that another user's processes do not share."""
        import filelock

        self.database.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(f"{self.database}.lock", timeout=LOCK_TIMEOUT_SECONDS):
            yield

    def current(self, item: IndexedRecord) -> Record:
        return item.record

    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> dict[str, str | None]:
        self.index.put([(old.doc if old is not None else None, record) for old, record in items])
        return dict.fromkeys((record.id for _, record in items), None)

    def delete(self, item: IndexedRecord) -> None:
        self.index.drop_doc(item.doc)

    def file_of(self, item: IndexedRecord) -> str | None:
        return None

    def rebuild(self) -> dict[str, Any]:
        self.index.rebuild()
        return {
            "store": self.location,
            "index": str(self.index.derived),
            "records": self.index.docs.count(),
            "unparseable": 0,
        }


def open_store(database: str | Path, usage: UsageState, settings: Settings, progress: Progress) -> SqliteStore:
    """The sqlite store in the file ``database`` (``stores.backends`` opens every backend so)."""
    return SqliteStore(Path(database), usage, settings, progress)
