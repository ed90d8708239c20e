"""What one caller may ask of a shared server at once, so that nobody can take it over.

- **Request bodies** are at most ``Limits.max_body`` bytes (1 MiB by default; ``--max-body``).
  A larger one gets 413 as soon as the excess arrives: the body is counted as it comes, chunk by
  chunk, so a chunked upload without a ``Content-Length`` is stopped as surely as one that
  declares its size, and nothing of it reaches a page or an MCP tool.
- **Calls in flight** are at most ``Limits.per_token`` per caller (``--per-token``; by default
  half the server's worker threads, so one caller never holds them all). A call beyond that waits up to ``Limits.wait`` seconds for one of the
  caller's own calls to end, then gets 429 with ``Retry-After``: one member flooding the server
  fills only their own slots, and everyone else's calls go on. A caller is who the ``Guard``
  found the request's token to be: a member (each member's token, ``eidetic tokens``), the
  holders of the server's own token, or on an open loopback server the client's address. An MCP event stream opened to listen
  (``GET /mcp``, open as long as a client keeps it), static files and ``/healthz`` are no calls.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .guard import refused
from .health import HEALTH_PATH

MIB = 1 << 20
BODILESS = {"GET", "HEAD", "OPTIONS"}


@dataclass(frozen=True)
class Limits:
    max_body: int = MIB  # bytes of one request body
    per_token: int = 2  # calls in flight per caller (eidetic serve: half its workers)
    wait: float = 2.0  # seconds a call beyond ``per_token`` waits for a slot before 429


class BodyLimit:
    """ASGI middleware: a request body over ``max_body`` bytes is answered 413 and never passed on."""

    def __init__(self, app: ASGIApp, *, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in BODILESS:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        # The whole body first (it is small, or it is refused): a page or a tool then never sees
        # half of one, and a chunked body is counted as it arrives.
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break  # the client went away: the app sees that as it would have
            size += len(message.get("body", b""))
            if size > self.max_body:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = refused(
            scope["path"],
            413,
            f"a request body may hold at most {self.max_body:,} bytes here",
            "send fewer or shorter records a call (MCP remember takes at most 1,000 a call), "
            "or ask whoever runs the server to raise --max-body",
            {"Connection": "close"},
        )
        await response(scope, receive, send)


class _Slots:
    """One caller's calls in flight, and how many of its calls hold or wait for a slot."""

    def __init__(self, limit: int) -> None:
        self.free = asyncio.Semaphore(limit)
        self.users = 0


class CallLimit:
    """ASGI middleware: at most ``per_token`` calls in flight per caller (this module's docstring)."""

    def __init__(self, app: ASGIApp, *, per_token: int, wait: float, checks_tokens: bool) -> None:
        self.app = app
        self.per_token = per_token
        self.wait = wait
        self.checks_tokens = checks_tokens  # the server's own token: its holders are one caller
        self.callers: dict[str, _Slots] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _is_call(scope):
            await self.app(scope, receive, send)
            return
        key = self._caller(scope)
        slots = self.callers.get(key) or self.callers.setdefault(key, _Slots(self.per_token))
        slots.users += 1
        try:
            try:
                await asyncio.wait_for(slots.free.acquire(), self.wait)
            except TimeoutError:
                await self._busy(scope, receive, send)
                return
            try:
                await self.app(scope, receive, send)
            finally:
                slots.free.release()
        finally:
            slots.users -= 1
            if not slots.users:
                del self.callers[key]  # an idle caller costs nothing

    def _caller(self, scope: Scope) -> str:
        """A caller's key, from the identity the ``Guard`` established (it runs first): a member's
        name, the server's own token, else (an open loopback server) the client's address. A
        credential made up on the spot next to a good one is no identity, so it opens no slots."""
        session = scope.get("eidetic.session")
        if session is not None and session.member is not None:
            return "member " + session.member
        if self.checks_tokens:
            return "server"
        client = scope.get("client")
        return "address " + (client[0] if client else "unknown")

    async def _busy(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = refused(
            scope["path"],
            429,
            f"this caller already has {self.per_token} calls in flight here",
            "wait for them to finish, or retry after the seconds in Retry-After",
            {"Retry-After": "1"},
        )
        await response(scope, receive, send)


def _is_call(scope: Scope) -> bool:
    """Whether a request counts against its caller's slots: an MCP event stream opened to listen,
    static files and the health check do not."""
    path = scope["path"]
    if path == HEALTH_PATH or path.startswith("/static/"):
        return False
    return not (path.startswith("/mcp") and scope["method"] == "GET")
