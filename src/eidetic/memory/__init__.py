"""The Python API: :class:`Memory`, the front door over the parts that do the work.

- ``stores``: which stores a caller reads and writes, their precedence, where an id lives;
- ``recall``: one :class:`~eidetic.query.RecallQuery` through the ranking of its mode
  (``ranked``, ``fields_mode``), linked records and usage;
- ``writes``: validate, decide under the locks, write, shadow, embed (``embedding``); a new
  record's near-duplicates in its scope (``similar``);
- ``curation``: one record by id, forget/restore/purge, the sweep rules;
- ``browse``: listings and one record with its connections (never counted as recalls);
- ``editing``: one record as a markdown file a person edits, read back as remember input;
- ``health``: overview, doctor, audit, index status.

Data flow of a recall: query -> each store's index (synced with its files; scope, lifecycle and
filters pushed into SQL) -> ranking (pure) -> usage bump -> result. Of a remember: input ->
validation of the whole batch -> vectors of its texts -> decisions under the store locks
(upsert, duplicates, near-duplicates, shadowing) -> atomic writes -> index update.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embed.cache import VectorCache
from ..errors import unknown_backend, user_error
from ..listing import ListQuery
from ..locations import StorePlan, plan_stores
from ..progress import Progress
from ..query import RecallQuery
from ..ranking import fields
from ..ranking.access import Access
from ..settings import Settings
from ..stores.backends import BACKENDS, NAMES, SERVERS
from ..timeutil import now_utc
from ..usage import UsageState
from .embedding import Embedding
from .recall import Recall
from .stores import StoreSet

if TYPE_CHECKING:  # the parts a recall never uses are imported when first used (a new process
    # that only recalls imports ~20 modules fewer: docs/benchmarks.md, issue 32)
    from ..records import Record
    from ..results import (
        ConsolidateReport,
        DoctorReport,
        ListResult,
        RecallResult,
        RecordView,
        RememberResult,
        StoreOverview,
        SweepReport,
    )
    from ..stores.base import RecordStore
    from .browse import Browse
    from .consolidation import Consolidation
    from .curation import Curation
    from .thread_view import ThreadView
    from .writes import NdjsonLines, Writes

__all__ = ["Memory"]
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
        settings: Settings | None = None,
    ) -> None:
        """``plan`` names the folders of the ``files`` backend; ``location`` is the database
        file (``sqlite``), the DSN (``postgres``) or the URI (``neo4j``) of the others, which are
        one store each.
        ``settings`` default to the environment's (:meth:`Settings.load`)."""
        if backend not in BACKENDS:
            raise unknown_backend(backend, NAMES)
        self.settings = settings if settings is not None else Settings.load()
        self.backend = backend
        if plan is None and backend == "files":
            plan = plan_stores(data_dir=self.settings.data_dir)
        self.plan = plan
        self.location = location
        self.usage = usage or UsageState(self.settings.state_dir / "usage.sqlite")
        self.progress = Progress()  # long runs report here; set ``progress.listener`` to show them
        self._stores = StoreSet(backend, self.plan, location, self.usage, self.settings, self.progress)
        self._embedding = Embedding(
            VectorCache(self.settings.cache_dir / "vectors.sqlite"), self.settings, self.progress
        )
        self._recall = Recall(self._stores, self._embedding)

    # the parts besides recall, made when first used
    @cached_property
    def _writes(self) -> Writes:
        from .writes import Writes

        return Writes(self._stores, self._embedding)

    @cached_property
    def _curation(self) -> Curation:
        from .curation import Curation

        return Curation(self._stores, self._writes)

    @cached_property
    def _browse(self) -> Browse:
        from .browse import Browse

        return Browse(self._stores, self._curation)

    @cached_property
    def _consolidation(self) -> Consolidation:
        from .consolidation import Consolidation

        return Consolidation(self._stores, self._embedding)

    @classmethod
    def open(
        cls,
        memory_dirs: Sequence[str | Path] | None = None,
        cwd: Path | None = None,
        *,
        backend: str | None = None,
        db: str | Path | None = None,
        dsn: str | None = None,
        uri: str | None = None,
        settings: Settings | None = None,
    ) -> Memory:
        """The caller's stores. ``backend`` defaults to the settings' (``EIDETIC_BACKEND``, else
        ``files``): the repository and home folders (or ``memory_dirs``); for ``sqlite``, the
        database ``db`` (default ``EIDETIC_SQLITE_PATH``, else ``~/.eidetic/memory.sqlite``); for
        ``postgres``, the server at ``dsn`` (default ``EIDETIC_PG_DSN``); for ``neo4j``, the graph
        server at ``uri`` (default ``EIDETIC_NEO4J_URI``; user and password from the URI, else
        ``EIDETIC_NEO4J_USER`` and ``EIDETIC_NEO4J_PASSWORD``)."""
        settings = settings if settings is not None else Settings.load()
        backend = backend or settings.backend
        if backend == "files":
            return cls(plan_stores(memory_dirs, cwd, settings.data_dir), settings=settings)
        if memory_dirs:
            raise user_error(
                f"--memory-dir names folders of the files backend, not of {backend}",
                "use " + ", ".join(f"{b.flag} for {b.name}" for b in BACKENDS.values() if b.name != "files")
                if backend in BACKENDS
                else "",
            )
        row = BACKENDS.get(backend)
        if row is None or row.setting is None:  # files (one setting names no plan of folders) was above
            return cls(backend=backend, settings=settings)  # raises: unknown backend
        # the keyword named as the backend's flag (``--db``: db), else its setting, else its default
        location = {"db": db, "dsn": dsn, "uri": uri}[row.option] or getattr(settings, row.setting) or row.default
        if not location:
            raise user_error(f"the {backend} backend needs a server address", row.server_hint or "")
        if backend not in SERVERS:  # a file: a path, ``~`` expanded
            location = Path(location).expanduser()
        return cls(backend=backend, location=location, settings=settings)

    def twin(self) -> Memory:
        """Another ``Memory`` on the same stores, with the same settings: for a thread of its
        own (a store's connections belong to the thread that opened them)."""
        return type(self)(self.plan, backend=self.backend, location=self.location, settings=self.settings)

    def close(self) -> None:
        self.progress.close()
        self._embedding.close()
        self._stores.close()
        self.usage.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def access(self, scope: str | None = None, visibility: str | None = None, **flags: bool) -> Access:
        """The caller's access: the scope and visibility given, else the settings' (a config
        file, ``EIDETIC_SCOPE``), else the default scope, public."""
        return Access.of(scope or self.settings.scope, visibility or self.settings.visibility, **flags)

    def stores(self) -> list[RecordStore]:
        """The read stores, in precedence order (an id in an earlier store hides later copies)."""
        return self._stores.all()

    # -- remember ------------------------------------------------------------------------

    def remember(
        self,
        records: Iterable[Any] | NdjsonLines,
        *,
        scope: str | None = None,
        visibility: str | None = None,
        added_by: str | None = None,
        now: datetime | None = None,
        embed: bool = True,
        writer: Access | None = None,
        on_similar: str = "write",
        allow_secrets: bool = False,
    ) -> RememberResult:
        """Validate every record (dicts in the JSON record format, or :class:`Record` objects),
        then upsert them all; nothing is written if any is invalid. ``scope``/``visibility``:
        of records that name none (default: the settings'). ``embed``: compute the new texts'
        vectors now (else at the first recall that needs them; near-duplicates are then judged
        by text alone). ``writer`` confines the batch to scopes it may read (an MCP session).
        ``on_similar``: what a new record does whose near-duplicates (``similar_to``) are in its
        scope: ``write`` it anyway, ``skip`` it, or write it to ``supersede`` the closest. A public
        record that holds a credential (an API key, a token, a private key, a password) refuses the
        batch unless ``allow_secrets``; a private one is written with a warning (``credentials``)."""
        from ..credentials import Screen
        from .similar import checked
        from .writes import NdjsonLines, collector_paused, labelled, validate

        on_similar = checked(on_similar)
        items = records.lines if isinstance(records, NdjsonLines) else labelled(records)
        default_scope = self.access(scope, visibility).scope
        screen = Screen(allow_secrets)
        with collector_paused():
            batch = validate(items, default_scope, added_by, writer, self.settings.max_text_bytes, screen)
            from . import record_types

            typos = [
                message
                for scope in {record.scope for record, _ in batch}
                for message in record_types.warnings(
                    self._stores, (record.type for record, _ in batch if record.scope == scope), Access(scope), new=True
                )
            ]
            result = self._writes.remember(batch, now or now_utc(), embed, on_similar=on_similar, writer=writer)
        result.warnings[:0] = [*screen.warnings(), *typos]
        return result

    def remember_ndjson(self, lines: Iterable[str], **options: Any) -> RememberResult:
        """NDJSON input, with ``remember``'s options: every line is parsed and validated before
        anything is written."""
        from .writes import NdjsonLines, ndjson_items

        return self.remember(NdjsonLines(ndjson_items(lines)), **options)

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
        query = query.with_access_defaults(self.settings)
        result = self._recall.run(query)
        result.warnings += self.type_warnings(query.types, query.access())
        return result

    # -- browsing and editing (never counted as recalls) -----------------------------------

    def list_records(self, query: ListQuery | None = None, **options: Any) -> ListResult:
        """A page of the records the caller may see, in an order (a :class:`ListQuery`, or its
        fields as keywords: ``types``, ``filters``, ``scope``, ``sort``, ``limit``, ...), and
        how many match in all."""
        if query is None:
            query = ListQuery(**options)
        elif options:
            raise TypeError("give options in the ListQuery, not beside it")
        return self._browse.listing(query.with_access_defaults(self.settings))

    def type_warnings(self, types: Iterable[str], access: Access) -> list[str]:
        """A warning for each type of a filter that no record ``access`` may see has (a typo such
        as ``decisoin``, or ``decisions``), naming the close ones and the known types."""
        from . import record_types

        return record_types.warnings(self._stores, types, access, new=False)

    def show(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> RecordView:
        """One record with its usage, where it lives and its connections both ways; a missing
        and an out-of-scope id give the same error."""
        return self._browse.show(rid, self.access(scope, visibility))

    def thread(
        self, rid: str, *, scope: str | None = None, visibility: str | None = None, span: int = 3
    ) -> ThreadView | None:
        """The record's conversation around it: up to ``span`` members of its thread before and
        after it that the caller may read (None when it is in no thread; a missing and an
        out-of-scope id give the same error as ``show``). Three a side: a question, its answer
        and the turn after. Not a recall."""
        from .thread_view import thread_view

        access = self.access(scope, visibility)
        _, item = self._curation.visible(rid, access)
        return thread_view(self._stores.synced(), item.record, access, span)

    def save_edit(
        self,
        original: Record,
        text: str,
        *,
        scope: str | None = None,
        visibility: str | None = None,
        embed: bool = True,
        allow_secrets: bool = False,
    ) -> RememberResult:
        """Save an edit of ``original`` (``text``: the markdown file of
        :func:`~eidetic.memory.editing.edit_text`, changed): checked as remember checks input
        (credentials too), written only if the record is still stored as ``original`` was."""
        from ..credentials import Screen
        from . import editing
        from .writes import validate

        access = self.access(scope, visibility)
        raw = editing.edited_input(text, original)
        screen = Screen(allow_secrets)
        batch = validate(
            [("the edited record", raw)],
            original.scope,
            None,
            access,
            self.settings.max_text_bytes,
            screen,
        )
        result = self._writes.remember(batch, now_utc(), embed, expected=original, writer=access)
        result.warnings[:0] = screen.warnings()
        return result

    # -- one record, lifecycle -------------------------------------------------------------

    def get(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> Record:
        """One record by id, if the caller's scope may see it (any lifecycle state); a missing
        and an out-of-scope id give the same error."""
        return self._curation.visible(rid, self.access(scope, visibility))[1].record

    def set_lifecycle(
        self,
        rid: str,
        state: str,
        *,
        scope: str | None = None,
        visibility: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Archive (``forget``) or restore one record; undoable, nothing is deleted. ``now``:
        the time its history gives the change (a timezone-aware ``datetime``; default now)."""
        return self._curation.set_lifecycle(rid, state, self.access(scope, visibility), now)

    def purge(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> dict[str, Any]:
        """Remove a record's file, index entries and usage for good."""
        return self._curation.purge(rid, self.access(scope, visibility))

    def sweep(self, access: Access | None = None, *, dry_run: bool = False, now: datetime | None = None) -> SweepReport:
        """Apply the lifecycle rules to every record; report what ``access`` (default: the
        default scope, public) may see."""
        return self._curation.sweep(access or self.access(), dry_run, now)

    def consolidate(
        self,
        access: Access | None = None,
        *,
        keep: str = "recent",
        threshold: float | None = None,
        survivor: str | None = None,
        text: str | None = None,
        apply: bool = False,
        now: datetime | None = None,
    ) -> ConsolidateReport:
        """Near-duplicate clusters per store and scope that ``access`` may see (default: the
        settings' scope), each with its proposed survivor (``keep``: "recent" or "recalled");
        a dry run unless ``apply``. ``survivor``: only the cluster formed around that id, whose
        text becomes ``text`` when given. ``eidetic explain consolidate`` has the rules."""
        from ..ranking.similar import SIMILAR_COSINE
        from .consolidation import ConsolidateOptions

        options = ConsolidateOptions(keep, SIMILAR_COSINE if threshold is None else threshold, survivor, text, apply)
        return self._consolidation.run(access or self.access(), options, now)

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
        from . import health

        return health.overview(self._stores, health.every_state(access))

    def doctor(self, access: Access | None = None) -> DoctorReport:
        """Health checks, naming only what ``access`` may see."""
        from . import health

        return health.doctor(self._stores, health.every_state(access or self.access()))

    def audit(
        self,
        access: Access,
        *,
        stale_months: float = fields.DEFAULT_STALE_MONTHS,
        repo_root: Path | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Grade every record ``access`` may see: fresh, stale or dead-reference."""
        from . import health

        return health.audit(self._stores, access, stale_months, repo_root, now)

    def index_status(self, access: Access | None = None) -> list[dict[str, Any]]:
        """Each store's index state, as ``access`` may see it."""
        from . import health

        return health.index_status(self._stores, health.every_state(access or self.access()))

    def refresh_index(self) -> None:
        """Stat every file of every store now and index what changed."""
        self._stores.synced(full=True)

    def rebuild_index(self) -> list[dict[str, Any]]:
        return [store.rebuild() for store in self.stores() if store.exists()]

    def watch(self, stop_event: Any = None, on_change: Any = None, ready: Any = None) -> None:
        """Keep the files backend's indexes current as files change, until ``stop_event``."""
        from ..stores.files.store import watch

        if self.backend != "files":
            raise user_error(
                f"watch follows record files; the {self.backend} backend has none",
                "its writes are visible to the next recall already",
            )
        watch(self.stores(), stop_event, on_change, ready)
