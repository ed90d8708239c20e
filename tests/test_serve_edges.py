"""The edges of a real ``eidetic serve``, over real HTTP: every redirect it answers (the start-up
URL's, the framework's trailing-slash ones) is a path on this server, whatever the request's
path; and a token of only spaces, wherever it is read, is no token."""

from __future__ import annotations

import contextlib
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from eidetic import Memory
from eidetic.records import Scope
from eidetic.session import Session
from eidetic.web.app import create_app
from eidetic.web.guard import on_this_server
from serve_process import Served, seed, serve, store_env

TOKEN = "edge-token-0123456789-abcdefghij"
BLANKS = ("", " ", "   ", "\t \t")
RECORD = {"id": "n1", "text": "The deploy key rotates monthly", "scope": {"name": "default", "visibility": "public"}}
# (raw request path, the path the redirect names; None: any path here): a browser reads "//host"
# and "/\\host" as another host, and drops tabs and newlines from a URL before it reads it
HOSTILE = [
    (f"//evil.example/?token={TOKEN}", "/evil.example/"),
    (f"///evil.example/x?token={TOKEN}&q=a", "/evil.example/x?q=a"),
    (f"//evil.example//?token={TOKEN}", "/evil.example//"),
    (f"/browse?token={TOKEN}&next=//evil.example", "/browse?next=%2F%2Fevil.example"),
    (f"/%2F%2Fevil.example/?token={TOKEN}", None),
    (f"/%5Cevil.example/?token={TOKEN}", None),
    (f"/%5C%5Cevil.example/?token={TOKEN}", None),
    (f"/%09/evil.example/?token={TOKEN}", None),
    (f"/%0A/evil.example/?token={TOKEN}", None),
    (f"/x/../..//evil.example/?token={TOKEN}", None),
]


@pytest.fixture(scope="module")
def served_env(tmp_path_factory) -> dict[str, str]:
    env = store_env(tmp_path_factory.mktemp("serve-edges"))
    seed(env, [RECORD])
    return env


@pytest.fixture(scope="module")
def tokened(served_env) -> Iterator[Served]:
    served = serve({**served_env, "EIDETIC_SERVE_TOKEN": TOKEN}, "--token")
    yield served
    served.stop()


def raw_get(http: httpx.Client, served: Served, raw_path: str, **headers: str) -> httpx.Response:
    """A GET of ``raw_path`` exactly as written (httpx would read ``//host`` as a host)."""
    url = httpx.URL(served.base).copy_with(raw_path=raw_path.encode("ascii"))
    return http.send(http.build_request("GET", url, headers=headers), follow_redirects=False)


def raw_status(served: Served, header: str) -> int:
    """The status of ``GET /`` with one header line sent byte for byte over a socket: httpx
    refuses to send a header value with spaces at its end, which a client may still send."""
    url = httpx.URL(served.base)
    with socket.create_connection((url.host, url.port), timeout=30) as conn:
        conn.sendall(f"GET / HTTP/1.1\r\nHost: {url.host}:{url.port}\r\n{header}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def stays_here(served: Served, answer: httpx.Response) -> str:
    """The Location of a redirect, checked to be a path on ``served``: what a browser resolves it to."""
    assert 300 <= answer.status_code < 400, (answer.status_code, answer.text)
    location = answer.headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location
    resolved = httpx.URL(served.base + "/somewhere").join(location)
    assert (resolved.host, resolved.port) == (httpx.URL(served.base).host, httpx.URL(served.base).port), location
    return location


@pytest.mark.parametrize(("raw_path", "expected"), HOSTILE)
def test_the_start_up_urls_redirect_stays_on_this_server(tokened, raw_path, expected):
    with httpx.Client(timeout=30) as http:
        answer = raw_get(http, tokened, raw_path)
        location = stays_here(tokened, answer)
        assert expected is None or location == expected
        assert answer.status_code == 303 and answer.headers["set-cookie"].startswith("eidetic_token_")
        assert TOKEN not in answer.headers["location"]


@pytest.mark.slow
def test_the_frameworks_redirects_are_paths_on_this_server(served_env, tokened):
    """Starlette's trailing-slash redirects name the Host header's host: relative now, on a
    token server (which answers any host name) and on a loopback one (which checks it)."""
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    open_server = serve(served_env)
    try:
        with httpx.Client(timeout=30) as http:
            for served, headers in ((tokened, bearer), (open_server, {})):
                for raw_path, expected in (
                    ("/browse/", "/browse"),
                    ("/static", "/static/"),
                    ("/record/?id=n1", "/record?id=n1"),
                ):
                    answer = raw_get(http, served, raw_path, **headers)
                    assert answer.status_code == 307 and stays_here(served, answer) == expected, raw_path
                followed = http.get(served.base + "/browse/", headers=headers, follow_redirects=True)
                assert followed.status_code == 200 and "n1" in followed.text
            proxied = raw_get(http, tokened, "/browse/", Host="evil.example", **bearer)  # any name, with the token
            assert stays_here(tokened, proxied) == "/browse"
            for raw_path in ("//evil.example/", "//browse/", "/\\evil.example/"):
                answer = raw_get(http, tokened, raw_path, **bearer)
                assert answer.status_code in (400, 404) or stays_here(tokened, answer), raw_path
    finally:
        open_server.stop()


def test_a_token_of_only_spaces_never_opens_the_server(tokened):
    """The server's own token is real; every blank a request could carry, in each place a token
    is read (the query, the header, the cookie), is refused like no token at all."""
    cookie = tokened.cookies
    name = next(iter(cookie))
    with httpx.Client(timeout=30) as http:
        for blank in BLANKS:
            quoted = blank.replace(" ", "%20").replace("\t", "%09")
            assert raw_get(http, tokened, f"/?token={quoted}").status_code == 401, repr(blank)
            for header in (f"Authorization: Bearer {blank}", f"Cookie: {name}={blank}", f'Cookie: {name}="{blank}"'):
                assert raw_status(tokened, header) == 401, header
        assert raw_status(tokened, f"Authorization: Bearer  {TOKEN} ") == 200  # spaces around a real one: it


@pytest.mark.slow
@pytest.mark.parametrize("blank", ["   ", "\t"])
def test_a_blank_configured_token_is_no_token_on_every_address(served_env, blank):
    """``EIDETIC_SERVE_TOKEN`` of only spaces counts as unset: beyond loopback (and with
    ``--token``) the server makes a token and prints it once, as when none is given, so neither
    a blank nor an empty request token gets in; on loopback without ``--token`` there is no
    token, and the Host check stands as usual."""
    blanked = {**served_env, "EIDETIC_SERVE_TOKEN": blank}
    for args in (("--host", "0.0.0.0"), ("--token",)):
        served = serve(blanked, *args)
        try:
            assert served.token and served.token.strip() == served.token and len(served.token) > 20
            assert f"?token={served.token}" in served.lines[0]  # made here, so shown once
            with httpx.Client(timeout=30) as http:
                for given in (blank, ""):
                    assert raw_status(served, f"Authorization: Bearer {given}") == 401
                    quoted = given.replace(" ", "%20").replace("\t", "%09")
                    assert raw_get(http, served, f"/?token={quoted}").status_code == 401
                authorized = {"Authorization": f"Bearer {served.token}"}
                assert http.get(served.base + "/", headers=authorized).status_code == 200
        finally:
            served.stop()
    loopback = serve(blanked)
    try:
        assert loopback.token is None and "Bearer" not in loopback.lines[1]
        with httpx.Client(timeout=30) as http:
            assert http.get(loopback.base + "/").status_code == 200
            assert http.get(loopback.base + "/", headers={"Host": "evil.example"}).status_code == 421
    finally:
        loopback.stop()


def test_a_token_is_never_read_from_a_flag_or_a_config_file(cli, env: Path):
    """``--token`` is a switch (a value after it is refused before anything starts), and a
    config file cannot hold the token at all: both refused with a message, blank or not."""
    flagged = cli("serve", "--token", "   ", "--port", "0")
    assert flagged.code != 0 and "unrecognized arguments" in flagged.err and "Traceback" not in flagged.err
    config = env / "home" / ".config" / "eidetic" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    for key in ("serve-token", "serve_token"):
        config.write_text(f'{key} = "   "\n')
        refused = cli("serve", "--port", "0")
        assert refused.code == 1 and f"unknown setting {key!r}" in refused.err and "Traceback" not in refused.err


def test_the_app_beyond_loopback_refuses_a_blank_token(store, monkeypatch):
    """Through the Python API too: ``create_app`` on another address with no token, or one of
    only spaces, is refused; on loopback a blank one is none (the Host check is on)."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        session = Session(memory, Scope())
        try:
            for blank in (None, *BLANKS):
                with pytest.raises(ValueError, match="needs a token"):
                    create_app(session, host="0.0.0.0", port=8765, token=blank)
            app = create_app(session, host="127.0.0.1", port=8765, token="   ")
            from starlette.testclient import TestClient

            client = TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)
            assert client.get("/", headers={"Authorization": "Bearer    "}).status_code == 200
            assert client.get("/", headers={"Host": "evil.example"}).status_code == 421
            app.state.reports.close()
        finally:
            session.close()


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("//evil.example/x", "/evil.example/x"),
        ("/\\evil.example", "/evil.example"),
        ("\\\\evil.example", "/evil.example"),
        ("/\t/evil.example", "/evil.example"),
        ("http://127.0.0.1:8765//evil.example/?a=1#f", "/evil.example/?a=1#f"),
        ("https://memory.internal/browse", "/browse"),
        ("/record?id=%2F%2Fx", "/record?id=%2F%2Fx"),
        ("", "/"),
    ],
)
def test_a_location_is_always_a_path_here(location, expected):
    assert on_this_server(location) == expected


def test_the_default_port_is_stable_and_a_taken_port_is_said_with_a_hint(cli, env: Path):
    """``eidetic serve`` listens on the same port every start (a bookmark and an agent's MCP
    address keep working); when something else holds it, it says so and how to go on, instead of
    moving elsewhere."""
    from eidetic.cli.serve import DEFAULT_PORT

    holders = []
    for port in (DEFAULT_PORT, 0):
        holder = socket.socket()
        with contextlib.suppress(OSError):  # the default port held by another program already: the same case
            holder.bind(("127.0.0.1", port))
            holder.listen(1)
        holders.append(holder)
    try:
        taken = holders[1].getsockname()[1]
        for args, port in (((), DEFAULT_PORT), (("--port", str(taken)), taken)):
            refused = cli("serve", *args)
            assert refused.code != 0 and "Traceback" not in refused.err, refused.err
            assert f"port {port} on 127.0.0.1 is taken" in refused.err, refused.err
            assert "--port 0" in refused.err and f"--port {port + 1}" in refused.err  # the hint: how to go on
    finally:
        for holder in holders:
            holder.close()


def test_open_starts_the_browser_on_the_address_it_printed(served_env, tmp_path: Path):
    """``--open`` hands the printed address to the person's browser (``BROWSER``, as the
    ``webbrowser`` module reads it), once the server listens: the browser's request is answered."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.py"
    browser.write_text(
        "import os, sys, urllib.request\n"
        "url = sys.argv[1]\n"
        "page = urllib.request.urlopen(url, timeout=30).read().decode()\n"
        f"open({str(opened)!r} + '.part', 'w').write(url + '\\n' + str('id=\"home\"' in page))\n"
        f"os.replace({str(opened)!r} + '.part', {str(opened)!r})\n"
    )
    served = serve({**served_env, "BROWSER": f"{shlex.quote(sys.executable)} {shlex.quote(str(browser))} %s"}, "--open")
    try:
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        url, home = opened.read_text().splitlines()
        assert url == served.lines[0].rstrip("\n").rsplit(" at ", 1)[1] and home == "True"
    finally:
        served.stop()
