"""What every page handler shares: the session, a template rendered with the headers every page
carries, and an error as a page (its message and hint, and a status a client can act on)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..errors import ENV_ERROR, EideticError, env_error
from ..session import Session

T = TypeVar("T")

# Record text is untrusted: scripts only from this server, no frames, no outside fetches, no
# referrer (a record's id is in the address), nothing kept in a shared cache.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Vary": "HX-Request, HX-Target",
}


class NotFound(Exception):
    """An id the session may not see, or that does not exist: one page (404) for both."""

    def __init__(self, error: EideticError) -> None:
        super().__init__(error.message)
        self.error = error


class Forbidden(Exception):
    """A change asked by a caller who may only read: one page (403), the controls being hidden."""

    def __init__(self, error: EideticError) -> None:
        super().__init__(error.message)
        self.error = error


def session_of(request: Request) -> Session:
    """The caller's session, as the ``Guard`` found it from the request's token."""
    return request.scope["eidetic.session"]


def writer_of(request: Request, operation: str) -> Session:
    """The caller's session, for a change (``operation``): a read-only member gets a 403, with
    the refusal the session gives every write (``Session.may_write``)."""
    session = session_of(request)
    try:
        session.may_write(operation)
    except EideticError as exc:
        raise Forbidden(exc) from None
    return session


def render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    """A page, or a fragment of one (each template is whole: a fragment is its own template);
    every page says who is signed in and what they may see and do."""
    session = session_of(request)
    context.update(request=request, session_scope=session.scope, member=session.member, read_only=session.read_only)
    response = request.app.state.templates.TemplateResponse(request, template, context, status_code=status_code)
    response.headers.update(HEADERS)
    return response


def moved(url: str) -> Response:
    """After a change: the page to see it on (303, so a reload does not post again)."""
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})


async def lookup(call: Awaitable[T]) -> T:
    """A call into the session that finds a record by id; its error is a 404."""
    try:
        return await call
    except EideticError as exc:
        raise NotFound(exc) from None


def is_fragment(request: Request) -> bool:
    """An htmx request for the results only (a history restore wants the whole page)."""
    headers = request.headers
    return headers.get("hx-target") == "results" and not headers.get("hx-history-restore-request")


def failure(request: Request, error: EideticError, status: int | None = None) -> Response:
    """An eidetic error as a page (or, for htmx, as the results): 400 for bad input, 500 for
    the environment, or ``status``."""
    code = status or (500 if error.code == ENV_ERROR else 400)
    return render(request, "alert.html" if is_fragment(request) else "error.html", status_code=code, error=error)


async def on_error(request: Request, exc: Exception) -> Response:
    """The app's handler for what a page raises: eidetic errors, missing records, disk trouble."""
    if isinstance(exc, NotFound):
        return failure(request, exc.error, 404)
    if isinstance(exc, Forbidden):
        return failure(request, exc.error, 403)
    if isinstance(exc, EideticError):
        return failure(request, exc)
    assert isinstance(exc, OSError)
    problem = f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    return failure(request, env_error(problem, "check the path, free disk space and permissions"))


ERRORS: dict[Any, Callable[..., Any]] = {
    NotFound: on_error,
    Forbidden: on_error,
    EideticError: on_error,
    OSError: on_error,
}
