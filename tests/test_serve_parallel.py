"""Many agents at once on one real ``eidetic serve`` (files, sqlite and postgres), over MCP
over HTTP with the SDK's client: a write held up in the store does not hold up other agents'
reads (and with ``--workers 1`` it does, as before), writes made through parallel clients are
each stored exactly once, and the scope rule holds while calls run side by side.

A write is held up for real: the test takes the store's own writer lock (the lock file of the
files and sqlite backends, the advisory lock of postgres), as another process writing would,
and waits until the server's remember is seen trying to take it before asking for a read.
Nothing here depends on how long anything takes."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import fresh_database
from eidetic.stores.files.folder import LOCK_NAME
from serve_process import Served, seed, serve, store_env

pytestmark = pytest.mark.slow  # real server processes

TOKEN = "parallel-token-0123456789-abcdefghij"
SECRET = "zanzibar"  # only alice's private record holds it
RECORDS = [
    {"id": "alice-secret", "text": f"The {SECRET} deploy key rotates on Tuesdays", "scope": {"name": "alice", "visibility": "private"}},
    {"id": "alice-pub", "text": f"Alice deploys the {SECRET} service on Tuesdays", "scope": {"name": "alice", "visibility": "public"}},
    {"id": "bob-note", "text": f"Bob keeps the {SECRET} runbook", "scope": {"name": "bob", "visibility": "private"}},
    {"id": "team-note", "text": "Tuesdays deploys need two reviewers", "scope": {"name": "team", "visibility": "public"}},
]  # fmt: skip
CLIENTS = 8
ROUNDS = 3  # remembers per client, each followed by two reads
IN_OPEN = 0x20  # inotify's event: the file was opened


@dataclass
class Store:
    backend: str
    env: dict[str, str]
    root: Path
    held: Callable[[], Any]  # a context manager holding the store's writer lock, as another writer would
    pool: Served | None = None  # the server with four workers, shared by the tests

    def start(self, *args: str) -> Served:
        return serve(self.env, "--token", "--scope", "bob", "--visibility", "private", *args)


@pytest.fixture(scope="module", params=["files", "sqlite", "postgres"])
def store(request, tmp_path_factory) -> Iterator[Store]:
    backend = request.param
    root = tmp_path_factory.mktemp(f"serve-parallel-{backend}")
    env = store_env(root, EIDETIC_SERVE_TOKEN=TOKEN)
    if backend == "postgres":
        dsn = fresh_database(request.getfixturevalue("postgres_dsn"), "serve_parallel")
        env.update(EIDETIC_BACKEND="postgres", EIDETIC_PG_DSN=dsn)
    if backend == "sqlite":
        env.update(EIDETIC_BACKEND="sqlite", EIDETIC_SQLITE_PATH=str(root / "memory.sqlite"))
    seed(env, RECORDS)
    if backend == "postgres":
        held = _postgres_lock(dsn)
    else:  # the files store's lock file, or the one beside the database
        held = _lock_file(root / "memory.sqlite.lock" if backend == "sqlite" else next(root.rglob(LOCK_NAME)))
    store = Store(backend, env, root, held)
    store.pool = store.start("--workers", "4")
    yield store
    store.pool.stop()


def _lock_file(path: Path) -> Callable[[], Any]:
    """A store's writer lock file (made by the seeding write), held from this process; the
    server is seen trying it when the file is opened again (inotify: each attempt opens it)."""
    import filelock

    assert path.is_file(), path

    @contextmanager
    def held() -> Iterator[Callable[[], bool]]:
        with filelock.FileLock(str(path)), _opened(path) as tried:
            yield tried

    return held


@contextmanager
def _opened(path: Path) -> Iterator[Callable[[], bool]]:
    """Whether anyone opened ``path`` since: Linux's inotify (IN_OPEN), through libc."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    assert fd >= 0 and libc.inotify_add_watch(fd, str(path).encode(), IN_OPEN) >= 0, os.strerror(ctypes.get_errno())
    seen: list[bytes] = []

    def tried() -> bool:
        try:
            seen.append(os.read(fd, 4096))
        except BlockingIOError:
            pass
        return bool(seen)

    try:
        yield tried
    finally:
        os.close(fd)


def _postgres_lock(dsn: str) -> Callable[[], Any]:
    """The writers' advisory lock, held by a session of this process; the server is seen trying
    it when pg_locks shows a session waiting for an advisory lock."""
    import psycopg

    from eidetic.stores.postgres.schema import WRITERS_LOCK

    @contextmanager
    def held() -> Iterator[Callable[[], bool]]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (WRITERS_LOCK,))
            with psycopg.connect(dsn, autocommit=True) as watch:
                yield lambda: bool(
                    watch.execute(
                        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    ).fetchone()[0]  # type: ignore[index]
                )
            conn.execute("SELECT pg_advisory_unlock(%s)", (WRITERS_LOCK,))

    return held


@asynccontextmanager
async def connect(served: Served) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {served.token}"}) as http,
        streamable_http_client(served.base + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def run(work: Callable[[], Any]) -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            await work()

    anyio.run(main)


async def until(seen: Callable[[], bool]) -> None:
    while not await anyio.to_thread.run_sync(seen):
        await anyio.sleep(0.02)


def exported(env: dict[str, str]) -> list[dict[str, Any]]:
    """Every record of the store, as its owner's backup reads it (the CLI, not the server)."""
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", "export", "--all"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def held_write(store: Store, served: Served, workers: int) -> list[str]:
    """A remember held up at the store's writer lock, and a read asked for meanwhile by another
    agent, on a server of ``workers`` threads; returns the order things happened in."""
    order: list[str] = []
    text = f"Held write through {workers} workers"

    async def work() -> None:
        async with connect(served) as writer, connect(served) as reader, anyio.create_task_group() as tasks:

            async def remember() -> None:
                await call(writer, "remember", records={"text": text})
                order.append("remembered")

            async def recall() -> None:
                hits = await call(reader, "recall", query="reviewers", mode="keyword")
                assert [h["id"] for h in hits["items"]] == ["team-note"]
                order.append("recalled")

            with store.held() as tried:
                tasks.start_soon(remember)
                await until(tried)  # the remember is on a worker thread, waiting for the lock
                tasks.start_soon(recall)
                with anyio.move_on_after(1 if workers == 1 else 60):
                    await until(lambda: "recalled" in order)
                order.append("released")
        async with connect(served) as reader:  # the held write went in once the lock was free
            hits = await call(reader, "recall", query="held write", mode="keyword")
            assert text in [h["text"] for h in hits["items"]]

    run(work)
    return order


def test_a_write_held_up_in_the_store_does_not_hold_up_another_agents_read(store):
    assert store.pool is not None
    assert held_write(store, store.pool, 4) == ["recalled", "released", "remembered"]


def test_with_one_worker_a_read_waits_behind_the_held_write_as_before(store):
    served = store.start("--workers", "1")
    try:
        assert held_write(store, served, 1) == ["released", "remembered", "recalled"]
    finally:
        served.stop()


def test_writes_through_parallel_clients_are_each_stored_once_and_the_scope_rule_holds(store):
    served = store.pool
    assert served is not None
    acknowledged: dict[str, str] = {}  # id -> text, as each agent was told
    answers: list[str] = []  # everything any read answered, to search for alice's private record

    async def agent(n: int) -> None:
        async with connect(served) as session:
            refused = await session.call_tool("recall", {"query": SECRET, "scope": "alice", "visibility": "private"})
            assert refused.is_error and "bob/private only" in refused.content[0].text
            answers.append(refused.content[0].text)
            for i in range(ROUNDS):
                text = f"Agent {n} note {i}: the {SECRET} build cache lives on volume {n * 10 + i}"
                visibility = "private" if i % 2 else "public"
                done = await call(session, "remember", records={"text": text}, visibility=visibility)
                (item,) = done["items"]
                assert item["status"] in ("new", "similar"), item
                acknowledged[item["id"]] = text
                for mode in ("keyword", "exact"):
                    answers.append(json.dumps(await call(session, "recall", query=SECRET, mode=mode, top_k=50)))

    async def work() -> None:
        async with anyio.create_task_group() as tasks:
            for n in range(CLIENTS):
                tasks.start_soon(agent, n)

    run(work)
    assert len(acknowledged) == CLIENTS * ROUNDS
    stored = [r for r in exported(store.env) if r["text"].startswith("Agent ")]  # not the seeds, not held writes
    assert sorted(r["id"] for r in stored) == sorted(acknowledged)  # none lost, none twice
    assert {r["id"]: r["text"] for r in stored} == acknowledged
    assert sorted(r["text"] for r in stored) == sorted(set(acknowledged.values()))
    assert all(r["scope"]["name"] == "bob" for r in stored)
    for answer in answers:
        assert "alice-secret" not in answer and "key rotates" not in answer
    seen = {h["id"] for a in answers if a.startswith("{") for h in json.loads(a)["items"]}
    assert {"alice-pub", "bob-note"} | set(acknowledged) <= seen  # the reads found what they may see, new ones too


@pytest.mark.parametrize("given", ["0", "-2", "four", " "])
def test_a_pool_without_threads_is_refused_before_anything_listens(given, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", "serve", "--port", "0", "--workers", given, "--json"],
        capture_output=True,
        text=True,
        env=store_env(tmp_path),
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    error = json.loads(proc.stderr)
    assert error["message"] == f"argument --workers: a whole number of threads from 1 on, not {given!r}"
    assert "eidetic serve --help" in error["remediation"]
