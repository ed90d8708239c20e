"""The server's pool of worker threads (``eidetic.workers``) over a real files store, in
process: calls run side by side, each thread on a ``Memory`` of its own that stays its own,
code outside the pool sees the server's, and a session made without a pool keeps today's one
thread. Event-based: a pool that ran calls one at a time would never let the first finish."""

from __future__ import annotations

import asyncio
import threading

import pytest

from eidetic.memory import Memory
from eidetic.records import Scope
from eidetic.session import Session
from eidetic.workers import Workers

WAIT = 60  # seconds: only a broken pool waits this long


@pytest.fixture
def memory(store):
    memory = Memory.open()
    memory.remember([{"text": "Deploys run on Tuesdays"}])
    yield memory
    memory.close()


def test_calls_run_side_by_side_each_on_a_memory_of_its_own(memory):
    workers = Workers(memory, 2)
    session = Session(memory, Scope("default", "public"), workers=workers)
    other = threading.Event()
    seen: dict[str, Memory] = {}

    def first() -> list[str]:
        seen["first"] = session.memory
        assert other.wait(WAIT), "the second call never ran while the first was busy"
        return [h.record.id for h in session.memory.recall("tuesdays", mode="keyword").items]

    def second() -> None:
        seen["second"] = session.memory
        other.set()

    async def both() -> list[str]:
        found, _ = await asyncio.gather(session.call(first), session.call(second))
        return found

    try:
        assert len(asyncio.run(both())) == 1  # the busy thread's own Memory still reads the store
        assert seen["first"] is not seen["second"]
        assert memory in (seen["first"], seen["second"])  # the server's own went to one thread
        assert session.memory is memory  # outside the pool: the server's own
        again = asyncio.run(session.call(lambda: session.memory))
        assert again in (seen["first"], seen["second"])  # a thread keeps its Memory
    finally:
        session.close()  # not the pool's: the server closes it
        assert asyncio.run(Session(memory, Scope("default", "public"), workers=workers).call(lambda: 1)) == 1
        workers.close()


def test_a_session_without_a_pool_runs_one_call_at_a_time_on_the_servers_memory(memory):
    session = Session(memory, Scope("default", "public"))
    running = threading.Lock()
    overlapped: list[bool] = []

    def work() -> Memory:
        overlapped.append(not running.acquire(blocking=False))
        try:
            threading.Event().wait(0.01)
            return session.memory
        finally:
            running.release()

    async def many() -> list[Memory]:
        return list(await asyncio.gather(*(session.call(work) for _ in range(6))))

    try:
        assert set(map(id, asyncio.run(many()))) == {id(memory)}
        assert overlapped == [False] * 6
    finally:
        session.close()


def test_a_pool_belongs_to_one_memory(memory):
    workers = Workers(memory, 2)
    twin = memory.twin()
    try:
        with pytest.raises(ValueError, match="its own Memory"):
            Session(twin, Scope("default", "public"), workers=workers)
        with pytest.raises(ValueError, match="at least one worker"):
            Workers(memory, 0)
    finally:
        twin.close()
        workers.close()
