"""``GET /``: the search page. The form is a plain GET form (it works with JavaScript off);
htmx, when it runs, fetches only the results (``results.html``) and pushes the URL, so every
search has an address that can be bookmarked, shared and reloaded.

A search here is a person looking, not an agent needing: it is not counted in the records'
usage unless the address says ``record=1`` (as ``eidetic list`` and ``show`` count nothing).
Each hit is judged against the relevance floor (``judge_relevance``) and shows its relevance in
a number and a word; the hits below the floor are folded away under a count, and when none
clears it the page says "nothing relevant" (docs/viewer.md).
"""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from ..query import RecallQuery, exposed_options
from ..relevance_text import below_floor, word
from ..results import Hit, RecallResult
from ..session import Session
from ..settings import MODES
from . import home_page
from .browse_pages import report_of
from .choices import choices_of
from .params import options_of, scope_of
from .respond import is_fragment, render, session_of

READ_ELSEWHERE = ("scope", "visibility")  # the session decides them (scope_of)


async def search(request: Request) -> Response:
    """A search when the address asks for one; else the home page (``home_page``) under the
    same form, so the viewer opens on what is stored, and clearing a search brings it back."""
    session = session_of(request)
    params = request.query_params
    query, result, home = None, None, None
    if asks_search(params):
        query, result = await session.call(lambda: recall(session, params))
    if result is None:
        home = await session.call(lambda: home_page.gather(session))
    fragment = is_fragment(request)
    snapshot = await report_of(request, refresh=home is not None) if home is not None or not fragment else None
    if home is not None and snapshot is not None and snapshot.report is not None:
        if snapshot.report["listed_active"] != home.active:  # written elsewhere since: count again
            request.app.state.reports.changed()
            snapshot = await report_of(request)
    clear, apart = sections(result.items if result else [])
    return render(
        request,
        "results.html" if fragment else "search.html",
        params=params,
        query=query,
        result=result,
        home=home,
        snapshot=snapshot,
        choices=choices_of(snapshot.report if snapshot else None, params),
        clear=clear,
        apart=apart,
        below=sum(hit.tier == "primary" for hit in apart),
        relevance_word=word,
        modes=MODES,
        mode=query.mode if query else params.get("mode") or session.memory.settings.mode or "hybrid",
    )


def asks_search(params: QueryParams) -> bool:
    """Words to recall, or (in fields mode, which ranks without words) a type to list. A type or
    scope picked before any words leaves the home page up, with a link to browse them."""
    picked = [value for value in params.getlist("types") if value.strip()]
    return bool(params.get("q", "").strip() or (picked and params.get("mode") == "fields"))


def recall(session: Session, params: QueryParams) -> tuple[RecallQuery, RecallResult]:
    """The search the address asks for, run as the session (on its worker thread)."""
    scope = scope_of(session, params)
    names = [spec.name for spec in exposed_options() if spec.name not in READ_ELSEWHERE]
    options = {"mode": None, "top_k": None, "record": False, **options_of(params, RecallQuery, names)}
    options["judge_relevance"] = True
    options.setdefault("scope_only", bool(params.get("scope", "").strip()))  # as browse: that scope's records
    query = RecallQuery.configured(
        params.get("q", ""), session.memory.settings, scope=scope.name, visibility=scope.visibility, **options
    )
    return query, session.memory.recall(query)


def sections(hits: list[Hit]) -> tuple[list[Hit], list[Hit]]:
    """The hits a person reads as the answer, and those below the relevance floor (with the
    records linked from them), each in the ranking's order."""
    apart = below_floor([(hit.tier, hit.record.id, hit.parent, hit.relevant) for hit in hits])
    return [hit for hit, low in zip(hits, apart) if not low], [hit for hit, low in zip(hits, apart) if low]
