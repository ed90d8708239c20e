"""A caller's session: one warm ``Memory``, the scope it was started for, and the one worker
thread every call into that ``Memory`` runs on.

The MCP server (``eidetic mcp``, and ``/mcp`` of ``eidetic serve``) and the web viewer's pages
both serve a caller through it, so both apply one scope rule: a read may narrow the session's
scope but never widen it, and private records are read only for the session's own scope, and
only when the session itself is private.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from .errors import user_error
from .records import Scope, check_scope

if TYPE_CHECKING:
    from .memory import Memory

T = TypeVar("T")


class Session:
    """The server's one ``Memory``, its session scope, and the worker thread every call runs on."""

    def __init__(self, memory: Memory, scope: Scope) -> None:
        self.memory = memory
        self.scope = scope
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eidetic-mcp")

    def read_scope(self, name: str | None, visibility: str | None) -> Scope:
        """The scope a read runs as: the call's, defaulting to the session's, never wider."""
        wanted = check_scope(name or self.scope.name, visibility or self.scope.visibility)
        if wanted.visibility == "private" and wanted != self.scope:
            raise user_error(
                f"this server may read private records of {self.scope.name}/{self.scope.visibility} only, "
                f"not of {wanted.name}/private",
                f"use visibility public to read scope {wanted.name}'s public records, or start a server "
                f"with --scope {wanted.name} --visibility private",
            )
        return wanted

    async def call(self, work: Callable[[], T]) -> T:
        """``work()`` on the worker thread: every call into this ``Memory``, from MCP tools and
        from the web viewer's pages alike, runs there, one at a time."""
        return await asyncio.wrap_future(self._worker.submit(work))

    def close(self) -> None:
        self._worker.shutdown(wait=True)
