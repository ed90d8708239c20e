"""The set of stores one ``Memory`` reads and writes: which they are, in what precedence, where
an id lives, and where a new record goes.

Precedence: an id found in an earlier store hides later copies, but only among the copies a
caller may see (another scope's private copy hides nothing: ``docs/reliability.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..locations import StorePlan
from ..progress import Progress
from ..ranking.access import Access
from ..records import Record, Scope
from ..settings import Settings
from ..stores.backends import BACKENDS
from ..stores.base import IndexedRecord, RecordStore
from ..usage import UsageState

Located = dict[str, tuple[RecordStore, IndexedRecord]]


class StoreSet:
    """The stores of one backend: the folders of a ``files`` plan, or the one database or server."""

    def __init__(
        self,
        backend: str,
        plan: StorePlan | None,
        location: str | Path | None,
        usage: UsageState,
        settings: Settings,
        progress: Progress | None = None,
    ) -> None:
        self.settings = settings
        self.progress = progress or Progress()
        self.backend = backend
        self.plan = plan
        self.location = location
        self.usage = usage
        self._open: dict[str, RecordStore] = {}

    def close(self) -> None:
        for store in self._open.values():
            store.close()

    def _at(self, where: Path | None = None) -> RecordStore:
        """The store at a files root (``files``), or the one store of the other backends."""
        name = str(where) if where is not None else ""
        store = self._open.get(name)
        if store is None:
            backend = BACKENDS["files" if where is not None else self.backend]
            location = where if where is not None else str(self.location)
            store = backend.open(location, self.usage, self.settings, self.progress)
            self._open[name] = store
        return store

    def all(self) -> list[RecordStore]:
        """The read stores, in precedence order."""
        if self.plan is None:
            return [self._at()]
        return [self._at(root) for root in self.plan.read]

    def write_target(self, scope: Scope) -> RecordStore:
        """Where a new record of ``scope`` goes."""
        if self.plan is None:
            return self._at()
        return self._at(self.plan.write_target(scope))

    def synced(self, warnings: list[str] | None = None, full: bool = False) -> list[RecordStore]:
        """The stores that exist, caught up with changes made outside eidetic; what could not be
        read is said in ``warnings`` (five files named, the rest counted)."""
        stores = []
        for store in self.all():
            if not store.exists():
                continue
            store.sync(full=full)
            if warnings is not None:
                broken = store.broken()
                for where, error in broken[:5]:
                    warnings.append(f"skipped unparseable record file {where}: {error}")
                if len(broken) > 5:
                    warnings.append(
                        f"skipped {len(broken) - 5} more unparseable record file(s) of "
                        f"{store.location} ('eidetic index' lists them)"
                    )
            stores.append(store)
        return stores

    def locate(self, ids: Iterable[str], synced: bool, access: Access | None = None) -> Located:
        """Where each id lives now: the first read store that has it (that ``access`` may see,
        when given)."""
        found: Located = {}
        wanted = list(dict.fromkeys(ids))
        for store in self.all():
            if not store.exists():
                continue
            if synced:
                store.sync()
            for rid, item in store.by_ids([i for i in wanted if i not in found]).items():
                if access is None or access.can_serve(item.record.scope):
                    found[rid] = (store, item)
        return found

    def entries(self, access: Access | None = None) -> list[tuple[RecordStore, IndexedRecord]]:
        """Every record of every store (that ``access`` may see, when given), an id in an
        earlier store hiding later copies."""
        seen: set[str] = set()
        out = []
        for store in self.synced():
            for item in store.all_records():
                if access is not None and not access.can_serve(item.record.scope):
                    continue
                if item.record.id not in seen:
                    seen.add(item.record.id)
                    out.append((store, item))
        return out


def records_of(
    stores: list[RecordStore], hits: list[tuple[RecordStore, int]]
) -> dict[tuple[str, int], tuple[Record, str | None]]:
    """(store key, doc) -> (record, its file or None) for these hits: one lookup per store that
    has any, not one per hit (a round trip each on postgres)."""
    records: dict[tuple[str, int], tuple[Record, str | None]] = {}
    for store in stores:
        docs = [doc for owner, doc in hits if owner is store]
        if docs:
            records.update(
                ((store.key, doc), (item.record, store.file_of(item))) for doc, item in store.by_docs(docs).items()
            )
    return records


def hidden(earlier: Iterable[RecordStore], ids: list[str], access: Access) -> set[str]:
    """The ids an earlier store also has in a copy ``access`` may see: that copy is the one that
    resolves. A copy the caller may not see hides nothing."""
    found: set[str] = set()
    for other in earlier:
        found |= {rid for rid, item in other.by_ids(ids).items() if access.can_serve(item.record.scope)}
    return found
