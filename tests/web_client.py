"""The viewer in-process: the app of ``eidetic serve`` over a real ``Memory``, driven through
Starlette's ``TestClient`` (real HTTP semantics, no socket), and its pages read by the
contract's CSS selectors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bs4 import BeautifulSoup
from starlette.testclient import TestClient

from eidetic import Memory
from eidetic.records import Scope
from eidetic.session import Session
from eidetic.web.app import create_app

PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"


@contextmanager
def served(
    name: str = "default", visibility: str = "public", *, token: str | None = None, memory: Memory | None = None
) -> Iterator[TestClient]:
    """A client of the app for one session scope, over ``memory`` (default: ``Memory.open()``,
    the store the environment names). Redirects are not followed: tests look at them."""
    memory = memory or Memory.open()
    session = Session(memory, Scope(name, visibility))
    app = create_app(session, host="127.0.0.1", port=PORT, token=token)
    _, first = app.state.reports.of(
        session.scope
    ).latest()  # the overview's first report: pages that read it never race it
    if first is not None:
        first.result(timeout=120)
    try:
        yield TestClient(app, base_url=ORIGIN, follow_redirects=False)
    finally:
        app.state.reports.close()  # the overview's thread and its Memory (no lifespan runs here)
        session.close()
        memory.close()


def page(response) -> BeautifulSoup:
    """A response (or its text) parsed, for CSS selectors."""
    return BeautifulSoup(response if isinstance(response, str) else response.text, "html.parser")


def typed_text(textarea) -> str:
    """A textarea's value as a browser reads it: one newline right after the tag is dropped."""
    text = textarea.text
    return text[1:] if text.startswith("\n") else text


def hit_ids(response) -> list[str]:
    return [li["data-id"] for li in page(response).select("li.hit")]


def row_ids(response) -> list[str]:
    return [tr["data-id"] for tr in page(response).select("table#records tr.record")]
