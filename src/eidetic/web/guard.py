"""Who may ask the server anything.

Three checks, before any page or MCP call runs:

- **Host**: on loopback without a token, a request must name the address the server listens on
  (``127.0.0.1:PORT``, ``localhost:PORT``, ``[::1]:PORT``). A web page elsewhere cannot read the
  memory by pointing a name it controls at 127.0.0.1 (DNS rebinding).
- **Token**: when the server has one (always, beyond loopback), each request carries it as
  ``Authorization: Bearer TOKEN`` (agents) or in the cookie a browser gets from the start-up
  URL's ``?token=``; that URL is answered with a redirect to the same page without it, so the
  token stays out of history, bookmarks and the address bar. The cookie opens the pages only:
  MCP at ``/mcp`` takes the header, so no web page can drive an agent's tools through a
  person's browser. Anything else gets 401. A token of only spaces, wherever it is read, is no
  token: it never opens anything, and it never stands for the server's own.
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
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import URL, QueryParams
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .health import HEALTH_PATH

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
    """ASGI middleware: the Host, token and Origin checks of this module's docstring."""

    def __init__(self, app: ASGIApp, *, token: str | None, host: str, port: int) -> None:
        self.app = app
        self.token = given_token(token)
        self.port = port
        # With a token a rebound name gets nothing anyway, and a reverse proxy may pass its own name on.
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

        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send_here)
            return
        await self.app(scope, receive, send_here)

    def refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        if scope["path"] == HEALTH_PATH:  # no data, no cookie: a proxy or service manager asks it bare
            return None
        host = headers.get("host", "")
        if self.hosts and host not in self.hosts:
            return PlainTextResponse("eidetic serves this address only by its own name", status_code=421)
        if self.token is not None:
            url = URL(scope=scope)
            given = given_token(QueryParams(url.query).get("token"))
            if given is not None and scope["method"] == "GET" and self._matches(given):
                return self._welcome(url)
            if not self._authorized(headers, cookie_ok=not scope["path"].startswith("/mcp")):
                return self._unauthorized(scope["path"])
        if scope["method"] in UNSAFE and not scope["path"].startswith("/mcp") and _cross_site(headers, host):
            return PlainTextResponse("a change must come from eidetic's own pages", status_code=403)
        return None

    def _matches(self, raw: str) -> bool:
        given = given_token(raw)
        assert self.token is not None
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _authorized(self, headers: dict[str, str], *, cookie_ok: bool) -> bool:
        bearer = headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and self._matches(bearer[7:]):
            return True
        for part in headers.get("cookie", "").split(";") if cookie_ok else ():
            name, _, value = part.strip().partition("=")
            if name == cookie_name(self.port) and self._matches(value):
                return True
        return False

    def _welcome(self, url: URL) -> Response:
        """The start-up URL: the cookie set, the token taken out of the address."""
        rest = [(k, v) for k, v in QueryParams(url.query).multi_items() if k != "token"]
        target = on_this_server(url.path + (f"?{urlencode(rest)}" if rest else ""))
        response = RedirectResponse(target, status_code=303)
        assert self.token is not None
        response.set_cookie(cookie_name(self.port), self.token, httponly=True, samesite="strict", path="/")
        return response

    @staticmethod
    def _unauthorized(path: str) -> Response:
        message = "this eidetic server needs its token"
        hint = "open the URL `eidetic serve` printed, or send Authorization: Bearer TOKEN"
        if path.startswith("/mcp"):
            return JSONResponse(
                {"error": message, "hint": hint}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        return PlainTextResponse(f"{message}: {hint}", status_code=401, headers={"WWW-Authenticate": "Bearer"})


def _cross_site(headers: dict[str, str], host: str) -> bool:
    """A request a browser sent for another site's page. Browsers say so in ``Sec-Fetch-Site``;
    it comes first because ``Origin`` is ``null`` even on the page's own forms when the page
    sends no referrer (as the viewer's pages do). A client that sends neither is no browser."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")  # none: typed or bookmarked by the person
    origin = headers.get("origin")
    return origin is not None and origin.split("://", 1)[-1] != host
