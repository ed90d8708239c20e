"""How ``eidetic serve`` stops on SIGTERM (a service manager) or SIGINT (Ctrl-C): it stops
listening, lets every call in flight finish and send its answer, then ends any event stream
still open, and returns, so the worker thread and the store are closed and the exit status is 0.

uvicorn alone would end the event streams of MCP calls still running (an MCP answer is an event
stream, and its SSE library closes every stream at the signal: the answers lost), and would
raise the signal again after stopping (SIGTERM then kills the process before the store is closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

import uvicorn
from sse_starlette.sse import AppStatus
from starlette.types import ASGIApp, Receive, Scope, Send

# Seconds a call in flight may take to answer after the signal; then its answer is dropped, but
# the worker thread still finishes the change it was making before the store is closed.
GRACE = 30


class Calls:
    """How many requests are in flight, MCP event streams a client opens to listen (``GET /mcp``)
    aside: they end only when closed."""

    def __init__(self) -> None:
        self.running = 0


class CountCalls:
    """ASGI middleware: keeps ``Calls.running``."""

    def __init__(self, app: ASGIApp, *, calls: Calls) -> None:
        self.app = app
        self.calls = calls

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["path"].startswith("/mcp") and scope["method"] == "GET"):
            await self.app(scope, receive, send)
            return
        self.calls.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.calls.running -= 1


class Server(uvicorn.Server):
    """uvicorn's server, stopping as this module's docstring says."""

    def __init__(self, config: uvicorn.Config, calls: Calls, grace: float = GRACE) -> None:
        super().__init__(config)
        self.calls = calls
        self.grace = grace
        AppStatus.disable_automatic_graceful_drain()  # the streams are ended by ``_end_streams``

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT start the graceful stop (a second SIGINT forces it), and are not
        raised again once stopped."""
        handled = (signal.SIGTERM, signal.SIGINT)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    async def shutdown(self, sockets: list | None = None) -> None:
        ending = asyncio.ensure_future(self._end_streams())
        try:
            await super().shutdown(sockets)  # stops listening, then waits for every connection
        finally:
            await ending

    async def _end_streams(self) -> None:
        """Once no call is in flight (or the grace is over), end every event stream still open."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace
        while self.calls.running and loop.time() < deadline and not self.force_exit:
            await asyncio.sleep(0.05)
        AppStatus.should_exit = True
