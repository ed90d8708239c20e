"""An agent's side of MCP over streamable HTTP against a real ``eidetic serve``, with the
official SDK's client: one session as an agent configured with the server's URL and a token
opens it, and tool calls that must succeed or must be refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import LoggingMessageNotificationParams

from serve_process import Served


@asynccontextmanager
async def connect(
    served: Served, token: str | None = None, path: str = "/mcp", heard: list[str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized MCP session over HTTP with ``token`` (default: the server's own) as an
    ``Authorization: Bearer`` header; what the server logs to the client goes into ``heard``."""
    token = served.token if token is None else token
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def log(params: LoggingMessageNotificationParams) -> None:
        if heard is not None:
            heard.append(str(params.data))

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(served.base + path, http_client=http) as (read, write),
        ClientSession(read, write, logging_callback=log) as session,
    ):
        await session.initialize()
        yield session


def run(work: Any, seconds: float = 90) -> None:
    """``await work()`` in an event loop of its own, failing after ``seconds``."""

    async def main() -> None:
        with anyio.fail_after(seconds):
            await work()

    anyio.run(main)


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text
