"""Running ``eidetic serve`` for a team, against real server processes over real HTTP: the health
check a proxy or service manager asks, the graceful stop on SIGTERM, and the limits that keep one
caller from taking the server over (413 for a large body, 429 beyond a caller's calls in flight,
a remember batch over the maximum refused with nothing written)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from eidetic import __version__
from serve_process import Served, seed, serve, store_env

pytestmark = pytest.mark.slow  # real server processes

PUBLIC = {"name": "default", "visibility": "public"}
SEEDED = 1000  # enough records that a search takes a noticeable moment


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    env = store_env(tmp_path_factory.mktemp("serve-ops"))
    seed(
        env,
        [
            {"text": f"Note {i}: deploys of service {i * 7} use the staging database on Tuesdays", "scope": PUBLIC}
            for i in range(SEEDED)
        ],
    )
    return env


@pytest.fixture
def served(env) -> Any:
    started: list[Served] = []

    def start(*args: str, **extra: str) -> Served:
        started.append(serve({**env, **extra}, *args))
        return started[-1]

    yield start
    for one in started:
        one.stop()


@asynccontextmanager
async def connect(served: Served, token: str | None = None, on_response: Any = None) -> AsyncIterator[ClientSession]:
    """An MCP session with the server; ``on_response(response)`` (async) sees each HTTP response's
    headers as they arrive, before its body (a tool call's answer streams after them)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    if on_response is not None:
        http.event_hooks["response"].append(on_response)
    async with (
        http,
        streamable_http_client(served.base + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()  # the tools' output schemas, known before any call
        yield session


def run(work: Any, limit: float = 60) -> None:
    async def main() -> None:
        with anyio.fail_after(limit):
            await work()

    anyio.run(main)


def records_named(env: dict[str, str], word: str) -> int:
    """How many records hold ``word``, as a person asks the store (not through any server)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eidetic",
            "recall",
            word,
            "--mode",
            "exact",
            "--top-k",
            "2000",
            "--json",
            "--no-record",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return len(json.loads(proc.stdout)["items"])


# -- /healthz --------------------------------------------------------------------------------


def test_healthz_needs_no_token_sets_no_cookie_and_tells_nothing_else(served):
    server = served("--host", "0.0.0.0")  # beyond loopback: a token is required for everything else
    assert server.token
    answer = httpx.get(server.base + "/healthz", timeout=30)
    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "version": __version__}  # no count, no path, no DSN
    assert "set-cookie" not in answer.headers
    # the start-up URL's token on it opens nothing and sets no cookie either
    with_token = httpx.get(server.base + f"/healthz?token={server.token}", timeout=30)
    assert with_token.status_code == 200 and "set-cookie" not in with_token.headers
    assert server.token not in with_token.text
    # every other path still needs the token
    assert httpx.get(server.base + "/", timeout=30).status_code == 401
    assert httpx.get(server.base + "/healthz/../", timeout=30).status_code == 401


def test_healthz_answers_under_any_host_name_on_loopback(served):
    server = served()  # loopback, no token: the pages answer only to the server's own name
    assert httpx.get(server.base + "/", headers={"Host": "rebound.example"}, timeout=30).status_code == 421
    answer = httpx.get(server.base + "/healthz", headers={"Host": "rebound.example"}, timeout=30)
    assert answer.status_code == 200 and answer.json()["ok"] is True


# -- SIGTERM ---------------------------------------------------------------------------------


def test_sigterm_lets_the_call_in_flight_answer_then_stops(served, env):
    server = served("--max-body", str(4 * 1024 * 1024))  # the MCP SDK's own limit: 4 MiB a message
    words = "deploy staging database runbook rota review release rollback incident pager schedule".split()
    batch = [  # long texts: the batch runs for seconds, well past the signal on a fast machine too
        {"text": f"Graceful {i}: " + " ".join(f"{words[(i + j) % len(words)]}{j}" for j in range(300)), "scope": PUBLIC}
        for i in range(1000)
    ]
    seen: dict[str, Any] = {}
    in_flight = anyio.Event()

    async def started(response: Any) -> None:
        # the answer streams after these headers: the server has the call and is running it
        if response.request.method == "POST" and b'"tools/call"' in response.request.content:
            in_flight.set()

    async def work() -> None:
        async with connect(server, on_response=started) as session:

            async def stop_while_it_runs() -> None:
                await in_flight.wait()
                await anyio.sleep(0.1)
                server.proc.send_signal(signal.SIGTERM)
                seen["signalled"] = time.monotonic()
                while "answered" not in seen:  # no longer listening, while still finishing the call
                    await anyio.sleep(0.02)
                    try:
                        httpx.get(server.base + "/healthz", timeout=5)
                    except httpx.TransportError:  # refused, or reset as the listener closed
                        seen["refused"] = time.monotonic()
                        seen["alive"] = server.proc.poll() is None
                        return

            async with anyio.create_task_group() as group:
                group.start_soon(stop_while_it_runs)
                seen["called"] = time.monotonic()
                result = await session.call_tool("remember", {"records": batch})
                seen["answered"] = time.monotonic()
                seen["result"] = result

    run(work)
    result = seen["result"]
    assert not result.is_error, result.content
    assert result.structured_content["upserted"] == 1000  # the whole answer
    assert seen["answered"] > seen["signalled"], "the batch ended before the signal: make it slower"
    assert "refused" in seen, f"still listening when the call was answered: {seen}"
    assert seen["refused"] < seen["answered"] and seen["alive"], seen
    assert server.proc.wait(timeout=45) == 0  # within the grace, and a clean exit
    assert "Traceback" not in server.stderr and "ERROR" not in server.stderr
    assert records_named(env, "Graceful") == 1000


# -- 413: request bodies ---------------------------------------------------------------------


def _raw(server: Served, request: bytes) -> bytes:
    """``request`` sent as is on a socket of its own; what came back before the server closed
    it or went quiet."""
    port = int(server.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and answer.split(b"\r\n\r\n", 1)[1]:
                    break
        except TimeoutError:
            pass
    return answer


def test_a_body_over_the_limit_gets_413_before_it_is_all_sent(served, env):
    server = served("--max-body", "65536")
    host = server.base.removeprefix("http://")
    # chunked, no Content-Length: 80 KiB sent, the last chunk never; the answer comes anyway
    chunk = b"x" * 16384
    head = f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n".encode()
    chunked = head + b"Transfer-Encoding: chunked\r\n\r\n" + (b"4000\r\n" + chunk + b"\r\n") * 5
    answer = _raw(server, chunked)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert "65,536 bytes" in body["error"] and "--max-body" in body["hint"]
    # a declared size over the limit: refused at once, nothing of the body sent
    declared = f"POST /record/forget HTTP/1.1\r\nHost: {host}\r\nContent-Length: 10000000\r\n\r\n".encode()
    answer = _raw(server, declared)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"65,536 bytes" in answer
    # an agent's remember too big for the limit writes nothing
    big = [{"text": f"Oversized {i}: " + "y" * 200, "scope": PUBLIC} for i in range(400)]
    small = [{"text": "Undersized: a batch well within the limit", "scope": PUBLIC}]
    seen: dict[str, Any] = {}

    async def work() -> None:
        async with connect(server) as session:
            try:
                seen["big"] = await session.call_tool("remember", {"records": big})
            except Exception as exc:  # the client reports the 413 as a failed request
                seen["big"] = exc
            seen["small"] = await session.call_tool("remember", {"records": small})

    run(work)
    assert isinstance(seen["big"], Exception) or seen["big"].is_error
    assert not seen["small"].is_error  # the server goes on serving
    assert records_named(env, "Oversized") == 0
    assert records_named(env, "Undersized") == 1


def test_a_remember_batch_over_the_maximum_writes_nothing(served, env):
    server = served()
    batch = [{"text": f"Overbatch {i}", "scope": PUBLIC} for i in range(1001)]
    seen: dict[str, Any] = {}

    async def work() -> None:
        async with connect(server) as session:
            seen["result"] = await session.call_tool("remember", {"records": batch})

    run(work)
    assert seen["result"].is_error
    text = seen["result"].content[0].text
    assert "at most 1,000 records, not 1,001: nothing was written" in text and "eidetic import" in text
    assert records_named(env, "Overbatch") == 0


def test_bad_limits_are_refused_before_anything_listens(env):
    for flag, value, said in (("--per-token", "0", "--per-token must be at least 1"), ("--max-body", "10", "1024")):
        proc = subprocess.run(
            [sys.executable, "-m", "eidetic", "serve", "--port", "0", flag, value],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 1, proc.stderr
        assert said in proc.stderr and "e.g." in proc.stderr


# -- 429: calls in flight per caller ---------------------------------------------------------

FLOOD = 50
SEARCH = "/?q=deploys+staging+Tuesdays"


def test_one_caller_flooding_the_server_does_not_hold_up_another(served):
    server = served()  # loopback without a token: a caller is its address
    order: list[str] = []
    statuses: list[int] = []
    retry_after: set[str] = set()
    started = anyio.Event()

    async def flood_one(client: httpx.AsyncClient) -> None:
        answer = await client.get(server.base + SEARCH, headers={"Host": server.base.removeprefix("http://")})
        statuses.append(answer.status_code)
        if answer.status_code == 429:
            retry_after.add(answer.headers.get("retry-after", ""))
        else:
            order.append("flood")
        if len(statuses) == 1:
            started.set()

    async def other(client: httpx.AsyncClient) -> None:
        await started.wait()  # the flood is in: its calls hold the caller's slots or wait for one
        order.append("other sent")
        answer = await client.get(server.base + SEARCH)
        assert answer.status_code == 200 and "deploys" in answer.text
        order.append("other answered")

    async def work() -> None:
        limits = httpx.Limits(max_connections=FLOOD + 5)
        flooding = httpx.AsyncHTTPTransport(local_address="127.0.0.2", limits=limits)  # another address
        async with (
            httpx.AsyncClient(transport=flooding, timeout=60) as flooder,
            httpx.AsyncClient(timeout=60) as person,
            anyio.create_task_group() as group,
        ):
            for _ in range(FLOOD):
                group.start_soon(flood_one, flooder)
            group.start_soon(other, person)

    run(work)
    assert statuses.count(429) > 0 and retry_after == {"1"}
    assert set(statuses) <= {200, 429}
    # between being sent and answered, the other caller saw at most the flooder's two slots (half
    # the four workers) answer twice over, those in flight when it came and those running beside
    # it on the other threads, not the flooder's whole queue of 50
    waited = order[order.index("other sent") : order.index("other answered")].count("flood")
    assert waited <= 4, order


def test_a_caller_is_its_token_whichever_address_and_form_it_comes_in(served):
    token = "ops-token-0123456789-abcdefghij"
    server = served("--token", "--per-token", "1", EIDETIC_SERVE_TOKEN=token)
    host, port = server.base.removeprefix("http://").split(":")
    # An agent from another address, with the token as a header, holds the token's one slot: its
    # call is in flight until its body has all arrived, and half of it is sent.
    with socket.create_connection((host, int(port)), timeout=30, source_address=("127.0.0.2", 0)) as agent:
        agent.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            'Content-Length: 100\r\n\r\n{"jsonrpc": '.encode()
        )
        # the same token as a browser's cookie, from this address: the same caller, so it waits,
        # then 429 (asked again while the server may not have the agent's request yet)
        for _ in range(10):
            same = httpx.get(server.base + "/", cookies=server.cookies, timeout=30)
            if same.status_code == 429:
                break
            time.sleep(0.2)
        assert same.status_code == 429 and same.headers["retry-after"] == "1"
        assert "already has 1 calls in flight" in same.text
        # a made-up token next to the good cookie makes no new caller
        mixed = httpx.get(server.base + "/", cookies=server.cookies, headers={"Authorization": "Bearer made-up"})
        assert mixed.status_code == 429
        # a wrong token is refused as ever, never counted as anyone's
        wrong = httpx.get(server.base + "/", headers={"Authorization": "Bearer not-the-token"}, timeout=30)
        assert wrong.status_code == 401
    # the agent gone, its slot is free again
    assert httpx.get(server.base + "/", cookies=server.cookies, timeout=30).status_code == 200
