"""Writes: validate a whole batch, then decide under the locks of every store it touches
(upsert, duplicates, shadowing), write each store's part atomically, and embed the new texts.

A batch is checked completely before anything is written; the decisions and the writes they
guard are one step for concurrent writers (``_locked``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from json import JSONDecodeError
from typing import Any

from .. import lifecycle
from ..clocks import appended
from ..credentials import Screen
from ..errors import EideticError, user_error
from ..locations import culture_nick
from ..ranking.access import Access
from ..record_intake import load_json, record_from_input
from ..records import Record, Scope
from ..results import RememberResult
from ..settings import DEFAULT_MAX_TEXT_BYTES
from ..stores.base import IndexedRecord, RecordStore
from ..timeutil import format_ts
from .embedding import Embedding
from .similar import NearDuplicates
from .stores import Located, StoreSet

Batch = list[tuple[Record, bool]]  # each record, and whether its input gave ``created``
Final = dict[str, tuple[RecordStore, "IndexedRecord | None", Record]]  # id -> (store, stored copy, record)
Usage = tuple[float, "str | None"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a batch is read and written. A batch
    keeps every record it reads (and their rows) alive until its answer, and each full
    collection walks all of them again: at 100k records 11 of them took ~3.5 s of a ~56 s
    bulk remember (``docs/benchmarks.md``). The batch makes no garbage cycles it needs freed
    early; whatever it leaves is collected as usual once the collector is back."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def validate(
    items: Iterable[tuple[str, Any]],
    default_scope: Scope,
    added_by: str | None,
    writer: Access | None = None,
    limit: int = DEFAULT_MAX_TEXT_BYTES,
    screen: Screen | None = None,
) -> Batch:
    """Every (label, raw record) checked before anything is written; an error names its label.
    ``default_scope`` is for records that name none; ``writer`` confines the batch to scopes it
    may read; ``limit`` is the largest text in bytes; ``screen`` refuses (or notes) a record that
    holds a credential (``credentials``): one refused record refuses the batch."""
    nick = added_by if added_by is not None else culture_nick()
    batch: Batch = []
    for label, raw in items:
        try:
            record, created_given = record_from_input(
                raw, default_scope=default_scope, added_by=nick, max_text_bytes=limit
            )
            if writer is not None and not writer.can_serve(record.scope):
                raise user_error(
                    f"this session may not write to scope {record.scope.name}/private",
                    f"write to {writer.scope.name}/{writer.scope.visibility} or to a public scope",
                )
            if screen is not None:
                screen.check(record)
            batch.append((record, created_given))
        except EideticError as exc:
            exc.message = f"{label}: {exc.message}"
            exc.remediation = (exc.remediation + "; nothing was written").lstrip("; ")
            raise
    return batch


class Writes:
    """Remember, restore and lifecycle changes over a :class:`StoreSet`."""

    def __init__(self, stores: StoreSet, embedding: Embedding) -> None:
        self.stores = stores
        self.embedding = embedding

    def remember(
        self,
        batch: Batch,
        now: datetime,
        embed: bool,
        expected: Record | None = None,
        on_similar: str = "write",
        writer: Access | None = None,
    ) -> RememberResult:
        """Upsert a validated batch; with ``embed``, compute the new texts' vectors now (before
        the locks: a new record's near-duplicates are found by meaning under them).
        ``expected``: a record the batch replaces (an edit), which must still be stored as it
        was, checked under the locks: a concurrent change is never overwritten. ``on_similar``:
        what a new record with near-duplicates in its scope does (``memory.similar``).
        ``writer``: who writes (a session), for what an id conflict may name."""
        if not batch:
            return RememberResult([], [])
        stamp = format_ts(now)
        near, warnings = self._near_duplicates(batch, embed)

        def decide(decided: dict[str, RecordStore], existing: Located) -> RememberResult:
            if expected is not None:
                _check_unchanged(expected, existing)
            return self._decide(batch, decided, existing, stamp, Similar(near, on_similar), writer)

        def locked_too(batch: Batch) -> list[RecordStore]:  # a superseded near-duplicate may live in any
            return self._shadow_stores(batch) + (near.stores if on_similar == "supersede" else [])

        result = self._locked(batch, decide, also=locked_too)
        result.warnings.extend(warnings)
        if embed and result.ids:
            self._embed(result, batch)
        return result

    def _near_duplicates(self, batch: Batch, embed: bool) -> tuple[NearDuplicates, list[str]]:
        """The finder of near-duplicates, with the batch's vectors when ``embed`` and an
        embedder are there (computed now, outside the locks), and why not when it failed."""
        stores = [store for store in self.stores.all() if store.exists()]
        records = [record for record, _ in batch]
        embedder, _ = self.embedding.embedder() if embed else (None, None)
        if embedder is None:
            return NearDuplicates(stores, records), []
        vectors, failure = self.embedding.ahead(embedder, {r.hash: r.text for r in records}, stores)
        if failure is not None:
            return NearDuplicates(stores, records), [f"near-duplicates judged by text alone: {failure}"]
        return NearDuplicates(stores, records, embedder.name, vectors), []

    def restore(self, items: Iterable[tuple[Record, Usage | None]]) -> dict[str, int]:
        """Write records exactly as given (lifecycle, dates and all) with their usage: how
        ``migrate`` and ``import`` carry a store across. Idempotent: a record stored the same is
        not rewritten, and usage is set, not added. No duplicate or shadowing rules run: the
        records were already decided in their source."""
        batch = list(items)
        if not batch:
            return {"records": 0, "written": 0}

        def write(decided: dict[str, RecordStore], existing: Located) -> int:
            final = {
                record.id: (decided[record.id], existing[record.id][1] if record.id in existing else None, record)
                for record, _ in batch
            }
            written = len(_persist(final, existing))
            for record, usage in batch:
                if usage is not None and (usage[0] or usage[1]):
                    decided[record.id].set_usage(record.id, usage[0], usage[1])
            return written

        written = self._locked([(record, True) for record, _ in batch], write)
        return {"records": len(batch), "written": written}

    def set_lifecycles(self, changes: dict[str, str], now: datetime, access: Access | None = None) -> None:
        """Rewrite records with a new lifecycle, the change dated ``now`` in their history,
        re-reading each under the lock so a concurrent remember's content is kept (the copies
        ``access`` may see, when given)."""
        stamp = format_ts(now)
        involved = {store.key: store for store, _ in self.stores.locate(changes, synced=False, access=access).values()}
        with ExitStack() as locks:
            for key in sorted(involved):
                locks.enter_context(involved[key].lock())
            final: Final = {}
            for rid, (store, item) in self.stores.locate(changes, synced=True, access=access).items():
                final[rid] = (store, item, moved(store.current(item), changes[rid], stamp))
            _persist(final, {})

    def _embed(self, result: RememberResult, batch: Batch) -> None:
        """Vectors of the texts just remembered; the records are already safe, so a failing
        embedder only defers this to the first recall that needs them."""
        embedder, _ = self.embedding.embedder()
        if embedder is None:
            return
        remembered = set(result.ids)
        texts = {r.hash: r.text for r, _ in batch if r.id in remembered}
        stores = {store.key: store for store, _ in self.stores.locate(result.ids, synced=False).values()}
        failure = self.embedding.remembered(embedder, texts, stores.values())
        if failure is not None:
            result.warnings.append(f"vectors not computed ({failure}); recall will compute them")

    def _locked(
        self, batch: Batch, decide: Callable[..., Any], also: Callable[[Batch], list[RecordStore]] = lambda batch: []
    ) -> Any:
        """``decide(targets, existing)`` with every store the batch touches locked (its targets,
        and the stores ``also`` names). Where each id goes is looked up again under the locks; if
        a concurrent writer moved an id into a store not locked, the locks are taken again."""
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

    def _targets(self, batch: Batch, synced: bool) -> tuple[dict[str, RecordStore], Located]:
        """Where each record goes (the store that has its id, else the write target for its
        scope), and the existing copies found on the way."""
        existing = self.stores.locate((record.id for record, _ in batch), synced)
        return {
            record.id: existing[record.id][0] if record.id in existing else self.stores.write_target(record.scope)
            for record, _ in batch
        }, existing

    def _shadow_stores(self, batch: Batch) -> list[RecordStore]:
        wanted = [record.supersedes for record, _ in batch if record.supersedes]
        return [store for store, _ in self.stores.locate(wanted, synced=False).values()]

    def _decide(
        self,
        batch: Batch,
        targets: dict[str, RecordStore],
        existing: Located,
        stamp: str,
        similar: Similar,
        writer: Access | None = None,
    ) -> RememberResult:
        """Upsert by id (a record keeps its scope), skip same-scope duplicate texts, report (and
        skip, or supersede with) near-duplicates, shadow what is superseded, then write."""
        owners = self._hash_owners(record.hash for record, _ in batch)
        ids: list[str] = []
        duplicates: list[dict[str, str]] = []
        entries: list[dict[str, Any]] = []  # what happened to each record, in input order
        final: Final = {}
        batch_texts: dict[tuple[str, Scope], str] = {}
        for record, created_given in batch:
            if record.id in existing or record.id in final:
                final[record.id] = _updated(record, created_given, final, existing, stamp, writer)
                if record.id not in ids:
                    ids.append(record.id)
                    entries.append({"id": record.id, "status": "updated"})
                continue
            owner = _duplicate_owner(record, owners, batch_texts)
            if owner is not None:
                duplicates.append({"id": record.id, "duplicate_of": owner})
                entries.append({"id": record.id, "status": "duplicate", "duplicate_of": owner})
                continue
            record, entry = similar.judged(record)
            entries.append(entry)
            if entry["status"] == "similar":
                continue
            record = record.with_changes(created=record.created if created_given else stamp, updated=stamp)
            final[record.id] = (targets[record.id], None, record)
            batch_texts[(record.hash, record.scope)] = record.id
            ids.append(record.id)
        self._apply_shadowing(final, stamp)
        written = _persist(final, existing)
        _settle(entries, final, written)
        return RememberResult(ids, duplicates, len(written), items=self._placed(entries, final, existing, written))

    def _placed(
        self, entries: list[dict[str, Any]], final: Final, existing: Located, written: dict[str, str | None]
    ) -> list[dict[str, Any]]:
        """Each entry with where its record lives (a duplicate, or a near-duplicate left out:
        where the record it repeats lives): the store (a folder, a database file, a server
        without its password), its backend, and on the files backend the record's file. What
        was just written, or found unchanged, is known; only the records repeated are looked up."""
        known: dict[str, tuple[RecordStore, str | None]] = {rid: (final[rid][0], path) for rid, path in written.items()}
        known.update((rid, (store, store.file_of(item))) for rid, (store, item) in existing.items() if rid not in known)
        wanted = [_placed_as(entry) for entry in entries if _placed_as(entry) not in known]
        known.update(
            (rid, (store, store.file_of(item)))
            for rid, (store, item) in self.stores.locate(wanted, synced=False).items()
        )
        for entry in entries:
            found = known.get(_placed_as(entry))
            if found is not None:
                store, path = found
                entry.update(backend=store.backend, store=store.location, path=path)
        return entries

    def _hash_owners(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        owners: dict[str, list[tuple[str, Scope]]] = {}
        wanted = list(hashes)
        for store in self.stores.all():
            if store.exists():
                for h, entries in store.ids_by_hash(wanted).items():
                    owners.setdefault(h, []).extend(entries)
        return owners

    def _apply_shadowing(self, final: Final, stamp: str) -> None:
        """A record that supersedes another of its own scope shadows it at once (and so closes
        its validity: the change is dated ``stamp``)."""
        targets = [r.supersedes for _, _, r in final.values() if r.supersedes]
        located = self.stores.locate([t for t in targets if t not in final], synced=False)
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
            final[old_id] = (old_store, old_item, moved(old, "shadowed", stamp))


@dataclass(frozen=True)
class Similar:
    """What a new record with near-duplicates does: ``write`` (reported), ``skip`` (left out,
    status ``similar``, naming them) or ``supersede`` (written, superseding the closest)."""

    finder: NearDuplicates
    on_similar: str

    def judged(self, record: Record) -> tuple[Record, dict[str, Any]]:
        """The record as it is to be written, and its entry; the finder is told of it unless
        it is left out. A record it names in ``supersedes`` is replaced knowingly: not reported."""
        near = [found for found in self.finder.of(record) if found["id"] != record.supersedes]
        entry: dict[str, Any] = {"id": record.id, "status": "new"}
        if near:
            entry["similar_to"] = near
            if self.on_similar == "skip":
                entry["status"] = "similar"
                return record, entry
            if self.on_similar == "supersede" and not record.supersedes:
                record = record.with_changes(supersedes=near[0]["id"])
        self.finder.written(record)
        return record, entry


@dataclass(frozen=True)
class NdjsonLines:
    """Records already labelled by their line (``ndjson_items``)."""

    lines: Iterator[tuple[str, Any]]


def ndjson_items(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(``line N``, parsed object) of each non-blank line; a line that is no JSON is a user error."""
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


def labelled(records: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    """API input as (label, raw dict): ``Record`` objects become their input fields."""
    for position, raw in enumerate(records, start=1):
        if isinstance(raw, Record):
            raw = {k: v for k, v in raw.to_dict().items() if k not in ("hash", "lifecycle", "updated")}
        yield f"record {position}", raw


def _updated(
    record: Record, created_given: bool, final: Final, existing: Located, stamp: str, writer: Access | None
) -> tuple[RecordStore, IndexedRecord | None, Record]:
    """A new version of a stored (or earlier-in-the-batch) record: same scope, its lifecycle
    kept, ``updated`` stamped only when something changed."""
    if record.id in final:
        store, item, old = final[record.id]
    else:
        store, found = existing[record.id]
        item, old = found, store.current(found)
    if old.scope != record.scope:
        raise _scope_conflict(record, old.scope, writer)
    merged = record.with_changes(
        created=record.created if created_given else old.created,
        lifecycle=old.lifecycle,
        history=old.history,
        updated=old.updated,
    )
    if merged.content_key() != old.content_key() or merged.created != old.created:
        merged = merged.with_changes(updated=stamp)
    return store, item, merged


def moved(record: Record, state: str, stamp: str) -> Record:
    """``record`` in lifecycle ``state``, the change dated ``stamp`` in its history."""
    if state == record.lifecycle:
        return record
    return record.with_changes(lifecycle=state, history=appended(record.history, record.lifecycle, state, stamp))


def _check_unchanged(expected: Record, existing: Located) -> None:
    found = existing.get(expected.id)
    current = found[0].current(found[1]) if found is not None else None
    state = (expected.content_key(), expected.created, expected.lifecycle)
    if current is None or (current.content_key(), current.created, current.lifecycle) != state:
        raise user_error(
            f"record {expected.id!r} changed (or went) while it was being edited; nothing was saved",
            f"see it with 'eidetic show {expected.id}', then edit it again",
        )


def _settle(entries: list[dict[str, Any]], final: Final, written: dict[str, str | None]) -> None:
    """Once written: an update that changed nothing is ``unchanged``, and a record that shadowed
    the one it supersedes (of its own scope) says so."""
    for entry in entries:
        if entry["status"] == "updated" and entry["id"] not in written:
            entry["status"] = "unchanged"
        if entry["id"] not in final:
            continue
        old_id = final[entry["id"]][2].supersedes
        if old_id and old_id != entry["id"] and old_id in written and final[old_id][2].lifecycle == "shadowed":
            entry["shadowed"] = old_id


def _duplicate_owner(
    record: Record, owners: dict[str, list[tuple[str, Scope]]], batch_texts: dict[tuple[str, Scope], str]
) -> str | None:
    for rid, scope in owners.get(record.hash, []):
        if scope == record.scope and rid != record.id:
            return rid
    return batch_texts.get((record.hash, record.scope))


def _placed_as(entry: dict[str, Any]) -> str:
    """The id whose store an entry names: the record's, or for a record left out, the one it
    repeats."""
    if entry["status"] == "similar":
        return str(entry["similar_to"][0]["id"])
    return str(entry.get("duplicate_of") or entry["id"])


def _scope_conflict(record: Record, held: Scope, writer: Access | None) -> EideticError:
    """A remember of an id held in another scope. The holder's scope is named only when the
    writer may see it: a session (MCP, the viewer) sees what its scope sees; a writer with no
    session (the CLI, the API) writes as the record's scope name, which sees its own private
    records, so moving one's own private record to public names it. Otherwise the answer is
    that the id is taken outside the writer's own scope: it reveals that the id exists, not
    what holds it or what it holds."""
    sees = writer or Access(Scope(record.scope.name, "private"))
    if sees.can_serve(held):
        where = f"{record.scope.name}/{record.scope.visibility}"
        return user_error(
            f"record {record.id!r} exists in scope {held.name}/{held.visibility}; remember cannot move it to {where}",
            "use a new id for the new scope",
        )
    own = writer.scope if writer is not None else record.scope
    return user_error(
        f"the id {record.id!r} is taken by a record outside scope {own.name}/{own.visibility}", "choose another id"
    )


def _persist(final: Final, existing: Located) -> dict[str, str | None]:
    """Write what changed, one atomic write per store; returns the ids written, with each one's
    file (``RecordStore.write``)."""
    by_store: dict[str, tuple[RecordStore, list[tuple[IndexedRecord | None, Record]]]] = {}
    for rid, (store, item, record) in final.items():
        if item is not None and rid in existing:
            old = existing[rid][1].record
            if (record.content_key(), record.created, record.lifecycle, record.history, record.updated) == (
                old.content_key(),
                old.created,
                old.lifecycle,
                old.history,
                old.updated,
            ):
                continue  # unchanged: writing would only churn mtimes and git
        by_store.setdefault(store.key, (store, []))[1].append((item, record))
    written: dict[str, str | None] = {}
    for store, items in by_store.values():
        written.update(store.write(items))
    return written
