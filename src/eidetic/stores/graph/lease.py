"""The writers' lock of a graph store: a lease on one node, for every process and machine.

Cypher has no advisory lock, so a writer takes the lease node ``(:EideticLock {key:
'writers'})`` when it is free or its lease ran out (the server's clock, ``timestamp()``),
renews it from a thread while it holds it, and frees it when done; a writer that died frees
it by running out (``LEASE_MS``). The claim writes the node before it reads the owner: on Neo4j
that takes the node's write lock first (two claims cannot both see it free), and on ArcadeDB
two claims conflict at commit and one is run again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from ...errors import env_error
from .connection import Connection

LEASE_MS = 30_000  # a dead writer holds the store this long at most
RENEW_EVERY = LEASE_MS / 3000  # seconds between renewals
WAIT_SECONDS = 120.0  # how long a writer waits for the lease
CLAIM = (
    "MERGE (l:EideticLock {key: 'writers'}) SET l.claim = $me WITH l "
    "WHERE l.owner IS NULL OR l.owner = $me OR l.until < timestamp() "
    "SET l.owner = $me, l.until = timestamp() + $lease RETURN l.owner AS owner"
)
RENEW = "MATCH (l:EideticLock {key: 'writers'}) WHERE l.owner = $me SET l.until = timestamp() + $lease"
FREE = "MATCH (l:EideticLock {key: 'writers'}) WHERE l.owner = $me SET l.owner = null, l.until = null"


class Lease:
    """One store's hold on the writers' lease; nested use by the same store is a no-op."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._depth = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        me = uuid.uuid4().hex
        self._claim(me)
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(me, stop), daemon=True)
        renewer.start()
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            stop.set()
            renewer.join()
            self._connection.transaction(lambda tx: tx.run(FREE, me=me).consume())

    def _claim(self, me: str) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        pause = 0.005
        while True:
            # a claim that conflicts with another claim at commit simply failed: look again
            done, rows = self._connection.attempt(lambda tx: tx.run(CLAIM, me=me, lease=LEASE_MS).data())
            if done and rows and rows[0]["owner"] == me:
                return
            if time.monotonic() > deadline:
                raise env_error(
                    f"another writer has held the graph store {self._connection.target} for over {WAIT_SECONDS:.0f} s",
                    "try again when it has finished",
                )
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _renew(self, me: str, stop: threading.Event) -> None:
        while not stop.wait(RENEW_EVERY):
            try:
                self._connection.transaction(lambda tx: tx.run(RENEW, me=me, lease=LEASE_MS).consume())
            except Exception:  # noqa: BLE001 (the writer itself meets a lost server and says so)
                return
