"""The overview's report, computed off the request path.

Counting a store by scope, type and lifecycle and grading every record (``audit``) reads every
record: seconds at 100k records. Done on the session's worker threads, that would hold one of
them (or, with ``--workers 1``, every other page and MCP call) meanwhile. So a thread of its own, with its own ``Memory`` on the
same stores (a store's connections belong to the thread that opened them), makes the report, and
the page shows the latest one with the time it was made, starting a new one when it is older than
``MAX_AGE`` seconds or a change was made through the server. A small store's report is ready
within the page's own request; a large store's first visit says it is counting and reloads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..errors import EideticError
from ..memory import Memory
from ..records import Scope
from ..timeutil import format_ts, now_utc

MAX_AGE = 30.0  # seconds: how old the counts on the page may be after a change made elsewhere


@dataclass(frozen=True)
class Snapshot:
    report: dict[str, Any] | None  # None until the first one is made
    made: str | None  # when, ISO 8601
    updating: bool  # a newer one is being made
    behind: bool = False  # ... because of a change made through the server: worth a short wait
    error: EideticError | None = None  # why the last one failed


class Reports:
    """The latest overview report of one session scope, and the thread that makes them."""

    def __init__(
        self, scope: Scope, opener: Callable[[], Memory], make: Callable[[Memory, Scope], dict[str, Any]]
    ) -> None:
        self._scope, self._opener, self._make = scope, opener, make
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eidetic-overview")
        self._memory: Memory | None = None
        self._lock = threading.Lock()
        self._latest: tuple[dict[str, Any], float, str] | None = None
        self._error: EideticError | None = None
        self._pending: Future[None] | None = None
        self._stale = True
        self._behind = False  # the run under way was started by a change

    def latest(self, refresh: bool = True) -> tuple[Snapshot, Future[None] | None]:
        """The latest report, and the run making a newer one (started here if it is due). Without
        ``refresh`` (a search or browse page reading the filters' choices), only a first report is
        started: the pages that show the counts keep them fresh, and a search never pays for a
        recount it does not show."""
        with self._lock:
            due = self._stale or self._latest is None or time.monotonic() - self._latest[1] > MAX_AGE
            due = due if refresh else self._latest is None
            if due and (self._pending is None or self._pending.done()):
                self._behind, self._stale = self._stale and self._latest is not None, False
                self._pending = self._worker.submit(self._run)
            running = self._pending if self._pending is not None and not self._pending.done() else None
            report, _, made = self._latest if self._latest is not None else (None, 0.0, None)
            behind = running is not None and self._behind
            return Snapshot(report, made, running is not None, behind, self._error), running

    def changed(self) -> None:
        """A change was made through the server: the next visit starts a new report."""
        with self._lock:
            self._stale = True

    def close(self) -> None:
        self._worker.submit(self._close)
        self._worker.shutdown(wait=True)

    def _run(self) -> None:
        try:
            if self._memory is None:
                self._memory = self._opener()
            report = self._make(self._memory, self._scope)
        except EideticError as exc:
            with self._lock:
                self._error = exc
            return
        with self._lock:
            self._latest, self._error = (report, time.monotonic(), format_ts(now_utc())), None

    def _close(self) -> None:
        if self._memory is not None:
            self._memory.close()


class ScopeReports:
    """The reports of every session scope the server serves (the server's, each member's): one
    ``Reports`` per scope, made on its first visit. A change through the server may change any
    scope's counts (a public record counts for everyone), so it makes all of them due."""

    def __init__(self, opener: Callable[[], Memory], make: Callable[[Memory, Scope], dict[str, Any]]) -> None:
        self._opener, self._make = opener, make
        self._reports: dict[Scope, Reports] = {}
        self._lock = threading.Lock()

    def of(self, scope: Scope) -> Reports:
        with self._lock:
            reports = self._reports.get(scope)
            if reports is None:
                reports = self._reports[scope] = Reports(scope, self._opener, self._make)
            return reports

    def changed(self) -> None:
        with self._lock:
            every = list(self._reports.values())
        for reports in every:
            reports.changed()

    def close(self) -> None:
        with self._lock:
            every = list(self._reports.values())
        for reports in every:
            reports.close()
