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
from .params import options_of, scope_of
from .respond import is_fragment, render, session_of

READ_ELSEWHERE = ("scope", "visibility")  # the session decides them (scope_of)


async def search(request: Request) -> Response:
    session = session_of(request)
    params = request.query_params
    query, result = None, None
    if params.get("q", "").strip() or params.getlist("types"):
        query, result = await session.call(lambda: recall(session, params))
    clear, apart = sections(result.items if result else [])
    return render(
        request,
        "results.html" if is_fragment(request) else "search.html",
        params=params,
        query=query,
        result=result,
        clear=clear,
        apart=apart,
        below=sum(hit.tier == "primary" for hit in apart),
        relevance_word=word,
        modes=MODES,
        mode=query.mode if query else params.get("mode") or session.memory.settings.mode or "hybrid",
    )


def recall(session: Session, params: QueryParams) -> tuple[RecallQuery, RecallResult]:
    """The search the address asks for, run as the session (on its worker thread)."""
    scope = scope_of(session, params)
    names = [spec.name for spec in exposed_options() if spec.name not in READ_ELSEWHERE]
    options = {"mode": None, "top_k": None, "record": False, **options_of(params, RecallQuery, names)}
    options["judge_relevance"] = True
    query = RecallQuery.configured(
        params.get("q", ""), session.memory.settings, scope=scope.name, visibility=scope.visibility, **options
    )
    return query, session.memory.recall(query)


def sections(hits: list[Hit]) -> tuple[list[Hit], list[Hit]]:
    """The hits a person reads as the answer, and those below the relevance floor (with the
    records linked from them), each in the ranking's order."""
    apart = below_floor([(hit.tier, hit.record.id, hit.parent, hit.relevant) for hit in hits])
    return [hit for hit, low in zip(hits, apart) if not low], [hit for hit, low in zip(hits, apart) if low]
