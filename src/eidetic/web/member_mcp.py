"""MCP at ``/mcp`` for every caller: one MCP server per session (``mcp.server.build_server``),
so each member's tools state and apply their own scope's defaults and rule. A member's server is
built on its first request and its transport's session manager runs in the app's task group
until the app stops. A request goes to the server of the session the ``Guard`` authenticated.
Stateless: no MCP session is kept between requests, so an agent behind a load balancer may reach
any of several servers on one database with each call (docs/team-server.md), and no session id
of one member's can be replayed by another."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from ..mcp.server import build_server
from ..session import Session


class MemberMCP:
    """The ASGI app at ``path``: each session's own MCP server."""

    def __init__(self, path: str, host: str, security: TransportSecuritySettings | None) -> None:
        self.path, self.host, self.security = path, host, security
        self._managers: dict[int, StreamableHTTPSessionManager] = {}
        self._building = anyio.Lock()
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The app's lifespan: every server's transport lives as long as the app."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = await self._manager(scope["eidetic.session"])
        await manager.handle_request(scope, receive, send)

    async def _manager(self, session: Session) -> StreamableHTTPSessionManager:
        manager = self._managers.get(id(session))
        if manager is not None:
            return manager
        async with self._building:
            manager = self._managers.get(id(session))
            if manager is None:
                server = build_server(session)
                server.streamable_http_app(
                    streamable_http_path=self.path,
                    host=self.host,
                    transport_security=self.security,
                    stateless_http=True,
                )
                manager = server.session_manager
                assert self._group is not None, "the app's lifespan runs the MCP servers"
                await self._group.start(_serve, manager)
                self._managers[id(session)] = manager
        return manager


async def _serve(manager: StreamableHTTPSessionManager, *, task_status: TaskStatus[None]) -> None:
    async with manager.run():
        task_status.started()
        await anyio.sleep_forever()
