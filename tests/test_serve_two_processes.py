"""Two ``eidetic serve`` processes on one PostgreSQL database, as behind a load balancer: what is
written through one is what the other answers on the next request (MCP over HTTP with the SDK's
client, and the viewer's pages), and usage counts are not lost when both serve recalls of the
same records at once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession

from conftest import fresh_database
from mcp_http import call, connect, run
from serve_process import Served, seed, serve, store_env

pytestmark = [pytest.mark.slow, pytest.mark.server]

PUBLIC = {"name": "default", "visibility": "public"}
RECORDS = [
    {"id": "counted", "text": "The quokka rota is kept by the platform team", "scope": PUBLIC},
    {"id": "steady", "text": "Releases are cut on Wednesdays", "type": "decision", "scope": PUBLIC},
]
RECALLS = 20  # per server, all at once


@dataclass
class Pair:
    env: dict[str, str]
    one: Served
    other: Served


@pytest.fixture(scope="module")
def pair(request, tmp_path_factory) -> Any:
    env = store_env(tmp_path_factory.mktemp("serve-two"))
    dsn = fresh_database(request.getfixturevalue("postgres_dsn"), "serve_two")
    env.update(EIDETIC_BACKEND="postgres", EIDETIC_PG_DSN=dsn)
    seed(env, RECORDS)
    one, other = serve(env), serve(env)
    yield Pair(env, one, other)
    one.stop()
    other.stop()


def on_both(pair: Pair, check: Callable[[Served], None]) -> None:
    """``check`` against each server in turn: what holds for one must hold for the other (the
    tokens and revocations of a team server, once it has members, are checked through this)."""
    for served in (pair.one, pair.other):
        check(served)


async def found(session: ClientSession, words: str) -> list[str]:
    answer = await call(session, "recall", query=words, mode="exact", record=False)
    return [item["id"] for item in answer["items"]]


def page(served: Served, path: str, **form: str) -> httpx.Response:
    """A viewer page as a browser on that server gets it (a form posted when ``form`` is given)."""
    with httpx.Client(base_url=served.base, cookies=served.cookies if served.token else None, timeout=60) as http:
        return http.post(path, data=form) if form else http.get(path)


def shown(pair: Pair, rid: str) -> dict[str, Any]:
    """A record as ``eidetic show`` reads it from the database, through no server."""
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", "show", rid, "--json"],
        capture_output=True,
        text=True,
        env=pair.env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_write_through_one_is_read_through_the_other_on_the_next_request(pair):
    async def work() -> None:
        async with connect(pair.one) as one, connect(pair.other) as other:
            # asked before the write, so that anything the other server keeps of it would be stale
            assert await found(other, "wombat") == []
            ahead = await call(other, "recall", query="wombat runbook", mode="keyword", record=False)
            assert "fresh" not in [item["id"] for item in ahead["items"]]
            written = await call(
                one, "remember", records={"id": "fresh", "text": "The wombat runbook lives in ops/", "scope": PUBLIC}
            )
            assert written["ids"] == ["fresh"]
            assert await found(other, "wombat") == ["fresh"]
            # the keyword statistics and postings are read anew, not kept from before the write
            keyword = await call(other, "recall", query="wombat runbook", mode="keyword", record=False)
            assert [item["id"] for item in keyword["items"]][:1] == ["fresh"]

    run(work)
    # the viewer of the other server shows it, and a change made in one viewer shows in the other's
    assert 'data-id="fresh"' in page(pair.other, "/?q=wombat&mode=exact").text
    assert "wombat runbook" in page(pair.other, "/record?id=fresh").text
    assert page(pair.other, "/record/forget", id="fresh", confirm="yes").status_code == 303  # done: to its page
    assert 'data-id="fresh"' not in page(pair.one, "/?q=wombat&mode=exact").text

    async def after() -> None:
        async with connect(pair.one) as one:
            assert await found(one, "wombat") == []  # forgotten through the other server

    run(after)


def test_usage_counts_are_not_lost_when_both_servers_count_at_once(pair):
    before = shown(pair, "counted")["recall_count"]

    async def recall_on(served: Served) -> None:
        async with connect(served) as session:
            async with anyio.create_task_group() as group:
                for _ in range(RECALLS):
                    group.start_soon(one_recall, session)

    async def one_recall(session: ClientSession) -> None:
        answer = await call(session, "recall", query="quokka", mode="exact")
        assert [item["id"] for item in answer["items"]] == ["counted"]

    async def work() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(recall_on, pair.one)
            group.start_soon(recall_on, pair.other)

    run(work)
    after = shown(pair, "counted")["recall_count"]
    assert after - before == pytest.approx(2 * RECALLS)
    assert shown(pair, "steady")["recall_count"] == pytest.approx(0)  # nothing else was counted


def test_a_call_can_go_to_either_server_and_its_warnings_reach_the_agent(pair):
    """No MCP session is kept between requests (stateless), so a load balancer may send each of an
    agent's calls to another server; a call's warnings still stream back with its answer."""
    heard: list[str] = []

    async def work() -> None:
        async with connect(pair.other, heard=heard) as session:
            record = {"id": "typo", "text": "Rollbacks need a second pair of eyes", "type": "decisoin"}
            await call(session, "remember", records={**record, "scope": PUBLIC})

    run(work)
    assert any("decisoin" in said and "decision" in said for said in heard), heard
    # a bare call, with no session begun on this server, is answered
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    request["params"] = {"name": "recall", "arguments": {"query": "Rollbacks", "mode": "exact", "record": False}}
    answer = httpx.post(
        pair.one.base + "/mcp",
        json=request,
        headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    data = [line.removeprefix("data:").strip() for line in answer.text.splitlines() if line.startswith("data:")]
    result = json.loads(data[-1])["result"]
    assert [item["id"] for item in result["structuredContent"]["items"]] == ["typo"]


def test_both_servers_report_healthy_on_the_one_database(pair):
    def healthy(served: Served) -> None:
        answer = httpx.get(served.base + "/healthz", timeout=30)
        assert answer.status_code == 200 and answer.json()["ok"] is True

    on_both(pair, healthy)


def test_healthz_says_503_while_the_database_is_out_of_reach_and_names_nothing(request, tmp_path):
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    admin = request.getfixturevalue("postgres_dsn")
    dsn = fresh_database(admin, "serve_health")
    env = store_env(tmp_path, EIDETIC_BACKEND="postgres", EIDETIC_PG_DSN=dsn)
    seed(env, RECORDS[:1])
    served = serve(env)
    try:
        assert httpx.get(served.base + "/healthz", timeout=30).json()["ok"] is True
        with psycopg.connect(admin, autocommit=True) as conn:  # the database goes out of reach
            conn.execute('ALTER DATABASE "serve_health" ALLOW_CONNECTIONS false')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'serve_health'")
        answer = httpx.get(served.base + "/healthz", timeout=30)
        assert answer.status_code == 503
        assert answer.json()["ok"] is False and answer.json()["reason"] == "the store does not answer"
        said = {str(value) for value in conninfo_to_dict(dsn).values() if len(str(value)) > 3}
        for secret in said | {"serve_health", "postgres", "PostgreSQL"}:  # no host, socket, user or database
            assert secret not in answer.text
        with psycopg.connect(admin, autocommit=True) as conn:  # back: the next check reconnects
            conn.execute('ALTER DATABASE "serve_health" ALLOW_CONNECTIONS true')
        assert httpx.get(served.base + "/healthz", timeout=30).status_code == 200
    finally:
        served.stop()


def eidetic(env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_members_tokens_and_revocations_hold_on_both_servers(request, tmp_path):
    """Members are kept in the database: a token made while both servers run opens both, what a
    member writes through one is theirs (added_by, the write log) through the other, and a revoke
    closes both from their next request, with no restart."""
    env = store_env(tmp_path)
    env.update(
        EIDETIC_BACKEND="postgres",
        EIDETIC_PG_DSN=fresh_database(request.getfixturevalue("postgres_dsn"), "members_two"),
    )
    seed(env, RECORDS)
    pair = Pair(env, serve(env), serve(env))
    try:
        token = eidetic(env, "tokens", "add", "carol", "--scope", "carol", "--visibility", "private").strip()
        for served in (pair.one, pair.other):
            served.token = token  # carol's, as her agent and her browser send it

        def opens(served: Served) -> None:
            assert page(served, "/").status_code == 200
            assert "carol" in page(served, "/").text  # the header says who is signed in

        on_both(pair, opens)

        async def work() -> None:
            async with connect(pair.one) as agent:
                written = await call(
                    agent, "remember", records={"id": "carol-note", "text": "Carol's quokka key is in the blue safe"}
                )
                assert [item["id"] for item in written["items"]] == ["carol-note"]
            async with connect(pair.other) as agent:
                assert await found(agent, "blue safe") == ["carol-note"]

        run(work)
        as_written = json.loads(
            eidetic(env, "show", "carol-note", "--scope", "carol", "--visibility", "private", "--json")
        )
        assert as_written["added_by"] == "carol" and as_written["scope"] == {
            "name": "carol",
            "visibility": "private",
        }
        logged = json.loads(eidetic(env, "log", "--member", "carol", "--json"))["items"]
        assert [(entry["operation"], entry["ids"]) for entry in logged] == [("remember", ["carol-note"])]

        eidetic(env, "tokens", "revoke", "carol")

        def closed(served: Served) -> None:
            assert page(served, "/").status_code == 401
            with httpx.Client(timeout=30) as http:
                refused = http.post(
                    served.base + "/mcp",
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                    headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
                )
            assert refused.status_code == 401 and "carol" not in refused.text

        on_both(pair, closed)
    finally:
        pair.one.stop()
        pair.other.stop()
