"""``GET /browse`` (records by type, scope, lifecycle and date, sorted, a page at a time: a
listing, ``Memory.list_records``) and ``GET /overview`` (counts, usage, audit grades, recent
changes). Both show only what the session may see: other scopes' private records are neither
listed nor counted. Neither is a recall."""

from __future__ import annotations

import asyncio
from collections import Counter
from contextlib import suppress
from dataclasses import fields
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from ..errors import option_error
from ..listing import SORTS, ListQuery
from ..memory import Memory
from ..ranking.access import Access
from ..records import LIFECYCLES, Scope
from ..results import ListResult
from ..session import Session
from .choices import choices_of
from .overview_report import Snapshot
from .params import options_of, scope_of
from .respond import render, session_of

MAX_LIMIT = 500  # a page, not an export
TOP = 10  # records in each of the overview's lists
WAIT = 0.25  # seconds a visit waits for a report still being made (a small store's is ready by then)
READ_ELSEWHERE = ("scope", "visibility", "scope_only")


async def browse(request: Request) -> Response:
    session = session_of(request)
    params = request.query_params
    query, result = await session.call(lambda: listing(session, params))
    choices = choices_of((await report_of(request, refresh=False)).report, params)
    return render(request, "browse.html", params=params, query=query, result=result, sorts=SORTS, choices=choices)


def listing(session: Session, params: QueryParams) -> tuple[ListQuery, ListResult]:
    """The page the address asks for. ``scope=NAME`` lists that scope's records only (its
    public ones, or the session's own private ones too); ``lifecycle=all`` every state."""
    scope = scope_of(session, params)
    names = [spec.name for spec in fields(ListQuery) if spec.name not in READ_ELSEWHERE]
    options = options_of(params, ListQuery, names)
    states = options.get("lifecycle", ())
    options["lifecycle"] = LIFECYCLES if "all" in states else states
    if isinstance(options.get("limit"), int) and options["limit"] > MAX_LIMIT:
        raise option_error("limit", f"must be at most {MAX_LIMIT} (got {options['limit']})", "page with offset")
    query = ListQuery(
        scope=scope.name, visibility=scope.visibility, scope_only=bool(params.get("scope", "").strip()), **options
    )
    return query, session.memory.list_records(query)


async def overview(request: Request) -> Response:
    """The latest report (``overview_report``), or a page that says it is counting and reloads
    itself."""
    snapshot = await report_of(request)
    if snapshot.report is None and snapshot.error is not None:
        raise snapshot.error
    return render(request, "overview.html", snapshot=snapshot, **(snapshot.report or {}))


async def report_of(request: Request, refresh: bool = True) -> Snapshot:
    """The latest overview report (counts by type and scope: the overview, the home page and
    the filters' choices read it; ``refresh``: ``Reports.latest``). A first one, or one made
    again after a change through the server, is waited for briefly (a small store's is ready by
    then); else the one before."""
    snapshot, running = request.app.state.reports.of(session_of(request).scope).latest(refresh)
    if running is not None and (snapshot.report is None or snapshot.behind):
        with suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(running)), timeout=WAIT)
        snapshot, _ = request.app.state.reports.of(session_of(request).scope).latest(refresh)
    return snapshot


def gather(memory: Memory, scope: Scope) -> dict[str, Any]:
    """Everything the overview shows, as ``scope`` sees it."""

    def top(**order: Any) -> list[Any]:
        return memory.list_records(ListQuery(scope=scope.name, visibility=scope.visibility, limit=TOP, **order)).items

    stores = memory.overview(Access(scope))
    audit = memory.audit(Access(scope))
    entries = [entry for store in stores for entry in store.scopes]
    return {
        "stores": stores,
        "types": _summed(entry["types"] for entry in entries),
        "scopes": _by_scope(entries),
        "states": {state: sum(entry[state] for entry in entries) for state in LIFECYCLES},
        "most_recalled": [item for item in top(sort="recalled") if item.recall_count > 0],
        "never_recalled": [item for item in top(sort="recalled", reverse=True) if not item.recall_count],
        "never_total": sum(1 for item in audit["items"] if not item["recall_count"]),
        "audit": audit,
        "graded": [item for item in audit["items"] if item["grade"] != "fresh"][: TOP * 2],
        "recent": top(sort="updated", lifecycle=LIFECYCLES),  # a forgotten record changed too
        # the active records as a listing counts them (an id in two folders once): the home page
        # compares its own live count with it to see that the report is behind
        "listed_active": memory.list_records(ListQuery(scope=scope.name, visibility=scope.visibility, limit=1)).total,
    }


def _by_scope(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each scope the session sees (name and visibility), its records summed over the stores."""
    totals: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        found = totals.setdefault(
            (entry["name"], entry["visibility"]), {"name": entry["name"], "visibility": entry["visibility"], "total": 0}
        )
        found["total"] += entry["total"]
    return [totals[key] for key in sorted(totals)]


def _summed(counts: Any) -> dict[str, int]:
    total: Counter[str] = Counter()
    for each in counts:
        total.update(each)
    return dict(sorted(total.items()))
