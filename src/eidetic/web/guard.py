"""Who may ask the server anything.

Three checks, before any page or MCP call runs:

- **Host**: on loopback without a token, a request must name the address the server listens on
  (``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT``). A web page elsewhere cannot read the
  memory by pointing a name it controls at 127.0.0.1 (DNS rebinding).
- **Token**: when the server has one (always, beyond loopback) or members' tokens
  (``eidetic tokens add``), each request carries one as ``Authorization: Bearer TOKEN``
  (agents) or in the cookie a browser gets from a sign-in URL's ``?token=``; that URL is
  answered with a redirect to the same page without it, so the token stays out of history,
  bookmarks and the address bar. The cookie opens the pages only: MCP at ``/mcp`` takes the
  header, so no web page can drive an agent's tools through a person's browser. Anything else
  gets 401. A token of only spaces, wherever it is read, is no token: it never opens anything.
- **Identity**: the token says who asks. A member's token runs the request as that member's
  session (``sessions.Sessions``), the server's own token (or none, on an open loopback server)
  as the server's; the session and the member's name (``None`` for the server's) are put in the
  ASGI scope (``eidetic.session``, ``eidetic.member``) for what runs after. Members are looked
  up on every request (by the SHA-256 of the token presented, one indexed lookup, the same work
  for any token), so a token added or revoked counts on the next request, with no restart.
  Wrong tokens are told on stderr without the token (``failures``).
- **Redirects** stay on this server: every ``Location`` it sends (its own, and the framework's
  trailing-slash ones) is a path here, leading slashes collapsed, so ``GET //evil.example/``
  cannot send a browser to another site (``//host`` is a link to that host).
- **Health**: ``/healthz`` passes every check: it tells nothing but that the server answers
  (``health.py``), and a proxy or a service manager asks it without a token or a name.
- **Origin**: a form post (a change) must come from the server's own pages, as the browser
  tells (``Sec-Fetch-Site``, else ``Origin``): a foreign page cannot make a browser forget a
  record (cross-site request forgery).
"""

from __future__ import annotations

import hmac
import re
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

import anyio.to_thread
from starlette.datastructures import URL, QueryParams
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import EideticError
from ..team.tokens import digest
from .failures import Failures
from .health import HEALTH_PATH

if TYPE_CHECKING:
    from ..session import Session
    from ..team.tokens import Registry
    from .sessions import Sessions

LOOPBACK = ("127.0.0.1", "localhost", "::1")
UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_LEADING = re.compile(r"^[/\\]+")


def cookie_name(port: int) -> str:
    """The token's cookie: one per port, since a browser keeps cookies by host name alone and
    two servers on one host must not overwrite each other's."""
    return f"eidetic_token_{port}"


def is_loopback(host: str) -> bool:
    return host in LOOPBACK


def given_token(raw: str | None) -> str | None:
    """A token as read from anywhere (a setting, a header, a cookie, a query): spaces around it
    dropped, and one that is only spaces (or empty) is none, so it can never match another."""
    token = (raw or "").strip()
    return token or None


def on_this_server(location: str) -> str:
    """A redirect's target as a path on this server: an absolute URL's scheme and host dropped,
    the characters browsers ignore in a URL (tab, newline) dropped, and leading slashes (and
    backslashes, which browsers read as slashes) collapsed to one: ``//host`` names a host."""
    text = "".join(ch for ch in location if ch not in "\t\r\n")
    if _SCHEME.match(text):
        parts = urlsplit(text)
        text = (
            parts.path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
        )
    return "/" + _LEADING.sub("", text)


class Guard:
    """ASGI middleware: the Host, token, identity and Origin checks of this module's docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        host: str,
        port: int,
        sessions: Sessions,
        registry: Registry | None = None,
        failures: Failures | None = None,
    ) -> None:
        self.app = app
        self.token = given_token(token)
        self.port = port
        self.sessions = sessions
        self.registry = registry
        self.failures = failures or Failures()
        # Only an open loopback server (no token of its own, no members) checks the Host: with a
        # token a rebound name gets nothing anyway, and a reverse proxy may pass its own name on.
        names = ["127.0.0.1", "localhost", "[::1]"] if is_loopback(host) and self.token is None else []
        self.hosts = {f"{name}:{port}" for name in names}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}

        async def send_here(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                message["headers"] = [
                    (name, on_this_server(value.decode("latin-1")).encode("latin-1") if name == b"location" else value)
                    for name, value in message["headers"]
                ]
            await send(message)

        try:
            refusal = await self.refusal(scope, headers)
        except EideticError as exc:  # the members' database is out of reach: nobody can be told apart
            refusal = PlainTextResponse(f"{exc.message}: {exc.remediation}", status_code=503)
        if refusal is not None:
            await refusal(scope, receive, send_here)
            return
        await self.app(scope, receive, send_here)

    async def refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        """None when the request may go on (its session put in ``scope``), else the answer."""
        if scope["path"] == HEALTH_PATH:  # no data, no cookie: a proxy or service manager asks it bare
            scope["eidetic.session"], scope["eidetic.member"] = self.sessions.server, None
            return None
        host = headers.get("host", "")
        url = URL(scope=scope)
        from_query = given_token(QueryParams(url.query).get("token")) if scope["method"] == "GET" else None
        mcp = scope["path"].startswith("/mcp")
        presented = [from_query, _bearer(headers), None if mcp else self._cookie(headers)]
        members_exist = False
        for token in dict.fromkeys(t for t in presented if t is not None):
            members_exist, session = await self._session_of(token)
            if session is not None:
                scope["eidetic.session"], scope["eidetic.member"] = session, session.member
                if token == from_query:
                    return self._welcome(url, token)
                return self._cross_site_refusal(scope, headers, host)
        wrong = any(token is not None for token in presented)
        if not wrong and self.registry is not None:  # no token: still asked, so no answer is quicker
            members_exist, _ = await self._session_of("")
        if self.token is not None or members_exist or not self.hosts:
            if wrong:
                self.failures.failed(_client(scope), scope["path"])
            return self._unauthorized(scope["path"])
        if host not in self.hosts:
            return PlainTextResponse("eidetic serves this address only by its own name", status_code=421)
        scope["eidetic.session"], scope["eidetic.member"] = self.sessions.server, None
        return self._cross_site_refusal(scope, headers, host)

    async def _session_of(self, token: str) -> tuple[bool, Session | None]:
        """Whether members exist, and the session ``token`` opens: a member's (looked up by
        the token's digest), the server's own, or none."""
        hashed = digest(token)
        members_exist, member = False, None
        if self.registry is not None:
            members_exist, member = await anyio.to_thread.run_sync(self.registry.lookup, hashed)
        if member is not None:
            return True, self.sessions.of(member)
        if self.token is not None and token and hmac.compare_digest(hashed, digest(self.token)):
            return members_exist, self.sessions.server
        return members_exist, None

    def _cookie(self, headers: dict[str, str]) -> str | None:
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == cookie_name(self.port):
                return given_token(value)
        return None

    @staticmethod
    def _cross_site_refusal(scope: Scope, headers: dict[str, str], host: str) -> Response | None:
        if scope["method"] in UNSAFE and not scope["path"].startswith("/mcp") and _cross_site(headers, host):
            return PlainTextResponse("a change must come from eidetic's own pages", status_code=403)
        return None

    def _welcome(self, url: URL, token: str) -> Response:
        """A sign-in URL: the cookie set to the token it carries, the token taken out of the address."""
        rest = [(k, v) for k, v in QueryParams(url.query).multi_items() if k != "token"]
        target = on_this_server(url.path + (f"?{urlencode(rest)}" if rest else ""))
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(cookie_name(self.port), token, httponly=True, samesite="strict", path="/")
        return response

    @staticmethod
    def _unauthorized(path: str) -> Response:
        message = "this eidetic server needs its token"
        hint = (
            "open the URL `eidetic serve` printed (a member: the server's URL with ?token=YOUR_TOKEN), "
            "or send Authorization: Bearer TOKEN"
        )
        return refused(path, 401, message, hint, {"WWW-Authenticate": "Bearer"})


def refused(path: str, status: int, message: str, hint: str, headers: dict[str, str] | None = None) -> Response:
    """A refusal as MCP clients (JSON) or people (text) read it, with what to do about it."""
    if path.startswith("/mcp"):
        return JSONResponse({"error": message, "hint": hint}, status_code=status, headers=headers)
    return PlainTextResponse(f"{message}: {hint}", status_code=status, headers=headers)


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return given_token(value[7:]) if value.lower().startswith("bearer ") else None


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "an unknown address"


def _cross_site(headers: dict[str, str], host: str) -> bool:
    """A request a browser sent for another site's page. Browsers say so in ``Sec-Fetch-Site``;
    it comes first because ``Origin`` is ``null`` even on the page's own forms when the page
    sends no referrer (as the viewer's pages do). A client that sends neither is no browser."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")  # none: typed or bookmarked by the person
    origin = headers.get("origin")
    return origin is not None and origin.split("://", 1)[-1] != host
