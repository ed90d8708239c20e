"""The threads a server's calls run on, each with its own ``Memory`` on the same stores.

A store's connections belong to the thread that opened them, so one ``Memory`` serves one call
at a time. A server shared by a team would then make every member wait behind the slowest
call (a big recall, an overview). Here each worker thread has a ``Memory`` of its own (the
first thread the server's own, the others its twins, opened on their thread when first
needed), so reads run side by side. The same default serves every backend: twins in one
process behave as processes on one store do, which every backend supports, and what they
read most (the indexes of files and sqlite) are files in the page cache every thread shares.

Writes need no lane of their own: every backend already serialises its writers across
processes (postgres with a session advisory lock, the files and sqlite backends with a lock
file, neo4j with its lease), and twins in one process are writers like any other process, so
a write waits only for another write, never for a read. The embedding model is loaded once
per process (``embed.local.load``) and shared by every twin.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .memory import Memory

T = TypeVar("T")


class Workers:
    """A pool of ``size`` threads over ``memory`` and its twins, shared by every session of a
    server; one thread (the default) runs every call one at a time, as ``eidetic mcp`` does."""

    def __init__(self, memory: Memory, size: int = 1) -> None:
        if size < 1:
            raise ValueError(f"a pool needs at least one worker, not {size}")
        self.memory = memory
        self.size = size
        self._local = threading.local()
        self._lock = threading.Lock()
        self._given = False  # the server's own Memory went to a thread
        self._twins: list[Memory] = []
        # threads start only when every running one is busy: a quiet server opens no twin
        self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="eidetic-worker", initializer=self._start)

    def current(self) -> Memory:
        """The ``Memory`` of the worker thread this runs on, its twin opened at its first use (a
        store that cannot be opened then fails that call, not the pool); elsewhere (the event
        loop, building the app) the server's own, for what every twin shares (settings, ``twin``)."""
        if not getattr(self._local, "worker", False):
            return self.memory
        if self._local.memory is None:
            twin = self.memory.twin()
            with self._lock:
                self._twins.append(twin)
            self._local.memory = twin
        return self._local.memory

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a free worker thread, awaited without blocking the event loop."""
        return await asyncio.wrap_future(self._pool.submit(work))

    def close(self) -> None:
        """Wait for the calls under way, then close the twins (their threads have ended)."""
        self._pool.shutdown(wait=True)
        for twin in self._twins:
            twin.close()
        self._twins.clear()

    def _start(self) -> None:
        """A new worker thread: the first takes the server's own ``Memory``, the others a twin
        when they first need one. Nothing here may fail: a failing start breaks the whole pool."""
        with self._lock:
            first, self._given = not self._given, True
        self._local.worker = True
        self._local.memory = self.memory if first else None
