"""The ASGI app of ``eidetic serve``: the viewer's pages, its static files and MCP over
streamable HTTP at ``/mcp``, all over one ``Session`` (one ``Memory``, one worker thread)."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..mcp.server import build_server
from ..session import Session
from . import pages
from .browse_pages import gather
from .guard import Guard, given_token, is_loopback
from .health import HEALTH_PATH, healthz
from .limits import BodyLimit, CallLimit, Limits
from .overview_report import Reports
from .respond import ERRORS
from .stopping import Calls, CountCalls
from .templating import templates

HERE = Path(__file__).resolve().parent
MCP_PATH = "/mcp"


def create_app(
    session: Session,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The app for one session scope. ``host`` and ``port`` are where it listens (the Host
    check needs them); ``token`` is required beyond loopback (``eidetic serve`` makes one), and
    one of only spaces is none; ``limits`` bound what one caller may ask at once (``limits.py``)."""
    token = given_token(token)
    if token is None and not is_loopback(host):
        raise ValueError(f"a server on {host} needs a token (one of only spaces is none)")
    mcp = build_server(session)
    # The SDK checks Host and Origin on loopback itself; with a token the Guard's token check
    # stands in (and a reverse proxy in front may pass its own host name on).
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if token else None
    # Stateless: no MCP session is kept between requests, so an agent behind a load balancer may
    # reach any of several servers on one database with each call (docs/team-server.md).
    mcp_routes = mcp.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=security, stateless_http=True
    ).routes
    routes: list[BaseRoute] = [
        Route(HEALTH_PATH, healthz),
        *pages.routes(),
        *mcp_routes,
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]

    reports = Reports(session.scope, session.memory.twin, gather)
    limits = limits or Limits()
    calls = Calls()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with mcp.session_manager.run():  # the MCP transport's sessions live as long as the app
                yield
        finally:
            reports.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(CountCalls, calls=calls),  # first: a call waiting for a slot is in flight too
            Middleware(Guard, token=token, host=host, port=port),
            Middleware(CallLimit, per_token=limits.per_token, wait=limits.wait, port=port, accepts=_accepts(token)),
            Middleware(BodyLimit, max_body=limits.max_body),
        ],
        exception_handlers=ERRORS,
    )
    app.state.calls = calls  # how many are in flight: ``eidetic serve`` stops once none is
    app.state.session = session
    app.state.reports = reports
    app.state.templates = templates()  # autoescaped: records are text
    return app


def _accepts(token: str | None) -> Callable[[bytes], bool] | None:
    """Whether a presented credential is the server's token (at constant cost), for the limits."""
    if token is None:
        return None
    expected = token.encode()
    return lambda given: hmac.compare_digest(given, expected)
