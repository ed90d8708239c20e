"""A team's ``eidetic serve`` with members' tokens, driven as its members and an outsider drive
it: a real server process (files and postgres), the official MCP client over streamable HTTP,
and plain HTTP for the pages.

Members: alice (alice/private), bob (bob/private) and carol (team/public, read-only), made with
``eidetic tokens add``; the server also has its own token (``EIDETIC_SERVE_TOKEN``, ``--token``),
which stays the server's identity (team/public). Each member sees their own private records
and the public ones, never another's private records, not even as a count or in an error."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from conftest import fresh_database, run_process
from mcp_http import call, connect, refused, run
from serve_process import Served, seed, serve, store_env

pytestmark = pytest.mark.slow  # a server process per backend

ALICE_WORD, BOB_WORD = "zanzibar", "quokka"  # words only alice's and bob's private records hold
RECORDS = [
    {
        "id": "alice-secret",
        "text": f"The {ALICE_WORD} deploy key rotates on Tuesdays",
        "scope": {"name": "alice", "visibility": "private"},
    },
    {
        "id": "bob-secret",
        "text": f"The {BOB_WORD} runbook for Tuesdays deploys",
        "scope": {"name": "bob", "visibility": "private"},
    },
    {
        "id": "team-note",
        "text": "Tuesdays deploys need two reviewers",
        "scope": {"name": "team", "visibility": "public"},
    },
]
SERVER_TOKEN = "server-token-0123456789-abcdefghij"
MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@dataclass
class Team:
    backend: str
    env: dict[str, str]
    served: Served
    tokens: dict[str, str]

    def cookies(self, name: str) -> dict[str, str]:
        from eidetic.web.guard import cookie_name

        return {cookie_name(int(self.served.base.rsplit(":", 1)[1])): self.tokens[name]}


def eidetic(env: dict[str, str], *args: str) -> Any:
    done = run_process(*args, env=env)
    assert done.code == 0, done.err
    return done


@pytest.fixture(scope="module", params=["files", "postgres"])
def team(request, tmp_path_factory) -> Any:
    env = store_env(tmp_path_factory.mktemp(f"team-{request.param}"), EIDETIC_SERVE_TOKEN=SERVER_TOKEN)
    if request.param == "postgres":
        dsn = fresh_database(request.getfixturevalue("postgres_dsn"), "team_serve")
        env.update(EIDETIC_BACKEND="postgres", EIDETIC_PG_DSN=dsn)
    seed(env, RECORDS)
    tokens = {
        "alice": eidetic(env, "tokens", "add", "alice", "--scope", "alice", "--visibility", "private").out.strip(),
        "bob": eidetic(env, "tokens", "add", "bob", "--scope", "bob", "--visibility", "private").out.strip(),
        "carol": eidetic(env, "tokens", "add", "carol", "--scope", "team", "--read-only").out.strip(),
    }
    served = serve(env, "--token", "--scope", "team")
    yield Team(request.param, env, served, tokens)
    served.stop()


def ids(found: dict[str, Any]) -> set[str]:
    return {item["id"] for item in found["items"]}


def test_each_member_sees_their_own_private_records_and_the_public_ones_only(team):
    said: dict[str, list[str]] = {"alice": [], "bob": []}
    own = {"alice": ("alice-secret", ALICE_WORD), "bob": ("bob-secret", BOB_WORD)}

    async def work() -> None:
        for name, other in (("alice", "bob"), ("bob", "alice")):
            async with connect(team.served, team.tokens[name]) as session:
                init = await session.initialize()
                assert f"{name}/private" in (init.instructions or "")  # the member's own server
                for mode in ("keyword", "exact"):
                    hits = await call(session, "recall", query="tuesdays", mode=mode)
                    said[name].append(json.dumps(hits))
                    if mode == "keyword":
                        assert ids(hits) == {own[name][0], "team-note"}
                    other_word = await call(session, "recall", query=own[other][1], mode=mode)
                    said[name].append(json.dumps(other_word))
                    assert other_word["items"] == []
                overview = await call(session, "overview")
                said[name].append(json.dumps(overview))
                scopes = {(s["name"], s["visibility"]) for s in overview["stores"][0]["scopes"]}
                assert (name, "private") in scopes and (other, "private") not in scopes
                text = await refused(session, "recall", query="tuesdays", scope=other, visibility="private")
                said[name].append(text)
                assert f"{name}/private only" in text
                listing = json.loads((await session.read_resource("eidetic://records")).contents[0].text)
                said[name].append(json.dumps(listing))
                assert {r["id"] for r in listing["items"]} == {own[name][0], "team-note"}

    run(work)
    for name, other in (("alice", "bob"), ("bob", "alice")):
        for text in said[name]:
            assert own[other][0] not in text and own[other][1] not in text, text


def test_the_server_sets_added_by_from_the_token_and_keeps_the_claim_apart(team):
    async def work() -> None:
        async with connect(team.served, team.tokens["alice"]) as session:
            made = await call(
                session,
                "remember",
                records=[
                    {"id": "by-alice-1", "text": "Alice says the cache is warm", "added_by": "mallory"},
                    {"id": "by-alice-2", "text": "Alice says the queue is empty", "metadata": {"team": "ops"}},
                    {"id": "by-alice-3", "text": "Alice says the disk is fine", "added_by": "alice"},
                ],
                added_by="eve",
            )
            assert {item["status"] for item in made["items"]} == {"new"}
            found = {}
            for rid in ("by-alice-1", "by-alice-2", "by-alice-3"):
                found[rid] = json.loads((await session.read_resource(f"eidetic://record/{rid}")).contents[0].text)
            assert {record["added_by"] for record in found.values()} == {"alice"}
            assert found["by-alice-1"]["metadata"] == {"claimed_by": "mallory"}  # the record's own claim first
            assert found["by-alice-2"]["metadata"] == {"team": "ops", "claimed_by": "eve"}  # else the call's
            assert "claimed_by" not in found["by-alice-3"]["metadata"]  # the truth is no claim
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            about = tools["remember"].input_schema["properties"]["added_by"]["description"]
            assert "the server sets it to alice" in about  # the agent is told, not left to guess

    run(work)


def test_a_read_only_member_reads_but_every_write_is_refused(team):
    async def work() -> None:
        async with connect(team.served, team.tokens["carol"]) as session:
            assert ids(await call(session, "recall", query="tuesdays", mode="keyword")) == {"team-note"}
            for tool, arguments in (("remember", {"records": {"text": "carol was here"}}), ("sweep", {})):
                assert "carol may only read on this server" in await refused(session, tool, **arguments)
            assert (await call(session, "sweep", dry_run=True))["dry_run"] is True

    run(work)
    with httpx.Client(base_url=team.served.base, cookies=team.cookies("carol"), timeout=30) as carol:
        page = carol.get("/record", params={"id": "team-note"})
        assert page.status_code == 200 and 'id="read-only"' in page.text
        assert 'id="edit"' not in page.text and 'action="/record/forget"' not in page.text
        same_site = {"Sec-Fetch-Site": "same-origin"}
        for path, form in (
            ("/record/forget", {"id": "team-note", "confirm": "yes"}),
            ("/record/edit", {"id": "team-note", "text": "changed", "original": ""}),
            ("/record/supersede", {"id": "team-note", "text": "changed"}),
        ):
            answer = carol.post(path, data=form, headers=same_site)
            assert answer.status_code == 403, (path, answer.status_code)
            assert "carol may only read" in answer.text
        assert carol.get("/record/edit", params={"id": "team-note"}).status_code == 403
    with httpx.Client(base_url=team.served.base, cookies=team.cookies("alice"), timeout=30) as alice:
        assert 'id="edit"' in alice.get("/record", params={"id": "team-note"}).text


def test_the_pages_say_who_is_signed_in_and_what_they_see(team):
    with httpx.Client(base_url=team.served.base, timeout=30) as http:
        welcome = http.get("/", params={"token": team.tokens["bob"], "q": "tuesdays"})
        assert welcome.status_code == 303 and welcome.headers["location"] == "/?q=tuesdays"
        assert team.tokens["bob"] in welcome.headers["set-cookie"]  # bob's cookie carries bob's token
    with httpx.Client(base_url=team.served.base, timeout=30) as http:
        server = http.get("/", headers={"Authorization": f"Bearer {SERVER_TOKEN}"})  # the server's own token
        assert server.status_code == 200 and 'id="signed-in"' not in server.text
        assert '<span class="session">team/public</span>' in server.text
    for name, other in (("alice", "bob"), ("bob", "alice")):
        with httpx.Client(base_url=team.served.base, cookies=team.cookies(name), timeout=30) as browser:
            page = browser.get("/", params={"q": "tuesdays", "mode": "keyword"})
            assert page.status_code == 200
            assert f'<span id="signed-in">{name}</span>' in page.text, page.text[:2000]
            assert f"{name}/private + public records" in page.text
            overview = browser.get("/overview")
            for text in (page.text, overview.text, browser.get("/browse").text):
                assert f"{other}-secret" not in text and {"alice": ALICE_WORD, "bob": BOB_WORD}[other] not in text
            assert f"{name}-secret" in browser.get("/browse").text


def test_wrong_tokens_get_401_and_are_logged_without_the_token(team):
    guess = "eid_" + "x" * 43
    with httpx.Client(base_url=team.served.base, timeout=30) as http:
        for headers in ({}, {"Authorization": f"Bearer {guess}"}, {"Authorization": f"Basic {team.tokens['alice']}"}):
            answer = http.post("/mcp", json=MESSAGE, headers=headers)
            assert answer.status_code == 401 and answer.headers["www-authenticate"] == "Bearer"
            assert http.get("/", headers=headers).status_code == 401
        assert http.get("/", params={"token": guess}).status_code == 401
    with httpx.Client(base_url=team.served.base, cookies=team.cookies("alice"), timeout=30) as browser:
        assert browser.post("/mcp", json=MESSAGE).status_code == 401  # the cookie opens the pages, never MCP
    with httpx.Client(base_url=team.served.base, timeout=30) as http:
        for _ in range(20):
            http.get("/overview", headers={"Authorization": f"Bearer {guess}"})
    deadline = time.monotonic() + 20  # the server's stderr is read by a thread of the test's
    while not any("wrong token" in line for line in team.served.lines) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # any further lines of the burst
    told = [line for line in team.served.lines if "wrong token" in line]
    assert "3 members (eidetic tokens list) sign in with their own tokens" in team.served.stderr
    assert told and "127.0.0.1" in told[0] and re.search(r"\d+ request", told[0]), told
    assert len(told) <= 2, told  # rate-limited: a burst is one line, not twenty
    assert guess not in team.served.stderr and not any(t in team.served.stderr for t in team.tokens.values())


def test_mcp_keeps_no_session_so_each_call_runs_as_its_own_token(team):
    """MCP over HTTP is stateless (several servers may share the calls): the server hands out no
    session id, and a call carrying one made up, or one from another member, runs as its token."""
    start = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    recall = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": f"{ALICE_WORD} deploy key", "mode": "keyword"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=team.served.base, timeout=30) as http:
        made = http.post("/mcp", json=start, headers={**accept, "Authorization": f"Bearer {team.tokens['alice']}"})
        assert made.status_code == 200, made.text
        assert "mcp-session-id" not in made.headers
        as_alice = http.post("/mcp", json=recall, headers={**accept, "Authorization": f"Bearer {team.tokens['alice']}"})
        assert "alice-secret" in as_alice.text  # the same call finds it for its owner
        as_bob = http.post(
            "/mcp",
            json=recall,
            headers={**accept, "Authorization": f"Bearer {team.tokens['bob']}", "mcp-session-id": "alice-session"},
        )
        assert as_bob.status_code == 200, as_bob.text
        assert "alice-secret" not in as_bob.text


def test_a_token_added_or_revoked_counts_on_the_next_request_without_a_restart(team):
    token = eidetic(team.env, "tokens", "add", "erin", "--scope", "team").out.strip()
    seen: list[int] = []

    async def work() -> None:
        async with connect(team.served, token) as session:  # added while the server runs: counts at once
            assert ids(await call(session, "recall", query="tuesdays", mode="keyword")) == {"team-note"}

    run(work)
    with httpx.Client(base_url=team.served.base, cookies={}, timeout=30) as http:
        bearer = {"Authorization": f"Bearer {token}"}
        seen.append(http.get("/", headers=bearer).status_code)
        eidetic(team.env, "tokens", "revoke", "erin")
        seen.append(http.get("/", headers=bearer).status_code)
        seen.append(http.post("/mcp", json=MESSAGE, headers=bearer).status_code)
        seen.append(http.get("/", headers={"Authorization": f"Bearer {team.tokens['alice']}"}).status_code)
    assert seen == [200, 401, 401, 200]
    members = {m["name"]: m for m in eidetic(team.env, "tokens", "list", "--json").json["members"]}
    assert "erin" not in members
    assert members["alice"]["last_seen"] is not None  # alice's use was recorded
    assert token not in json.dumps(members)


def test_a_server_without_members_is_unchanged(tmp_path):
    env = store_env(tmp_path)
    seed(env, RECORDS[2:])
    served = serve(env, "--scope", "team")  # loopback, no token, no members
    try:
        with httpx.Client(base_url=served.base, timeout=30) as http:
            page = http.get("/")
            assert page.status_code == 200 and 'id="signed-in"' not in page.text
            assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
        assert "with their own tokens" not in served.stderr
    finally:
        served.stop()
    assert not (tmp_path / "state" / "serve-tokens.json").exists()
