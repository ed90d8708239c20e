"""MCP over HTTP from ``eidetic serve``, driven with the SDK's own streamable HTTP client against
real server processes, on the files and the postgres backends: the same tools and resources as
``eidetic mcp`` on stdio, the same scope rule, the token, and one warm server for many agents.

Two servers per backend: ``bob`` (bob/private on loopback, ``--token``, the token given in
``EIDETIC_SERVE_TOKEN``) and ``public`` (default/public on 0.0.0.0, so a token is required and
the server makes one). Alice's private records are in the store; neither ever returns them."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from conftest import fresh_database
from mcp_http import call, connect, refused, run
from serve_process import Served, seed, serve, store_env

pytestmark = pytest.mark.slow  # two eidetic serve processes per backend

ALICE_PRIVATE = {"name": "alice", "visibility": "private"}
SECRET = "zanzibar"  # a word only alice's private record holds
UNSAID = "key rotates"  # words of that record no call here names: they can come only from the record
RECORDS = [
    {
        "id": "alice-pub",
        "text": "Deploys run on Tuesdays",
        "scope": {"name": "alice", "visibility": "public"},
        "links": ["alice-secret"],  # a public record pointing at a private one: traversal must not follow
    },
    {"id": "alice-secret", "text": f"The {SECRET} deploy {UNSAID} on Tuesdays", "scope": ALICE_PRIVATE},
    {"id": "bob-note", "text": "Bob deploys on Tuesdays too", "scope": {"name": "bob", "visibility": "private"}},
    {
        "id": "team-note",
        "text": "Tuesdays deploys need two reviewers",
        "scope": {"name": "default", "visibility": "public"},
    },
]
BOB_TOKEN = "bob-token-0123456789-abcdefghij"
HANDSHAKE = 3  # the start-up lines: where it serves (with a made token), the MCP URL, how to stop it


@dataclass
class Servers:
    backend: str
    env: dict[str, str]
    bob: Served
    public: Served


@pytest.fixture(scope="module", params=["files", "postgres"])
def servers(request, tmp_path_factory) -> Any:
    backend = request.param
    env = store_env(tmp_path_factory.mktemp(f"serve-mcp-{backend}"), EIDETIC_SERVE_TOKEN=BOB_TOKEN)
    if backend == "postgres":
        dsn = fresh_database(request.getfixturevalue("postgres_dsn"), "serve_mcp")
        env.update(EIDETIC_BACKEND="postgres", EIDETIC_PG_DSN=dsn)
    seed(env, RECORDS)
    bob = serve(env, "--token", "--scope", "bob", "--visibility", "private")
    public = serve({k: v for k, v in env.items() if k != "EIDETIC_SERVE_TOKEN"}, "--host", "0.0.0.0")
    yield Servers(backend, env, bob, public)
    bob.stop()
    public.stop()


async def read(session: ClientSession, uri: str) -> Any:
    return json.loads((await session.read_resource(uri)).contents[0].text)


def ids(bundle: dict[str, Any]) -> set[str]:
    return {item["id"] for item in bundle["items"]}


def catalogue(tools: Any, resources: Any, templates: Any) -> dict[str, Any]:
    return {
        "tools": sorted((t.model_dump() for t in tools.tools), key=lambda t: t["name"]),
        "resources": [r.model_dump() for r in resources.resources],
        "templates": [t.model_dump() for t in templates.resource_templates],
    }


async def listed(session: ClientSession) -> dict[str, Any]:
    return catalogue(
        await session.list_tools(), await session.list_resources(), await session.list_resource_templates()
    )


def test_the_same_tools_and_resources_as_eidetic_mcp(servers):
    found: dict[str, Any] = {}

    async def work() -> None:
        async with connect(servers.bob) as session:
            found["http"] = await listed(session)
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "eidetic", "mcp", "--scope", "bob", "--visibility", "private"],
            env=servers.env,
        )
        async with stdio_client(stdio) as streams, ClientSession(*streams) as session:
            init = await session.initialize()
            assert "bob/private" in (init.instructions or "")
            found["stdio"] = await listed(session)

    run(work)
    assert found["http"] == found["stdio"]
    assert {t["name"] for t in found["http"]["tools"]} == {"remember", "recall", "sweep", "overview"}
    assert [r["uri"] for r in found["http"]["resources"]] == ["eidetic://records"]
    assert [t["uri_template"] for t in found["http"]["templates"]] == ["eidetic://record/{id}"]


def test_a_private_server_never_returns_another_scopes_private_records(servers):
    said: list[str] = []  # everything the server answered, to search for alice's record

    async def work() -> None:
        async with connect(servers.bob) as session:
            for mode in ("keyword", "exact", "hybrid", "fields"):
                query = "text=zanzibar" if mode == "fields" else SECRET
                hits = await call(session, "recall", query=query, mode=mode)
                said.append(json.dumps(hits))
                assert hits["items"] == [], mode
            seen = await call(session, "recall", query="tuesdays deploys", mode="keyword", depth=2)
            said.append(json.dumps(seen))
            assert ids(seen) == {"alice-pub", "bob-note", "team-note"}  # public ones and bob's own
            as_alice = await call(
                session, "recall", query="tuesdays", mode="keyword", scope="alice", visibility="public"
            )
            assert ids(as_alice) == {"alice-pub", "team-note"}
            for tool, arguments in [
                ("recall", {"query": "tuesdays", "scope": "alice", "visibility": "private"}),
                ("overview", {"scope": "alice", "visibility": "private"}),
                ("remember", {"records": {"id": "alice-secret", "text": "overwritten", "scope": ALICE_PRIVATE}}),
                ("remember", {"records": {"text": "planted"}, "scope": "alice", "visibility": "private"}),
            ]:
                text = await refused(session, tool, **arguments)
                said.append(text)
                assert "bob/private only" in text or "may not write to scope alice/private" in text, text
            overview = await call(session, "overview")
            said.append(json.dumps(overview))
            scopes = {(s["name"], s["visibility"]) for s in overview["stores"][0]["scopes"]}
            assert ("alice", "private") not in scopes and ("bob", "private") in scopes
            said.append(json.dumps(await call(session, "sweep", dry_run=True)))
            listing = await read(session, "eidetic://records")
            said.append(json.dumps(listing))
            assert {r["id"] for r in listing["items"]} == {"alice-pub", "bob-note", "team-note"}
            assert (await read(session, "eidetic://record/bob-note"))["text"] == "Bob deploys on Tuesdays too"
            for rid in ("alice-secret", "no-such-record"):  # out of reach and missing: the same answer
                with pytest.raises(MCPError) as refusal:
                    await read(session, f"eidetic://record/{rid}")
                said.append(str(refusal.value).replace(rid, "ID"))
            assert said[-1] == said[-2]

    run(work)
    for text in said:
        text = text.replace('"links": ["alice-secret"]', "")  # alice-pub's own field, as its author wrote it
        assert UNSAID not in text and "alice-secret" not in text, text


def test_a_public_server_refuses_private_reads(servers):
    async def work() -> None:
        async with connect(servers.public) as session:
            hits = await call(session, "recall", query="tuesdays", mode="keyword")
            assert ids(hits) == {"alice-pub", "team-note"}
            for scope in ("bob", "alice", "default"):
                text = await refused(session, "recall", query="tuesdays", scope=scope, visibility="private")
                assert "default/public only" in text and SECRET not in text
            with pytest.raises(MCPError, match="no record 'bob-note' in reach"):
                await read(session, "eidetic://record/bob-note")
            assert {r["id"] for r in (await read(session, "eidetic://records"))["items"]} == {"alice-pub", "team-note"}
            scopes = (await call(session, "overview"))["stores"][0]["scopes"]
            assert {s["visibility"] for s in scopes} == {"public"}
            assert "may not write" in await refused(
                session, "remember", records={"text": "planted", "scope": {"name": "bob", "visibility": "private"}}
            )

    run(work)


def test_without_the_token_nothing_is_served(servers):
    assert servers.public.token and servers.bob.token == BOB_TOKEN
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with httpx.Client(timeout=30) as http:
        for served in (servers.bob, servers.public):
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {served.token}"}):
                answer = http.post(served.base + "/mcp", json=message, headers=headers)
                assert answer.status_code == 401, answer.text
                assert answer.headers["www-authenticate"] == "Bearer"
                assert answer.json()["hint"].startswith("open the URL `eidetic serve` printed")
                assert http.get(served.base + "/", headers=headers).status_code == 401
            # a browser: the printed URL sets a cookie and drops the token from the address
            welcome = http.get(f"{served.base}/?token={served.token}&q=tuesdays")
            assert welcome.status_code == 303 and welcome.headers["location"] == "/?q=tuesdays"
            with httpx.Client(cookies=served.cookies) as browser:
                assert browser.get(served.base + "/").status_code == 200
                # the cookie opens the pages, not MCP: no web page drives an agent's tools through a browser
                assert browser.post(served.base + "/mcp", json=message).status_code == 401

    def failing_client(served: Served, token: str) -> None:
        async def work() -> None:
            async with connect(served, token=token):
                raise AssertionError("connected without the token")

        with pytest.raises(BaseExceptionGroup) as failed:
            run(work)
        assert failed.group_contains(MCPError), failed.value  # the server's refusal
        assert not failed.group_contains(AssertionError)  # not a session that connected

    failing_client(servers.public, token="")
    failing_client(servers.bob, token="not-" + BOB_TOKEN)


def test_behind_a_reverse_proxy_the_token_guards_any_host_name(servers):
    """A team host runs ``eidetic serve --token`` on loopback behind a TLS proxy that passes the
    public name on: with a token the Host check against DNS rebinding is not needed (a page on a
    rebound name has no token), so pages and MCP answer under that name."""
    proxied = {"Host": "memory.example.org", "X-Forwarded-Proto": "https"}
    with httpx.Client(timeout=30, headers=proxied) as http:
        assert http.get(servers.bob.base + "/").status_code == 401
        page = http.get(servers.bob.base + "/?q=tuesdays", headers={"Authorization": f"Bearer {BOB_TOKEN}"})
        assert page.status_code == 200 and "bob-note" in page.text

    async def work() -> None:
        headers = {**proxied, "Authorization": f"Bearer {BOB_TOKEN}"}
        async with (
            create_mcp_http_client(headers=headers) as client,
            streamable_http_client(servers.bob.base + "/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert ids(await call(session, "recall", query="bob", mode="keyword")) == {"bob-note"}

    run(work)


def test_two_agents_share_one_warm_server(servers):
    answers: dict[str, list[set[str]]] = {"a": [], "b": []}

    async def agent(name: str, connected: dict[str, anyio.Event], written: anyio.Event) -> None:
        async with connect(servers.bob) as session:
            connected[name].set()
            if name == "a":
                await connected["b"].wait()  # both sessions open at once
                stored = await call(
                    session, "remember", records={"id": "quokka-1", "text": "The quokka build is green"}
                )
                assert stored["items"][0]["status"] == "new"
                written.set()
            await written.wait()
            for _ in range(5):
                answers[name].append(ids(await call(session, "recall", query="quokka", mode="keyword")))

    async def work() -> None:
        connected, written = {"a": anyio.Event(), "b": anyio.Event()}, anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(agent, "a", connected, written)
            group.start_soon(agent, "b", connected, written)

    run(work)
    assert answers["a"] == answers["b"] == [{"quokka-1"}] * 5  # one store: b sees what a wrote at once


def test_the_token_never_reaches_the_log(servers):
    """Requests of every kind, the token in URLs and headers, right and wrong; then the server
    is stopped and its whole stderr read: the token is only where it was printed at start-up."""
    with httpx.Client(timeout=30) as http:
        for served in (servers.bob, servers.public):
            token = served.token
            for path in ("/", "/mcp", "/record", "/no/such/page", "/static/style.css"):
                http.get(f"{served.base}{path}?token={token}")
                http.get(f"{served.base}{path}?token=not-{token}")
                http.get(f"{served.base}{path}?id=x&token={token}", headers={"Authorization": f"Bearer {token}"})
            http.post(
                f"{served.base}/mcp?token={token}", content=b"{not json", headers={"Authorization": f"Bearer {token}"}
            )
            http.post(f"{served.base}/mcp?token={token}", json={"jsonrpc": "2.0"})

    async def work() -> None:
        for served in (servers.bob, servers.public):
            async with connect(served, path=f"/mcp?token={served.token}") as session:
                await refused(session, "recall", query="x", top_k=0)
                await call(session, "recall", query="tuesdays", mode="keyword")

    run(work)
    for served in (servers.bob, servers.public):
        lines = served.stop().splitlines(keepends=True)
        assert served.token not in "".join(lines[HANDSHAKE:]), lines
        assert "Traceback" not in "".join(lines), lines
    assert BOB_TOKEN not in servers.bob.stderr  # given, so never printed at all
    assert servers.public.stderr.count(servers.public.token) == 1  # made: printed once, in the URL to open
