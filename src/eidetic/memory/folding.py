"""Folding a cluster of near-duplicates into its survivor (``consolidate --apply``), and undoing
it for one member (``restore``).

Folding, under the store's lock and in one atomic write for all the store's clusters: each
member is shadowed (the change dated in its history) and names its survivor in
``metadata.consolidated_into``; the survivor gains the members' links (not to itself nor to a
member) and lists in
``metadata.consolidated_from`` each member with the links it brought and the recall_count it
carried. The survivor's usage then becomes the sum of the cluster's counts, its last_recall the
latest (usage lives beside the records: written just after them). Restoring a member reverses
its part: it becomes active without the key, and the survivor loses its entry, the links only
it brought, and the count it carried.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from ..errors import EideticError
from ..record_intake import record_from_input
from ..records import Record
from ..stores.base import IndexedRecord, RecordStore
from .stores import StoreSet
from .writes import moved

INTO = "consolidated_into"  # a folded member's metadata: the id of its survivor
FROM = "consolidated_from"  # a survivor's metadata: [{id, links, recall_count}] of what it folded in


def fold(store: RecordStore, wanted: Sequence[Wanted], stamp: str) -> tuple[list[list[str]], list[str]]:
    """Fold each cluster's members still active (and of its survivor's scope) into its survivor,
    every cluster of the store in one atomic write under its lock (an interruption leaves all of
    them as they were); returns the ids folded per cluster, and why some were not."""
    folded: list[list[str]] = []
    warnings: list[str] = []
    writes: list[tuple[IndexedRecord | None, Record]] = []
    usages: list[tuple[str, tuple[float, str | None]]] = []
    with store.lock():
        store.sync()
        found = store.by_ids(rid for survivor_id, member_ids, _ in wanted for rid in [survivor_id, *member_ids])
        usage = store.usage(found)
        for survivor_id, member_ids, text in wanted:
            survivor, members = _still_active(store, found, survivor_id, member_ids)
            while members and not _storable(merged := _merged(survivor, members, usage, stamp, text)):
                members = members[:-1]  # the survivor's metadata would be too big: fold fewer now
            folded.append([m.id for m in members])
            if len(members) < len(member_ids):
                warnings.append(f"{survivor_id}: {len(member_ids) - len(members)} record(s) changed meanwhile; left")
            if members:
                writes.append((found[survivor_id], merged))
                writes += [(found[m.id], _folded(m, survivor_id, stamp)) for m in members]
                usages.append((survivor_id, _carried(usage, [survivor_id, *(m.id for m in members)])))
        if writes:
            store.write(writes)
        for survivor_id, carried in usages:
            if carried != usage.get(survivor_id, (0.0, None)):
                store.set_usage(survivor_id, *carried)
    return folded, warnings


Wanted = tuple[str, Sequence[str], "str | None"]  # a survivor, its members, and the text it takes (None: its own)


def _still_active(
    store: RecordStore, found: dict[str, IndexedRecord], survivor_id: str, member_ids: Sequence[str]
) -> tuple[Record, list[Record]]:
    """The survivor as stored now, and the members still active in its scope (none when the
    survivor itself is no longer active)."""
    if survivor_id not in found or (survivor := store.current(found[survivor_id])).lifecycle != "active":
        return Record(survivor_id, "-"), []
    current = (store.current(found[rid]) for rid in member_ids if rid in found)
    return survivor, [m for m in current if m.lifecycle == "active" and m.scope == survivor.scope]


def _carried(usage: dict[str, tuple[float, str | None]], ids: list[str]) -> tuple[float, str | None]:
    """The cluster's recall counts summed, and its latest last_recall."""
    counts = [usage.get(rid, (0.0, None)) for rid in ids]
    lasts = [last for _, last in counts if last]
    return sum(count for count, _ in counts), max(lasts) if lasts else None


def _merged(
    survivor: Record, members: list[Record], usage: dict[str, tuple[float, str | None]], stamp: str, text: str | None
) -> Record:
    """The survivor with the members' links and the record of what each brought."""
    cluster = {survivor.id, *(m.id for m in members)}
    links = list(survivor.links)
    entries: list[dict[str, Any]] = list(survivor.metadata.get(FROM) or [])
    for member in members:
        brought = [link for link in member.links if link not in cluster and link not in survivor.links]
        links += [link for link in brought if link not in links]
        entry: dict[str, Any] = {"id": member.id}
        if brought:
            entry["links"] = brought
        count = usage.get(member.id, (0.0, None))[0]
        if count:
            entry["recall_count"] = count
        entries.append(entry)
    metadata = {**survivor.metadata, FROM: entries}
    return survivor.with_changes(links=links, metadata=metadata, text=text or survivor.text, updated=stamp)


def _folded(member: Record, survivor_id: str, stamp: str) -> Record:
    changed = member.with_changes(metadata={**member.metadata, INTO: survivor_id}, updated=stamp)
    return moved(changed, "shadowed", stamp)


def _storable(record: Record) -> bool:
    """Whether the record passes remember's checks (metadata size and shape above all)."""
    raw = {k: v for k, v in record.to_dict().items() if k not in ("hash", "lifecycle", "updated", "history")}
    try:
        record_from_input(raw, default_scope=record.scope, added_by=record.added_by, max_text_bytes=1 << 62)
    except EideticError:
        return False
    return True


def unfold(stores: StoreSet, store: RecordStore, member: IndexedRecord, stamp: str) -> str | None:
    """Restore a folded member (see the module); returns its survivor's id, or None when the
    survivor is gone (the member is restored alone). Both records change in one locked step."""
    survivor_id = str(member.record.metadata.get(INTO))
    where = stores.locate([survivor_id], synced=False)
    involved = {s.key: s for s in [store, *(s for s, _ in where.values())]}
    with ExitStack() as locks:
        for key in sorted(involved):
            locks.enter_context(involved[key].lock())
        member = store.by_ids([member.record.id]).get(member.record.id, member)
        current = store.current(member)
        metadata = {k: v for k, v in current.metadata.items() if k != INTO}
        restored = moved(current.with_changes(metadata=metadata, updated=stamp), "active", stamp)
        where = {
            rid: found for rid, found in stores.locate([survivor_id], synced=True).items() if found[0].key in involved
        }
        owner = where.get(survivor_id)
        survivor = owner[0].current(owner[1]) if owner is not None else None
        if owner is None or survivor is None or survivor.scope != current.scope:
            store.write([(member, restored)])
            return None
        entries = list(survivor.metadata.get(FROM) or [])
        mine = [e for e in entries if isinstance(e, dict) and e.get("id") == current.id]
        rest = [e for e in entries if e not in mine]
        kept = {link for e in rest if isinstance(e, dict) for link in e.get("links") or ()}
        dropped = {link for e in mine for link in e.get("links") or ()} - kept
        metadata = {k: v for k, v in survivor.metadata.items() if k != FROM} | ({FROM: rest} if rest else {})
        unfolded = survivor.with_changes(
            links=[link for link in survivor.links if link not in dropped], metadata=metadata, updated=stamp
        )
        if owner[0] is store:
            store.write([(member, restored), (owner[1], unfolded)])
        else:
            store.write([(member, restored)])
            owner[0].write([(owner[1], unfolded)])
        carried = sum(float(e.get("recall_count") or 0) for e in mine)
        if carried:
            count, last = owner[0].usage([survivor_id]).get(survivor_id, (0.0, None))
            owner[0].set_usage(survivor_id, max(0.0, count - carried), last)
    return survivor_id
