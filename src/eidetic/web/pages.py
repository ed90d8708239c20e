"""The viewer's pages: each handler reads its request, makes one call into the Python API on the
session's worker thread and renders a template. Scope is the server's session scope, never
widened by a request (a request may narrow it, as an MCP call may)."""

from __future__ import annotations

import typing
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import USER_ERROR, EideticError
from ..mcp_server import Session
from ..query import RecallQuery, exposed_options
from ..results import RecallResult

MODES = ("hybrid", "keyword", "exact", "approximate", "fields")


def routes() -> list[Route]:
    return [
        Route("/", search, name="search"),
        Route("/record", record, name="record"),
    ]


def session_of(request: Request) -> Session:
    return request.app.state.session


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    """A page (or, for an htmx request, the fragment the template marks as such)."""
    session = session_of(request)
    context.update(request=request, session_scope=session.scope, modes=MODES)
    return request.app.state.templates.TemplateResponse(request, template, context, status_code=status_code)


def failure(request: Request, exc: EideticError) -> Response:
    """An eidetic error as a page: its message and hint, the status a client can act on."""
    status = 404 if "not found" in exc.message else 400 if exc.code == USER_ERROR else 500
    return render(request, "error.html", status_code=status, error=exc)


def query_options(request: Request) -> dict[str, Any] | None:
    """The search form as ``RecallQuery`` options, read by the query's own field names (so a new
    recall option needs no change here); None when there is nothing to search for."""
    params = request.query_params
    if not params.get("q", "").strip() and not params.getlist("types"):
        return None
    hints = typing.get_type_hints(RecallQuery)
    options: dict[str, Any] = {}
    for spec in exposed_options():
        if spec.name in ("scope", "visibility") or spec.name not in params:
            continue  # the scope is the session's: read_scope decides it
        kind = hints[spec.name]
        if kind is bool:
            options[spec.name] = params.get(spec.name) in ("1", "on", "true", "yes")
        elif typing.get_origin(kind) is tuple:
            options[spec.name] = tuple(v for v in params.getlist(spec.name) if v.strip())
        elif raw := params.get(spec.name, "").strip():
            options[spec.name] = _number(kind, raw)
    return options


def _number(kind: Any, raw: str) -> Any:
    """``raw`` as the field's number type; text that is not one is left for ``RecallQuery`` to
    refuse with its own message (``top_k must be an integer``)."""
    for number in (int, float):
        if kind is number or number in typing.get_args(kind):
            try:
                return number(raw)
            except ValueError:
                return raw
    return raw


async def search(request: Request) -> Response:
    session = session_of(request)
    options = query_options(request)
    result = None
    if options is not None:

        def work() -> RecallResult:
            wanted = session.read_scope(request.query_params.get("scope"), request.query_params.get("visibility"))
            query = RecallQuery(
                request.query_params.get("q", ""), **options, scope=wanted.name, visibility=wanted.visibility
            )
            return session.memory.recall(query)

        try:
            result = await session.call(work)
        except EideticError as exc:
            return failure(request, exc)
    template = "results.html" if request.headers.get("hx-request") else "search.html"
    return render(request, template, result=result, params=request.query_params)


async def record(request: Request) -> Response:
    session = session_of(request)
    rid = request.query_params.get("id", "")
    try:
        view = await session.call(
            lambda: session.memory.show(rid, scope=session.scope.name, visibility=session.scope.visibility)
        )
    except EideticError as exc:
        return failure(request, exc)
    return render(request, "record.html", view=view)
