"""``GET /``: the search page. The form is a plain GET form (it works with JavaScript off);
htmx, when it runs, fetches only the results (``results.html``) and pushes the URL, so every
search has an address that can be bookmarked, shared and reloaded.

A search here is a person looking, not an agent needing: it is not counted in the records'
usage unless the address says ``record=1`` (as ``eidetic list`` and ``show`` count nothing).
"""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from ..mcp_server import Session
from ..query import RecallQuery, exposed_options
from ..results import RecallResult
from ..settings import MODES
from .params import options_of, scope_of
from .respond import is_fragment, render, session_of

READ_ELSEWHERE = ("scope", "visibility")  # the session decides them (scope_of)


async def search(request: Request) -> Response:
    session = session_of(request)
    params = request.query_params
    query, result = None, None
    if params.get("q", "").strip() or params.getlist("types"):
        query, result = await session.call(lambda: recall(session, params))
    return render(
        request,
        "results.html" if is_fragment(request) else "search.html",
        params=params,
        query=query,
        result=result,
        modes=MODES,
        mode=query.mode if query else params.get("mode") or session.memory.settings.mode or "hybrid",
    )


def recall(session: Session, params: QueryParams) -> tuple[RecallQuery, RecallResult]:
    """The search the address asks for, run as the session (on its worker thread)."""
    scope = scope_of(session, params)
    names = [spec.name for spec in exposed_options() if spec.name not in READ_ELSEWHERE]
    options = {"mode": None, "top_k": None, "record": False, **options_of(params, RecallQuery, names)}
    query = RecallQuery.configured(
        params.get("q", ""), session.memory.settings, scope=scope.name, visibility=scope.visibility, **options
    )
    return query, session.memory.recall(query)
