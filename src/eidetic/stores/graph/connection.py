"""The neo4j backend's connection to its graph server over Bolt: where it points (without the
password), the official driver opened on first use and again after a loss, one explicit
transaction per unit of work (retried when the server reports a transient conflict), and a
lost or refused server turned into an environment error that names the host, never the
password. The driver is imported only once a connection is needed (the CLI must start fast).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from ...errors import env_error, user_error
from ..backends import BACKENDS

T = TypeVar("T")
SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
DEFAULT_PORT = 7687
CONNECT_TIMEOUT = 10.0  # seconds to open a connection: a server that is down fails fast
RETRIES = 8  # attempts of one transaction the server reported as a transient conflict


def driver_module() -> Any:
    """The ``neo4j`` driver, imported only by this backend (an optional extra)."""
    try:
        import neo4j
    except ImportError:
        raise env_error(
            "the neo4j backend needs the neo4j driver, which is not installed", BACKENDS["neo4j"].install
        ) from None
    return neo4j


@dataclass(frozen=True)
class Target:
    """Where a URI points: scheme, host, port and database (None: the server's default), and
    the user. What ``key``, ``location`` and every error show: never the password."""

    scheme: str
    host: str
    port: int
    database: str | None
    user: str
    password: str = ""

    @classmethod
    def of(cls, uri: str, user: str = "", password: str = "") -> Target:
        """``scheme://[user[:password]@]host[:port][/database]``; ``user`` and ``password``
        (options, else the settings) win over the URI's."""
        try:
            parts = urlsplit(uri)
            port = parts.port or DEFAULT_PORT
        except ValueError:  # not echoed: the URI may hold a password
            raise user_error(
                "the neo4j URI is malformed", "check EIDETIC_NEO4J_URI / --uri, e.g. bolt://graph.internal:7687/eidetic"
            ) from None
        if parts.scheme not in SCHEMES or not parts.hostname:
            raise user_error(
                "the neo4j URI must be bolt://host[:port][/database] (or neo4j://, +s, +ssc)",
                "check EIDETIC_NEO4J_URI / --uri, e.g. bolt://graph.internal:7687/eidetic",
            )
        database = parts.path.strip("/") or None
        if database is not None and not database.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise user_error(
                f"the neo4j database name {database!r} is not a plain name",
                "name it with letters, digits, '-', '_' and '.', e.g. bolt://graph.internal:7687/eidetic",
            )
        name = user or unquote(parts.username or "") or "neo4j"
        secret = password or unquote(parts.password or "")
        return cls(parts.scheme, parts.hostname, port, database, name, secret)

    def address(self) -> str:
        """The server's URI for the driver: no user, password or database in it."""
        return f"{self.scheme}://{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}/{self.database or ''}"

    def __repr__(self) -> str:  # a dataclass repr would show the password
        return f"Target({self})"


class Connection:
    """The driver of one store, opened on first use; after a lost connection it is dropped and
    the next call opens a new one."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._driver: Any = None
        self._sessions = threading.local()  # each thread's (driver, session) for reads

    def _open(self) -> Any:
        if self._driver is None:
            neo4j = driver_module()
            self._driver = neo4j.GraphDatabase.driver(
                self.target.address(),
                auth=(self.target.user, self.target.password),
                connection_timeout=CONNECT_TIMEOUT,
                connection_acquisition_timeout=CONNECT_TIMEOUT * 3,
                max_transaction_retry_time=0,
            )
        return self._driver

    def close(self) -> None:
        if self._driver is not None:
            try:
                self._driver.close()
            except Exception:  # noqa: BLE001 (a dead server cannot be said goodbye to)
                pass
            self._driver = None

    def read(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """The rows of one query run on its own (no explicit transaction: one round trip), in
        this thread's session: a session is not shared between threads, and opening one per
        query cost ~2 ms more here."""

        def work() -> list[dict[str, Any]]:
            return [dict(row) for row in self._session().run(query, params)]

        return self._guarded(work)

    def _session(self) -> Any:
        """This thread's session on the current driver (a new one after a reconnect)."""
        driver = self._open()
        held = getattr(self._sessions, "held", None)
        if held is None or held[0] is not driver:
            held = self._sessions.held = (driver, driver.session(database=self.target.database))
        return held[1]

    def run(self, query: str, **params: Any) -> None:
        """One statement on its own (schema statements run outside explicit transactions)."""
        self.read(query, **params)

    def transaction(self, work: Callable[[Any], T]) -> T:
        """Run ``work(tx)`` in one explicit transaction and commit it; run it again (with a
        short random wait) when the server reports a transient conflict: a concurrent writer
        touched the same node (ArcadeDB's optimistic concurrency, Neo4j's deadlock detection)."""
        neo4j = driver_module()
        for number in range(RETRIES):
            try:
                return self._guarded(lambda: self._once(work))
            except neo4j.exceptions.TransientError:
                if number == RETRIES - 1:
                    raise env_error(
                        f"the graph server {self.target} kept reporting conflicting writers",
                        "try again; nothing of this batch was written",
                    ) from None
                time.sleep(random.uniform(0.01, 0.05) * 2**number)
        raise AssertionError("unreachable")

    def attempt(self, work: Callable[[Any], T]) -> tuple[bool, T | None]:
        """Run ``work(tx)`` in one transaction, once: (False, None) when the server reports a
        transient conflict (another process wrote the same node meanwhile), else (True, result)."""
        try:
            return True, self._guarded(lambda: self._once(work))
        except driver_module().exceptions.TransientError:
            return False, None

    def _once(self, work: Callable[[Any], T]) -> T:
        with self._open().session(database=self.target.database) as session:
            with session.begin_transaction() as tx:
                result = work(tx)
                tx.commit()
                return result

    def _guarded(self, work: Callable[[], T]) -> T:
        """``work()``, with a lost, refused or unauthorised connection as an environment error
        (the driver is dropped: the next call connects again). Transient errors pass through."""
        neo4j = driver_module()
        errors = neo4j.exceptions
        try:
            return work()
        except errors.AuthError:
            self.close()
            raise env_error(
                f"the graph server {self.target} refused user {self.target.user!r}",
                "check EIDETIC_NEO4J_USER and EIDETIC_NEO4J_PASSWORD (or --user / --password)",
            ) from None
        except (errors.ServiceUnavailable, errors.SessionExpired, OSError) as exc:
            self.close()
            raise env_error(
                f"lost the connection to the graph server {self.target.host}:{self.target.port} ({type(exc).__name__})",
                "check that the server is running and reachable; the next command connects again",
            ) from None
        except errors.TransientError:
            raise
        except errors.ClientError as exc:
            if "DatabaseNotFound" in str(exc.code):
                raise env_error(
                    f"the graph server {self.target.host}:{self.target.port} has no database {self.target.database!r}",
                    "create it on the server, or name another in the URI (bolt://host:port/DATABASE)",
                ) from None
            raise
