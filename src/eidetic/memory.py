"""The Python API: ``Memory`` resolves stores, runs remember and recall, and owns their steps.

Data flow of a recall: flags -> each store's index (synced with its files, scope, lifecycle
and filters pushed into SQL) -> ranking (pure) -> usage bump -> result. Of a remember: input
-> validation of the whole batch -> decisions under the store locks (upsert, duplicates,
shadowing) -> atomic file writes -> index update -> result.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from . import frontmatter
from .errors import EideticError, user_error
from .index.store_index import IndexedRecord, StoreIndex
from .locations import StorePlan, culture_nick, index_path_for, plan_stores, store_key, usage_db_path
from .ranking import freshness
from .ranking.access import Access
from .ranking.filters import Filters
from .ranking.topk import top_k_blended
from .records import (DEFAULT_MAX_TEXT_BYTES, DEFAULT_SCOPE, Record, Scope, check_scope,
                      record_from_input, record_path)
from .results import Hit, RecallResult, RememberResult
from .stores.files import FilesStore
from .timeutil import format_ts, now_utc
from .usage import UsageState

MODES = ("exact", "keyword", "approximate", "hybrid")
KEYWORD_MODES = ("exact", "keyword")


@dataclass
class _Store:
    files: FilesStore
    index: StoreIndex
    key: str


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

    def __init__(self, plan: StorePlan, usage: UsageState | None = None) -> None:
        self.plan = plan
        self.usage = usage or UsageState(usage_db_path())
        self._stores: dict[Path, _Store] = {}

    @classmethod
    def open(cls, memory_dirs: list[str | Path] | None = None, cwd: Path | None = None) -> "Memory":
        return cls(plan_stores(memory_dirs, cwd))

    def close(self) -> None:
        for store in self._stores.values():
            store.index.close()
        self.usage.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _store(self, root: Path) -> _Store:
        store = self._stores.get(root)
        if store is None:
            files = FilesStore(root)
            store = _Store(files, StoreIndex(files, index_path_for(root)), store_key(root))
            self._stores[root] = store
        return store

    def stores(self) -> list[_Store]:
        """The read stores, in precedence order (an id in an earlier store hides later copies)."""
        return [self._store(root) for root in self.plan.read]

    def _synced(self, warnings: list[str] | None = None, full: bool = False) -> list[_Store]:
        stores = []
        for store in self.stores():
            if not store.files.exists():
                continue
            report = store.index.sync(full=full)
            if warnings is not None:
                for path, error in store.index.broken()[:5]:
                    warnings.append(f"skipped unparseable record file {store.files.root / path}: {error}")
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
    ) -> RememberResult:
        """Validate every record, then upsert them all. Nothing is written if any is invalid.

        Inputs may be dicts (the JSON record format) or :class:`Record` objects.
        """
        default_scope = check_scope(scope or DEFAULT_SCOPE.name, visibility or DEFAULT_SCOPE.visibility)
        nick = added_by if added_by is not None else culture_nick()
        limit = max_text_bytes()
        batch: list[tuple[Record, bool]] = []
        for position, raw in enumerate(records, start=1):
            if isinstance(raw, Record):
                raw = {k: v for k, v in raw.to_dict().items() if k not in ("hash", "lifecycle", "updated")}
            try:
                batch.append(record_from_input(raw, default_scope=default_scope, added_by=nick,
                                               max_text_bytes=limit))
            except EideticError as exc:
                exc.message = f"record {position}: {exc.message}"
                raise
        return self._remember_validated(batch, now or now_utc())

    def remember_ndjson(self, lines: Iterable[str], **options: Any) -> RememberResult:
        """NDJSON input: every line is parsed and validated before anything is written."""
        import json

        default_scope = check_scope(options.get("scope") or DEFAULT_SCOPE.name,
                                    options.get("visibility") or DEFAULT_SCOPE.visibility)
        nick = options["added_by"] if options.get("added_by") is not None else culture_nick()
        limit = max_text_bytes()
        batch: list[tuple[Record, bool]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except ValueError as exc:
                raise user_error(f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})",
                                 "each line must be one JSON object; nothing was written") from None
            try:
                batch.append(record_from_input(raw, default_scope=default_scope, added_by=nick,
                                               max_text_bytes=limit))
            except EideticError as exc:
                exc.message = f"line {number}: {exc.message}"
                exc.remediation = (exc.remediation + "; nothing was written").lstrip("; ")
                raise
        return self._remember_validated(batch, options.get("now") or now_utc())

    def _remember_validated(self, batch: list[tuple[Record, bool]], now: datetime) -> RememberResult:
        if not batch:
            return RememberResult([], [])
        stamp = format_ts(now)
        for attempt in range(5):
            targets = self._targets(batch, synced=False)
            with ExitStack() as locks:
                for root in sorted(set(targets.values()) | self._shadow_roots(batch, targets), key=str):
                    locks.enter_context(self._store(root).files.lock())
                decided = self._targets(batch, synced=True)
                if set(decided.values()) - set(targets.values()):
                    continue  # a concurrent writer moved an id: take the right locks and retry
                return self._write_batch(batch, decided, stamp)
        raise EideticError("the stores kept changing under this remember", "try again", 2)

    def _locate(self, ids: Iterable[str], synced: bool) -> dict[str, tuple[_Store, IndexedRecord]]:
        """Where each id lives now: the first read store that has it."""
        found: dict[str, tuple[_Store, IndexedRecord]] = {}
        wanted = list(dict.fromkeys(ids))
        for store in self.stores():
            if not store.files.exists():
                continue
            if synced:
                store.index.sync()
            for rid, item in store.index.by_ids([i for i in wanted if i not in found]).items():
                found[rid] = (store, item)
        return found

    def _targets(self, batch: list[tuple[Record, bool]], synced: bool) -> dict[str, Path]:
        existing = self._locate((record.id for record, _ in batch), synced)
        return {record.id: existing[record.id][0].files.root if record.id in existing
                else self.plan.write_target(record.scope) for record, _ in batch}

    def _shadow_roots(self, batch: list[tuple[Record, bool]], targets: dict[str, Path]) -> set[Path]:
        wanted = [record.supersedes for record, _ in batch if record.supersedes]
        return {store.files.root for store, _ in self._locate(wanted, synced=False).values()}

    def _write_batch(self, batch: list[tuple[Record, bool]], targets: dict[str, Path],
                     stamp: str) -> RememberResult:
        existing = self._locate((record.id for record, _ in batch), synced=False)
        hashes = self._hash_owners(record.hash for record, _ in batch)
        ids: list[str] = []
        duplicates: list[dict[str, str]] = []
        final: dict[str, tuple[Path, str | None, Record]] = {}  # id -> (store, existing path, record)
        batch_texts: dict[tuple[str, Scope], str] = {}
        for record, created_given in batch:
            if record.id in existing or record.id in final:
                if record.id in final:
                    root, path, old = final[record.id]
                else:
                    store, item = existing[record.id]
                    root, path, old = store.files.root, item.path, self._fresh(store, item)
                if old.scope != record.scope:
                    raise user_error(
                        f"record {record.id!r} exists in scope {old.scope.name}/{old.scope.visibility};"
                        f" remember cannot move it to {record.scope.name}/{record.scope.visibility}",
                        "use a new id for the new scope")
                merged = record.with_changes(
                    created=record.created if created_given else old.created,
                    lifecycle=old.lifecycle, updated=old.updated)
                if merged.content_key() != old.content_key() or merged.created != old.created:
                    merged = merged.with_changes(updated=stamp)
                final[record.id] = (root, path, merged)
                if record.id not in ids:
                    ids.append(record.id)
                continue
            owner = self._duplicate_owner(record, hashes, batch_texts)
            if owner is not None:
                duplicates.append({"id": record.id, "duplicate_of": owner})
                continue
            if not created_given:
                record = record.with_changes(created=stamp)
            final[record.id] = (targets[record.id], None, record)
            batch_texts[(record.hash, record.scope)] = record.id
            ids.append(record.id)
        self._apply_shadowing(final)
        return RememberResult(ids, duplicates, self._persist(final, existing))

    @staticmethod
    def _fresh(store: _Store, item: IndexedRecord) -> Record:
        """The record as its file says now (a hand edit may not be indexed yet)."""
        try:
            content, _ = store.files.read_text(item.path)
            return frontmatter.parse(content, item.path[:-3])
        except (OSError, ValueError, UnicodeDecodeError):
            return item.record

    def _hash_owners(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        owners: dict[str, list[tuple[str, Scope]]] = {}
        wanted = list(hashes)
        for store in self.stores():
            if store.files.exists():
                for h, entries in store.index.ids_by_hash(wanted).items():
                    owners.setdefault(h, []).extend(entries)
        return owners

    @staticmethod
    def _duplicate_owner(record: Record, owners: dict[str, list[tuple[str, Scope]]],
                         batch_texts: dict[tuple[str, Scope], str]) -> str | None:
        for rid, scope in owners.get(record.hash, []):
            if scope == record.scope and rid != record.id:
                return rid
        return batch_texts.get((record.hash, record.scope))

    def _apply_shadowing(self, final: dict[str, tuple[Path, str | None, Record]]) -> None:
        """A record that supersedes another in the same scope shadows it at once (SPEC §8)."""
        targets = [r.supersedes for _, _, r in final.values() if r.supersedes]
        located = self._locate([t for t in targets if t not in final], synced=False)
        for _, _, record in list(final.values()):
            old_id = record.supersedes
            if not old_id or old_id == record.id:
                continue
            if old_id in final:
                old_root, old_path, old = final[old_id]
            elif old_id in located:
                store, item = located[old_id]
                old_root, old_path, old = store.files.root, item.path, self._fresh(store, item)
            else:
                continue
            if old.scope != record.scope or old.lifecycle != "active" or _protected(old):
                continue
            final[old_id] = (old_root, old_path, old.with_changes(lifecycle="shadowed"))

    def _persist(self, final: dict[str, tuple[Path, str | None, Record]],
                 existing: dict[str, tuple[_Store, IndexedRecord]]) -> int:
        by_root: dict[Path, list[tuple[str, Record]]] = {}
        for rid, (root, path, record) in final.items():
            if path is not None and rid in existing:
                old = existing[rid][1].record
                if (record.content_key(), record.created, record.lifecycle) == \
                        (old.content_key(), old.created, old.lifecycle):
                    continue  # unchanged: writing would only churn mtimes and git
            store = self._store(root)
            by_root.setdefault(root, []).append((path or self._new_path(store, rid), record))
        count = 0
        for root, items in by_root.items():
            store = self._store(root)

            def write(store: _Store = store, items: list[tuple[str, Record]] = items) -> dict:
                return store.files.write_many([(rel, frontmatter.render(r)) for rel, r in items])

            store.index.apply_writes(items, write)
            count += len(items)
        return count

    @staticmethod
    def _new_path(store: _Store, rid: str) -> str:
        """The path for a new id; a hash-suffixed name if a hand-written file already has it."""
        path = record_path(rid)
        if store.files.stat_file(path) is None:
            return path
        import hashlib

        shard, _, name = path.partition("/")
        alt = f"{shard}/{name[:-3].split('~')[0][:60]}~{hashlib.sha256(rid.encode()).hexdigest()[:16]}.md"
        if store.files.stat_file(alt) is None:
            return alt
        raise user_error(f"cannot find a free file name for id {rid!r}",
                         f"move or rename the file {path} in {store.files.root}")

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
        explain: bool = False,
        record: bool = True,
        now: datetime | None = None,
    ) -> RecallResult:
        if mode not in MODES:
            raise user_error(f"unknown mode {mode!r}", "modes: " + ", ".join(MODES))
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise user_error(f"--top-k must be an integer >= 1 (got {top_k!r})", "e.g. --top-k 5")
        if not 0.0 <= alpha <= 1.0:
            raise user_error(f"--alpha must be between 0.0 and 1.0 (got {alpha})", "e.g. --alpha 0.5")
        if not isinstance(query, str) or not query.strip():
            raise user_error("the query is empty", "give the words or phrase to look for")
        access = Access(check_scope(scope or DEFAULT_SCOPE.name, visibility or DEFAULT_SCOPE.visibility),
                        scope_only, include_shadowed, include_archived)
        flt = Filters.build(filters, source, types, since, until)
        moment = now or now_utc()
        result = RecallResult(query, mode, [])
        engine = mode
        if mode in ("approximate", "hybrid"):
            result.warnings.append("semantic recall is not available in this version; "
                                   f"{mode} ranks by keyword only (embedder offline)")
            engine = "keyword"
        stores = self._synced(result.warnings)
        hits = self._primary(stores, engine, query, case_sensitive, access, flt, top_k,
                             min_score, moment, explain)
        result.items = hits
        if record and hits:
            self.usage.bump({(h.store, h.record.id): 1.0 for h in hits}, format_ts(moment))
        return result

    def _primary(self, stores: list[_Store], engine: str, query: str, case_sensitive: bool,
                 access: Access, flt: Filters, top_k: int, min_score: float | None,
                 now: datetime, explain: bool) -> list[Hit]:
        from .index.analyzer import query_terms

        terms = query_terms(query) if engine == "keyword" else []
        ranked: list[tuple[_Store, int, Hit, float]] = []  # store, doc, hit (no record yet), raw
        earlier: list[_Store] = []
        for store in stores:
            def fetch(limit: int, offset: int, store: _Store = store) -> list[tuple[int, float]]:
                if engine == "exact":
                    return store.index.exact(query, case_sensitive, access, flt, limit, offset)
                return store.index.keyword(terms, access, flt, limit, offset)

            def blend(rows: list[tuple[int, float]], store: _Store = store,
                      earlier: list[_Store] = list(earlier)) -> list[tuple[tuple[int, Hit], float, float]]:
                facts = store.index.ranking_facts([doc for doc, _ in rows])
                ids = [rid for rid, _ in facts.values()]
                hidden: set[str] = set()
                for other in earlier:  # an earlier store's copy of an id is the one that resolves
                    hidden |= set(other.index.by_ids(ids))
                usage = self.usage.get(store.key, ids)
                out = []
                for doc, raw in rows:
                    if doc not in facts or facts[doc][0] in hidden:
                        continue
                    rid, created = facts[doc]
                    hit = _make_hit(rid, created, raw, usage.get(rid), now, store.key)
                    out.append(((doc, hit), raw, hit.score))
                return out

            for (doc, hit), raw, _ in top_k_blended(fetch, blend, top_k, min_score,
                                                    page=max(10 * top_k, 100)):
                ranked.append((store, doc, hit, raw))
            earlier.append(store)
        ranked.sort(key=lambda entry: (-entry[2].score, -entry[3], entry[2].record.id))
        hits = []
        for store, doc, hit, raw in ranked[:top_k]:
            hit.record = store.index.by_docs([doc])[doc].record
            if explain:
                hit.explain = _explain(engine, raw, hit, query, terms)
            hits.append(hit)
        return hits

    # -- index ---------------------------------------------------------------------------

    def index_status(self) -> list[dict[str, Any]]:
        reports = []
        for store in self.stores():
            if not store.files.exists():
                reports.append({"store": str(store.files.root), "index": str(store.index.path),
                                "records": 0, "current": True, "exists": False,
                                "unparseable": [], "conflicts": []})
                continue
            status = store.index.status()
            status["exists"] = True
            reports.append(status)
        return reports

    def watch(self, stop_event: Any = None, on_change: Any = None, ready: Any = None) -> None:
        """Keep the indexes current as files change, until ``stop_event`` is set.

        A file watcher (inotify, FSEvents, ReadDirectoryChangesW through ``watchfiles``) reports
        every change, including edits in place that folder mtimes do not show; each batch is
        marked for re-checking and synced at once, so recall sees it within ~0.1 s at any size.
        Optional: without it, recall still finds every change (see ``index.store_index``).
        """
        import watchfiles

        stores = [store for store in self.stores() if store.files.exists()]
        if not stores:
            raise user_error("no store folder exists yet to watch",
                             "remember something first, or name one with --memory-dir")
        for store in stores:
            store.index.sync(full=True)
        roots = {str(store.files.root.resolve()): store for store in stores}
        if ready is not None:
            ready([store.files.root for store in stores])
        for changes in watchfiles.watch(*roots, watch_filter=None, debounce=40, step=10,
                                        stop_event=stop_event, rust_timeout=500,
                                        yield_on_timeout=True):
            touched: dict[str, list[str]] = {}
            for _, path in changes:
                for root in roots:
                    if path.startswith(root + os.sep):
                        touched.setdefault(root, []).append(path[len(root) + 1:].replace(os.sep, "/"))
            for root, paths in touched.items():
                store = roots[root]
                store.index.mark_dirty(paths)
                report = store.index.sync()
                if on_change is not None:
                    on_change(store.files.root, report)

    def refresh_index(self) -> None:
        """Stat every file of every store now and index what changed."""
        self._synced(full=True)

    def rebuild_index(self) -> list[dict[str, Any]]:
        out = []
        for store in self.stores():
            if not store.files.exists():
                continue
            report = store.index.rebuild()
            store.files.clean_stale_temps()
            out.append({"store": str(store.files.root), "index": str(store.index.path),
                        "records": store.index.count(), "unparseable": len(report.broken)})
        return out

    def iter_records(self, access: Access | None = None) -> Iterator[tuple[str, Record]]:
        """Every record a caller may see (precedence applied), for overview and export."""
        seen: set[str] = set()
        for store in self._synced():
            for item in store.index.by_docs([d for (d,) in store.index.conn.execute(
                    "SELECT doc FROM docs WHERE winner=1 ORDER BY id")]).values():
                if item.record.id in seen:
                    continue
                seen.add(item.record.id)
                if access is None or access.admits(item.record.scope, item.record.lifecycle):
                    yield store.key, item.record


def _protected(record: Record) -> bool:
    return bool(record.metadata.get("protected"))


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
    data: dict[str, Any] = {"engine": engine, "raw_score": round(raw, 6), "signal": round(hit.signal, 6),
                            "blend_factor": 1.0 if neutral else round(hit.score / raw, 6) if raw else 1.0,
                            "blended": not neutral}
    if engine == "exact":
        data.update({"query_chars": len(query), "text_chars": len(hit.record.text),
                     "formula": "min(1, query_chars / text_chars)"})
    else:
        from .index.analyzer import analyze

        present = set(analyze(" ".join(filter(None, (hit.record.name, hit.record.description,
                                                     hit.record.text)))))
        data.update({"query_terms": terms, "matched_terms": [t for t in terms if t in present],
                     "formula": "BM25 (tantivy: k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)); field weights name 2, description 1.5, text 1)"})
    return data
