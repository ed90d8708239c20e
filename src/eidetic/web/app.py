"""The ASGI app of ``eidetic serve``: the viewer's pages, its static files and MCP over
streamable HTTP at ``/mcp``, over one ``Memory`` and the server's worker threads, for the
server's own session scope and each member's (``sessions``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..session import Session
from ..team.tokens import Registry
from . import pages
from .browse_pages import gather
from .guard import Guard, given_token, is_loopback
from .health import HEALTH_PATH, healthz
from .limits import BodyLimit, CallLimit, Limits
from .member_mcp import MemberMCP
from .overview_report import ScopeReports
from .respond import ERRORS
from .sessions import Sessions
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
    registry: Registry | None = None,
    limits: Limits | None = None,
) -> Starlette:
    """The app for the server's session scope and its members'. ``host`` and ``port`` are where
    it listens (the Host check needs them); ``token`` (the server's own) is required beyond
    loopback unless members' tokens (``registry``) are, and one of only spaces is none;
    ``limits`` bound what one caller may ask at once (``limits.py``)."""
    token = given_token(token)
    if token is None and registry is None and not is_loopback(host):
        raise ValueError(f"a server on {host} needs a token (one of only spaces is none)")
    sessions = Sessions(session)
    # The SDK checks Host and Origin on an open loopback server itself; with tokens the Guard's
    # token check stands in (and a reverse proxy in front may pass its own host name on).
    tokens = token is not None or (registry is not None and bool(registry.members()))
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if tokens else None
    mcp = MemberMCP(MCP_PATH, host, security)
    routes: list[BaseRoute] = [
        Route(HEALTH_PATH, healthz),
        *pages.routes(),
        Route(MCP_PATH, mcp),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]
    reports = ScopeReports(session.memory.twin, gather)
    limits = limits or Limits()
    calls = Calls()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with mcp.running():  # every member's MCP transport lives as long as the app
                yield
        finally:
            reports.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(CountCalls, calls=calls),  # first: a call waiting for a slot is in flight too
            Middleware(Guard, token=token, host=host, port=port, sessions=sessions, registry=registry),
            Middleware(CallLimit, per_token=limits.per_token, wait=limits.wait, checks_tokens=token is not None),
            Middleware(BodyLimit, max_body=limits.max_body),
        ],
        exception_handlers=ERRORS,
    )
    app.state.calls = calls  # how many are in flight: ``eidetic serve`` stops once none is
    app.state.session = session
    app.state.reports = reports
    app.state.templates = templates()  # autoescaped: records are text
    return app
