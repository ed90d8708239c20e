"""The Python API: :class:`Memory`, the front door over the parts that do the work.

- ``stores``: which stores a caller reads and writes, their precedence, where an id lives;
- ``recall``: one :class:`~eidetic.query.RecallQuery` through the ranking of its mode
  (``ranked``, ``fields_mode``), linked records and usage;
- ``writes``: validate, decide under the locks, write, shadow, embed (``embedding``);
- ``curation``: one record by id, forget/restore/purge, the sweep rules;
- ``health``: overview, doctor, audit, index status.

Data flow of a recall: query -> each store's index (synced with its files; scope, lifecycle and
filters pushed into SQL) -> ranking (pure) -> usage bump -> result. Of a remember: input ->
validation of the whole batch -> decisions under the store locks (upsert, duplicates,
shadowing) -> atomic writes -> index update -> vectors.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from json import JSONDecodeError

from ..embed.cache import VectorCache
from ..errors import user_error
from ..locations import StorePlan, cache_dir, plan_stores, usage_db_path
from ..query import RecallQuery
from ..ranking import fields
from ..ranking.access import Access
from ..records import Record, load_json
from ..results import DoctorReport, RecallResult, RememberResult, StoreOverview, SweepReport
from ..stores.base import BACKENDS, RecordStore
from ..timeutil import now_utc
from ..usage import UsageState
from . import health
from .curation import Curation
from .embedding import Embedding
from .recall import Recall
from .stores import StoreSet
from .writes import Writes, labelled, max_text_bytes, validate

__all__ = ["Memory", "max_text_bytes"]
Usage = tuple[float, "str | None"]


class Memory:
    """A handle on the stores one caller reads and writes.

    >>> mem = Memory.open(memory_dirs=["/tmp/notes"])          # doctest: +SKIP
    >>> mem.remember([{"id": "n1", "text": "Deploys run on Fridays"}])  # doctest: +SKIP
    >>> mem.recall("deploy day", mode="keyword").items[0].record.id     # doctest: +SKIP
    'n1'
    """

    def __init__(
        self,
        plan: StorePlan | None = None,
        usage: UsageState | None = None,
        *,
        backend: str = "files",
        location: str | Path | None = None,
    ) -> None:
        """``plan`` names the folders of the ``files`` backend; ``location`` is the database
        file (``sqlite``) or the DSN (``postgres``) of the others, which are one store each."""
        if backend not in BACKENDS:
            raise user_error(
                f"unknown backend {backend!r}",
                "available backends: " + ", ".join(BACKENDS) + " (mongo and neo4j are not provided)",
            )
        self.backend = backend
        self.plan = plan if plan is not None or backend != "files" else plan_stores()
        self.location = location
        self.usage = usage or UsageState(usage_db_path())
        self._stores = StoreSet(backend, self.plan, location, self.usage)
        self._embedding = Embedding(VectorCache(cache_dir() / "vectors.sqlite"))
        self._recall = Recall(self._stores, self._embedding)
        self._writes = Writes(self._stores, self._embedding)
        self._curation = Curation(self._stores, self._writes)

    @classmethod
    def open(
        cls,
        memory_dirs: Sequence[str | Path] | None = None,
        cwd: Path | None = None,
        *,
        backend: str | None = None,
        db: str | Path | None = None,
        dsn: str | None = None,
    ) -> "Memory":
        """The caller's stores. ``backend`` defaults to ``EIDETIC_BACKEND``, else ``files``:
        the repository and home folders (or ``memory_dirs``); for ``sqlite``, the database
        ``db`` (default ``EIDETIC_SQLITE_PATH``, else ``~/.eidetic/memory.sqlite``); for
        ``postgres``, the server at ``dsn`` (default ``EIDETIC_PG_DSN``)."""
        backend = backend or os.environ.get("EIDETIC_BACKEND", "").strip() or "files"
        if backend == "files":
            return cls(plan_stores(memory_dirs, cwd))
        if memory_dirs:
            raise user_error(
                f"--memory-dir names folders of the files backend, not of {backend}",
                "use --db for sqlite, --dsn for postgres" if backend in BACKENDS else "",
            )
        if backend == "sqlite":
            from ..stores.sqlite import default_database

            return cls(backend=backend, location=Path(db).expanduser() if db else default_database())
        if backend == "postgres":
            dsn = dsn or os.environ.get("EIDETIC_PG_DSN", "").strip()
            if not dsn:
                raise user_error(
                    "the postgres backend needs a server address",
                    "set EIDETIC_PG_DSN or pass --dsn, e.g. postgresql://eidetic@db.internal/eidetic",
                )
            return cls(backend=backend, location=dsn)
        return cls(backend=backend)  # raises: unknown backend

    def close(self) -> None:
        self._embedding.close()
        self._stores.close()
        self.usage.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def progress(self) -> Any:
        """An optional callback(done, total) for long embedding runs (a progress bar)."""
        return self._embedding.progress

    @progress.setter
    def progress(self, callback: Any) -> None:
        self._embedding.progress = callback

    def stores(self) -> list[RecordStore]:
        """The read stores, in precedence order (an id in an earlier store hides later copies)."""
        return self._stores.all()

    # -- remember ------------------------------------------------------------------------

    def remember(
        self,
        records: Iterable[Any],
        *,
        scope: str | None = None,
        visibility: str | None = None,
        added_by: str | None = None,
        now: datetime | None = None,
        embed: bool = True,
        writer: Access | None = None,
    ) -> RememberResult:
        """Validate every record (dicts in the JSON record format, or :class:`Record` objects),
        then upsert them all; nothing is written if any is invalid. ``embed``: compute the new
        texts' vectors now (else at the first recall that needs them). ``writer`` confines the
        batch to scopes it may read (an MCP session)."""
        batch = validate(labelled(records), scope, visibility, added_by, writer)
        return self._writes.remember(batch, now or now_utc(), embed)

    def remember_ndjson(
        self,
        lines: Iterable[str],
        *,
        scope: str | None = None,
        visibility: str | None = None,
        added_by: str | None = None,
        now: datetime | None = None,
        embed: bool = True,
        writer: Access | None = None,
    ) -> RememberResult:
        """NDJSON input: every line is parsed and validated before anything is written."""

        def parsed() -> Iterator[tuple[str, Any]]:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield f"line {number}", load_json(line)
                except JSONDecodeError as exc:
                    raise user_error(
                        f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})",
                        "each line must be one JSON object; nothing was written",
                    ) from None

        batch = validate(parsed(), scope, visibility, added_by, writer)
        return self._writes.remember(batch, now or now_utc(), embed)

    def restore(self, items: Iterable[tuple[Record, Usage | None]]) -> dict[str, int]:
        """Write records exactly as given (lifecycle, dates) with their usage: how ``migrate``
        and ``import`` carry a store across. Idempotent."""
        return self._writes.restore(items)

    # -- recall --------------------------------------------------------------------------

    def recall(self, query: str | RecallQuery, **options: Any) -> RecallResult:
        """Rank records for ``query`` (a :class:`RecallQuery`, or its text with the query's
        fields as keywords: ``mode``, ``top_k``, ``filters``, ``scope``, ...)."""
        if not isinstance(query, RecallQuery):
            query = RecallQuery(query, **options)
        elif options:
            raise TypeError("give options in the RecallQuery, not beside it")
        return self._recall.run(query)

    # -- one record, lifecycle -------------------------------------------------------------

    def get(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> Record:
        """One record by id, if the caller's scope may see it (any lifecycle state); a missing
        and an out-of-scope id give the same error."""
        return self._curation.visible(rid, Access.of(scope, visibility))[1].record

    def set_lifecycle(
        self, rid: str, state: str, *, scope: str | None = None, visibility: str | None = None
    ) -> dict[str, Any]:
        """Archive (``forget``) or restore one record; undoable, nothing is deleted."""
        return self._curation.set_lifecycle(rid, state, Access.of(scope, visibility))

    def purge(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> dict[str, Any]:
        """Remove a record's file, index entries and usage for good."""
        return self._curation.purge(rid, Access.of(scope, visibility))

    def sweep(self, access: Access | None = None, *, dry_run: bool = False, now: datetime | None = None) -> SweepReport:
        """Apply the lifecycle rules to every record; report what ``access`` (default: the
        default scope, public) may see."""
        return self._curation.sweep(access or Access(), dry_run, now)

    # -- everything at once ----------------------------------------------------------------

    def iter_records(self, access: Access) -> Iterator[tuple[str, Record]]:
        """Every record ``access`` may see, with its store's key."""
        for store, item in self._stores.entries(access):
            if access.admits(item.record.scope, item.record.lifecycle):
                yield store.key, item.record

    def export_all(self, access: Access | None = None) -> Iterator[tuple[Record, Usage | None]]:
        """Every record of every store with its usage (what ``migrate`` copies); with
        ``access``, only what it may see (what ``export`` writes)."""
        entries = [
            (store, item)
            for store, item in self._stores.entries(access)
            if access is None or access.admits(item.record.scope, item.record.lifecycle)
        ]
        for store in {store.key: store for store, _ in entries}.values():
            mine = [item.record for s, item in entries if s is store]
            usage = store.usage(record.id for record in mine)
            for record in mine:
                yield record, usage.get(record.id)

    # -- health --------------------------------------------------------------------------

    def overview(self, access: Access) -> list[StoreOverview]:
        """Per store: what ``access`` may see by scope and lifecycle; others' private scopes
        are not even counted."""
        return health.overview(self._stores, health.every_state(access))

    def doctor(self, access: Access | None = None) -> DoctorReport:
        """Health checks, naming only what ``access`` may see."""
        return health.doctor(self._stores, health.every_state(access or Access()))

    def audit(
        self,
        access: Access,
        *,
        stale_months: float = fields.DEFAULT_STALE_MONTHS,
        repo_root: Path | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Grade every record ``access`` may see: fresh, stale or dead-reference."""
        return health.audit(self._stores, access, stale_months, repo_root, now)

    def index_status(self, access: Access | None = None) -> list[dict[str, Any]]:
        """Each store's index state, as ``access`` may see it."""
        return health.index_status(self._stores, health.every_state(access or Access()))

    def refresh_index(self) -> None:
        """Stat every file of every store now and index what changed."""
        self._stores.synced(full=True)

    def rebuild_index(self) -> list[dict[str, Any]]:
        return [store.rebuild() for store in self.stores() if store.exists()]

    def watch(self, stop_event: Any = None, on_change: Any = None, ready: Any = None) -> None:
        """Keep the files backend's indexes current as files change, until ``stop_event``."""
        from ..stores.markdown import watch

        if self.backend != "files":
            raise user_error(
                f"watch follows record files; the {self.backend} backend has none",
                "its writes are visible to the next recall already",
            )
        watch(self.stores(), stop_event, on_change, ready)
