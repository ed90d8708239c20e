"""Who may ask the viewer anything: the Host check on loopback (DNS rebinding), the token
(a Bearer header, or the cookie the start-up URL sets, with the token taken out of the address),
and the Origin check on changes (cross-site request forgery)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from eidetic import Memory
from eidetic.records import Scope
from eidetic.session import Session
from eidetic.web.app import create_app
from web_client import ORIGIN, PORT, page, served

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def notes(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember([{"id": "n1", "text": "The deploy key rotates monthly"}])
    return store


def test_loopback_answers_only_to_its_own_names(notes):
    with served() as client:
        for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"[::1]:{PORT}"):
            assert client.get("/", headers={"Host": host}).status_code == 200, host
        for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1", f"127.0.0.1:{PORT + 1}"):
            refused = client.get("/record?id=n1", headers={"Host": host})
            assert refused.status_code == 421 and "rotates" not in refused.text, host


def test_a_token_is_asked_for_and_the_start_up_url_sets_a_cookie(notes):
    with served(token=TOKEN) as client:
        for path in ("/", "/record?id=n1", "/browse", "/overview", "/static/style.css"):
            refused = client.get(path)
            assert refused.status_code == 401 and "rotates" not in refused.text, path
        assert client.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert client.get("/?token=wrong").status_code == 401
        welcome = client.get(f"/browse?sort=name&token={TOKEN}")
        assert welcome.status_code == 303 and welcome.headers["location"] == "/browse?sort=name"  # the token is gone
        cookie = welcome.headers["set-cookie"]
        assert (
            cookie.startswith(f"eidetic_token_{PORT}={TOKEN};") and "HttpOnly" in cookie and "SameSite=strict" in cookie
        )
        shown = client.get("/record?id=n1")  # the client keeps the cookie, as a browser does
        assert shown.status_code == 200 and page(shown).select_one("article.record")["data-id"] == "n1"
        assert TOKEN not in shown.text
        client.cookies.clear()
        assert client.get("/record?id=n1").status_code == 401


def test_beyond_loopback_any_host_name_but_always_the_token(notes):
    with Memory.open() as memory:
        session = Session(memory, Scope())
        try:
            app = create_app(session, host="0.0.0.0", port=PORT, token=TOKEN)
            client = TestClient(app, base_url="http://memory.internal:8000", follow_redirects=False)
            assert client.get("/").status_code == 401
            assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        finally:
            session.close()


def test_a_change_must_come_from_the_servers_own_pages(notes):
    with served() as client:
        for origin in ("https://evil.example", "http://127.0.0.1:9999", "null"):
            forged = client.post("/record/forget", data={"id": "n1", "confirm": "yes"}, headers={"Origin": origin})
            assert forged.status_code == 403, origin
        with Memory.open() as memory:
            assert memory.get("n1").lifecycle == "active"
        own = client.post("/record/forget", data={"id": "n1", "confirm": "yes"}, headers={"Origin": ORIGIN})
        assert own.status_code == 303
        assert client.get("/record/forget").status_code == 405  # a change is never a GET


def test_a_cookie_opens_only_the_server_on_its_own_port(notes):
    """Two servers on one host: a browser keeps both cookies, by host name alone."""
    with served(token=TOKEN) as client:
        client.cookies.set(f"eidetic_token_{PORT + 1}", TOKEN)  # the other server's
        assert client.get("/").status_code == 401
        client.cookies.set(f"eidetic_token_{PORT}", TOKEN)
        assert client.get("/").status_code == 200
