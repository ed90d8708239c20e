"""One record by id, and lifecycle changes: ``get``, ``forget``/``restore``, ``purge`` and the
``sweep`` rules. A missing record and one out of the caller's reach give the same error, so a
private record's existence is never revealed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import lifecycle
from ..errors import did_you_mean, user_error
from ..listing import Order
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..records import LIFECYCLES, Scope
from ..results import SweepReport
from ..stores.base import IndexedRecord, RecordStore
from ..timeutil import format_ts, now_utc
from . import folding
from .stores import StoreSet
from .writes import Writes

SUGGEST_IDS = 20_000  # the most ids a mistyped one is matched against (~0.4 s here; docs/benchmarks.md)


class Curation:
    def __init__(self, stores: StoreSet, writes: Writes) -> None:
        self.stores = stores
        self.writes = writes

    def visible(self, rid: str, access: Access) -> tuple[RecordStore, IndexedRecord]:
        """The record ``rid`` if ``access`` may see it (the first such copy, by precedence)."""
        found = self.stores.locate([rid], synced=True, access=access).get(rid)
        if found is None:
            near = did_you_mean(rid, self.ids(access))
            raise user_error(
                f"no record {rid!r} in reach of scope {access.scope.name}/{access.scope.visibility}",
                f"{near + ' ' if near else 'check the id; '}a private record is in reach only of the scope "
                "it was remembered in, asked with visibility private (--scope NAME --visibility private)",
            )
        return found

    def ids(self, access: Access) -> list[str]:
        """Every id ``access`` may see, in any lifecycle: what a mistyped id is matched against
        (none past ``SUGGEST_IDS`` records: the matching would take longer than the answer is worth)."""
        everything = Access(access.scope, states=LIFECYCLES)
        ids: list[str] = []
        counted = 0
        for store in self.stores.synced():
            rows, total = store.listing(everything, Filters(), Order("name", False), SUGGEST_IDS)
            counted += total
            if counted > SUGGEST_IDS:
                return []
            ids += [rid for _, rid, _ in rows]
        return ids

    def set_lifecycle(self, rid: str, state: str, access: Access, now: datetime | None = None) -> dict[str, Any]:
        """Archive (``forget``) or restore one record, the change dated ``now`` (default: now)
        in its history; undoable, nothing is deleted."""
        if state not in ("active", "archived"):
            raise user_error(f"cannot set lifecycle {state!r} by hand", "use 'archived' (forget) or 'active' (restore)")
        store, item = self.visible(rid, access)
        previous = item.record.lifecycle
        if previous == "shadowed" and state == "active" and folding.INTO in item.record.metadata:
            survivor = folding.unfold(self.stores, store, item, format_ts(now or now_utc()))
            return {"id": rid, "lifecycle": state, "previous": previous, "survivor": survivor}
        if previous != state:  # the copy the caller sees, not a hidden one with the same id
            self.writes.set_lifecycles({rid: state}, now or now_utc(), access)
        return {"id": rid, "lifecycle": state, "previous": previous}

    def purge(self, rid: str, access: Access) -> dict[str, Any]:
        """Remove a record's file, index entries and usage for good (a secret remembered by
        mistake): the one deliberate hard delete."""
        store, item = self.visible(rid, access)
        store.delete(item)
        store.forget_usage(rid)
        return {"id": rid, "purged": True, "store": store.location, "path": store.file_of(item)}

    def sweep(self, access: Access, dry_run: bool, now: datetime | None) -> SweepReport:
        """Apply the lifecycle rules to every record of every store (``lifecycle``); never
        deletes. The report names and counts only the records ``access`` may see."""
        moment = now or now_utc()
        entries = self.stores.entries()
        usage: dict[str, lifecycle.Usage] = {}
        for store in {store.key: store for store, _ in entries}.values():
            ids = [item.record.id for s, item in entries if s is store]
            for rid, (count, last) in store.usage(ids).items():
                usage[rid] = lifecycle.Usage(count, last)
        plan = lifecycle.plan_sweep([item.record for _, item in entries], usage, moment)
        if plan.changes and not dry_run:
            self.writes.set_lifecycles(plan.changes, moment)
        visible = {item.record.id: item.record.scope for _, item in entries if access.can_serve(item.record.scope)}
        changed = [
            {"id": rid, "lifecycle": state, **({} if dry_run else {"undo": lifecycle.command("restore", rid, scope)})}
            for rid, state in sorted(plan.changes.items())
            if (scope := visible.get(rid)) is not None
        ]
        return SweepReport(
            dry_run,
            format_ts(moment),
            len(visible),
            sum(change["lifecycle"] == "shadowed" for change in changed),
            sum(change["lifecycle"] == "archived" for change in changed),
            changed,
            [s for s in plan.suggestions if access.can_serve(Scope(**s["scope"]))],
        )
