"""A caller's session: the scope it was started for, who the caller is, and the worker threads
(``workers.Workers``, each with its own warm ``Memory``) its calls run on.

The MCP server (``eidetic mcp``, and ``/mcp`` of ``eidetic serve``) and the web viewer's pages
both serve a caller through it, so both apply one scope rule: a read may narrow the session's
scope but never widen it, and private records are read only for the session's own scope, and
only when the session itself is private.

Every change a caller makes goes through :meth:`Session.write`: a read-only caller is refused
there, and what was changed (never the text) is appended to the server's write log, if it keeps
one, under the caller's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from .errors import user_error
from .records import Scope, check_scope
from .workers import Workers

if TYPE_CHECKING:
    from .memory import Memory

T = TypeVar("T")


class WriteLog(Protocol):
    """Where a server keeps who changed what: the member, the operation and the ids, never text."""

    def append(self, member: str | None, operation: str, ids: Sequence[str]) -> None: ...


class Session:
    """A caller's session scope and name, over the server's ``Memory`` and the worker threads
    every call runs on."""

    def __init__(
        self,
        memory: Memory,
        scope: Scope,
        *,
        member: str | None = None,
        read_only: bool = False,
        log: WriteLog | None = None,
        workers: Workers | None = None,
    ) -> None:
        """``workers``: the server's pool, shared by its sessions (over this ``memory``), which
        the server closes; by default one thread of the session's own, closed with it."""
        if workers is not None and workers.memory is not memory:
            raise ValueError("a session's workers must run over its own Memory")
        self.scope = scope
        self.member = member  # who is asking: a token's name; None on a one-identity server
        self.read_only = read_only
        self.log = log
        self._own = workers is None
        self.workers = Workers(memory) if workers is None else workers

    @property
    def memory(self) -> Memory:
        """The ``Memory`` of the worker thread this call runs on (each thread has its own: a
        store's connections belong to one thread); elsewhere the server's own."""
        return self.workers.current()

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
        """``work()`` on a worker thread: every call into the store, from MCP tools and from the
        web viewer's pages alike, runs there, beside other calls when the pool has threads free."""
        return await self.workers.run(work)

    def may_write(self, operation: str) -> None:
        """Raises the refusal a read-only caller gets for ``operation`` (the MCP tools' error,
        the viewer's 403 page); returns for a caller who may write."""
        if self.read_only:
            raise user_error(
                f"{self.member or 'this caller'} may only read on this server: {operation} is refused",
                "ask whoever runs the server for a token that may write",
            )

    async def write(self, operation: str, work: Callable[[], T], ids: Callable[[T], Sequence[str]]) -> T:
        """``work()``, a change (``operation``: remember, supersede, forget, restore, edit,
        sweep...), as :meth:`call` runs it; refused for a read-only caller, and the ids it
        changed (``ids(result)``) appended to the write log, if the server keeps one."""
        self.may_write(operation)

        def logged() -> T:
            result = work()
            if self.log is not None:
                self.log.append(self.member, operation, list(ids(result)))
            return result

        return await self.call(logged)

    def close(self) -> None:
        if self._own:
            self.workers.close()
