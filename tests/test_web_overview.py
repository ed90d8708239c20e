"""The overview's report is made off the request path (web/overview_report.py): by a thread with
its own Memory, shown with the time it was made, made again after a change through the server;
while the first is being made, the page says so and reloads itself."""

from __future__ import annotations

import threading

import pytest

from eidetic import Memory
from eidetic.records import Scope
from eidetic.web.browse_pages import gather
from eidetic.web.overview_report import Reports, ScopeReports
from web_client import ORIGIN, page, served


@pytest.fixture
def notes(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember([{"id": f"n{i}", "text": f"note {i} on the deploy window"} for i in range(3)])
    return store


def count(response, state: str) -> int:
    return int(page(response).select_one(f"#counts .by-lifecycle .n.{state}").text)


def test_a_small_store_is_counted_within_the_visit_and_again_after_a_change(notes):
    with served() as client:
        first = client.get("/overview")
        assert first.status_code == 200 and count(first, "active") == 3 and count(first, "archived") == 0
        assert "Counted" in page(first).select_one(".made").text
        forgot = client.post("/record/forget", data={"id": "n1", "confirm": "yes"}, headers={"Origin": ORIGIN})
        assert forgot.status_code == 303
        again = client.get("/overview")
        assert count(again, "active") == 2 and count(again, "archived") == 1


def test_the_report_comes_from_a_thread_of_its_own_and_is_made_again_when_due(notes):
    release, threads = threading.Event(), []

    def slow(memory: Memory, scope: Scope) -> dict:
        threads.append(threading.current_thread().name)
        release.wait(10)
        return gather(memory, scope)

    reports = Reports(Scope("default", "public"), Memory.open, slow)
    try:
        snapshot, running = reports.latest()
        assert snapshot.report is None and snapshot.updating and running is not None
        assert reports.latest()[1] is running  # one run at a time: a second visit waits for the same
        release.set()
        running.result(10)
        snapshot, running = reports.latest()
        assert running is None and snapshot.report is not None and snapshot.made
        assert snapshot.report["states"]["active"] == 3
        reports.changed()
        snapshot, running = reports.latest()
        assert running is not None and snapshot.report is not None  # the old one meanwhile
        running.result(10)
        assert threads == ["eidetic-overview_0"] * 2  # never the session's worker thread
    finally:
        release.set()
        reports.close()


def test_while_the_first_report_is_made_the_page_says_so_and_reloads(notes):
    release = threading.Event()

    def slow(memory: Memory, scope: Scope) -> dict:
        release.wait(10)
        return gather(memory, scope)

    with served() as client:
        app = client.app
        app.state.reports.close()  # type: ignore[attr-defined]
        app.state.reports = ScopeReports(Memory.open, slow)  # type: ignore[attr-defined]
        try:
            waiting = client.get("/overview")
            assert waiting.status_code == 200
            shown = page(waiting)
            assert shown.select_one('meta[http-equiv="refresh"]') is not None
            assert "Counting" in shown.select_one(".made").text and shown.select_one("#counts") is None
            release.set()
            app.state.reports.of(Scope("default", "public")).latest()[1].result(10)  # type: ignore[attr-defined, union-attr]
            counted = client.get("/overview")
            assert page(counted).select_one('meta[http-equiv="refresh"]') is None and count(counted, "active") == 3
        finally:
            release.set()
            app.state.reports.close()  # type: ignore[attr-defined]
            app.state.reports = ScopeReports(Memory.open, gather)  # type: ignore[attr-defined]
