"""The postgres backend's server sessions: connecting, reconnecting after a loss, turning a lost
server into an environment error, the writers' session lock, and naming the server without its
password. psycopg is imported only once a session is needed (the CLI must start fast)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ...docsql.dialect import Postgres
from ...errors import env_error
from ..backends import BACKENDS
from .schema import WRITERS_LOCK

LOCK_TIMEOUT = "60s"


def driver() -> Any:
    """psycopg, imported only by the postgres backend (an optional extra)."""
    try:
        import psycopg
    except ImportError:
        raise env_error(
            "the postgres backend needs the psycopg driver, which is not installed", BACKENDS["postgres"].install
        ) from None
    return psycopg


@dataclass(frozen=True)
class Target:
    """Where a DSN points, without credentials: what ``key``, ``location`` and errors show."""

    host: str
    port: str
    dbname: str

    @classmethod
    def of(cls, dsn: str) -> Target:
        psycopg = driver()
        from psycopg.conninfo import conninfo_to_dict

        try:
            params = conninfo_to_dict(dsn)
        except psycopg.ProgrammingError:  # not echoed: the DSN may hold a password
            raise env_error(
                "the PostgreSQL DSN is malformed",
                "check EIDETIC_PG_DSN / --dsn, e.g. postgresql://user@host:5432/dbname",
            ) from None
        host = str(params.get("host") or os.environ.get("PGHOST") or "localhost")
        port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
        dbname = str(params.get("dbname") or os.environ.get("PGDATABASE") or params.get("user") or "postgres")
        return cls(host, port, dbname)

    def __str__(self) -> str:
        return f"postgres://{self.host}:{self.port}/{self.dbname}"


class Session:
    """A store's two server sessions, opened on first use and again after a loss: ``conn`` for
    everything but nearest(), ``reader`` for nearest() (see ``reader``)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.target = Target.of(dsn)
        self._conn: Any = None
        self._reader: Any = None
        self._vector_ready = False  # ``conn`` knows the vector type (``register_vector``)
        self._lock_depth = 0  # nested ``writer_lock`` uses by this store
        # lower() as Python's str.lower cases text, where the server can (``_connect`` picks
        # a Unicode collation when there is one)
        self._dialect = Postgres()

    @property
    def conn(self) -> Any:
        if self._conn is None:
            if self._lock_depth:  # a new session would write without the writer lock
                raise env_error(
                    f"lost the connection to the PostgreSQL server at {self.target} while holding the writer lock",
                    "try the command again",
                )
            self._conn = self._connect()
        return self._conn

    @property
    def dialect(self) -> Postgres:
        """How the docs-table SQL both SQL backends share is spelt on this server
        (``docsql.dialect``); its collation is known once a session is connected."""
        if self._conn is None and self._reader is None:
            self.conn  # noqa: B018 (connects)
        return self._dialect

    @property
    def reader(self) -> Any:
        """nearest()'s own session: a recall runs it on another thread while keyword() runs on
        ``conn``, so the server walks the vector graph and ranks by keywords on two cores."""
        if self._reader is None:
            from pgvector.psycopg import register_vector

            self._reader = self._connect()
            register_vector(self._reader)
        return self._reader

    def register_vector(self) -> None:
        """Teach ``conn`` the pgvector type (once the schema, hence the extension, exists)."""
        if not self._vector_ready:
            from pgvector.psycopg import register_vector

            register_vector(self.conn)
            self._vector_ready = True

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a connection lost after connecting (server restart or shutdown, network, timeout)
        into an environment error naming the server, and drop the dead connection so the next
        call connects afresh. Errors of a statement itself (bad SQL, constraints) pass through."""
        import psycopg

        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            # an operational error on a live session (disk full, statement timeout) is no lost connection
            lost = self._conn is None or any(c is not None and c.closed for c in (self._conn, self._reader))
            what = "lost the connection to" if lost else "a failure at"
            self.drop()
            lines = str(exc).strip().splitlines()
            reason = self.scrub(lines[0]) if lines else type(exc).__name__
            raise env_error(
                f"{what} the PostgreSQL server at {self.target}: {reason}",
                "check that the server is running and reachable (EIDETIC_PG_DSN / --dsn), "
                "then run the command again: eidetic reconnects",
            ) from None

    def drop(self) -> None:
        """Forget the connections (closing them quietly: they may be dead already)."""
        conns, self._conn, self._reader, self._vector_ready = (self._conn, self._reader), None, None, False
        for conn in conns:
            if conn is not None:
                conn.close()

    def _connect(self) -> Any:
        import psycopg
        from psycopg.types.json import set_json_loads

        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise env_error(
                f"cannot connect to the PostgreSQL server at {self.target}: {self.scrub(reason)}",
                "check EIDETIC_PG_DSN / --dsn (host, port, database, user, password) "
                "and that the server is running and reachable",
            ) from None
        # Plans for the values at hand: a cached generic plan of the keyword query (psycopg
        # prepares statements run 5+ times) ignored its LIMIT and arrays and ran 5x slower; and no
        # JIT, whose compile time exceeds these short queries' run time.
        conn.execute("SET plan_cache_mode = force_custom_plan")
        conn.execute("SET jit = off")
        # Metadata (a json column) parses as the other backends parse it, whatever loader the
        # host application set for psycopg process-wide: floats stay floats, -0.0 keeps its sign.
        set_json_loads(json.loads, conn)
        collations = {
            name
            for (name,) in conn.execute(
                "SELECT collname FROM pg_collation WHERE collname IN ('pg_unicode_fast', 'pg_c_utf8')"
            )
        }
        for name in ("pg_unicode_fast", "pg_c_utf8"):  # Unicode case mapping, as Python's str.lower
            if name in collations:
                self._dialect = Postgres(name)
                break
        return conn

    def scrub(self, message: str) -> str:
        """Never echo a password, even if a driver message quotes the DSN."""
        from psycopg.conninfo import conninfo_to_dict

        password = conninfo_to_dict(self.dsn).get("password")
        return message.replace(str(password), "***") if password else message

    @contextmanager
    def writer_lock(self, first: Callable[[], Any]) -> Iterator[None]:
        """A session advisory lock: one writer of the store at a time across processes and
        machines; nested use is a no-op, and a lost connection releases it. ``first`` runs
        under the guard before the lock is taken (the store creates its schema there)."""
        import psycopg

        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with self.guard():
            first()
            conn = self.conn
            try:
                conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
                conn.execute("SELECT pg_advisory_lock(%s)", (WRITERS_LOCK,))
            except psycopg.errors.LockNotAvailable:
                raise env_error(
                    f"another writer held the store at {self.target} for over {LOCK_TIMEOUT}",
                    "try again; if it persists, look for a stuck eidetic process",
                ) from None
            finally:
                if not conn.closed:
                    conn.execute("RESET lock_timeout")
        self._lock_depth = 1
        try:
            yield
        finally:
            self._lock_depth = 0
            if self._conn is conn:  # else the connection was lost, and the session lock with it
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (WRITERS_LOCK,))
                except (psycopg.OperationalError, psycopg.InterfaceError):
                    self.drop()  # lost just now: the server released the lock


class _HasSession(Protocol):
    """What ``guarded`` needs of the object whose method it wraps."""

    _session: Session


_Method = TypeVar("_Method", bound=Callable[..., Any])


def guarded(method: _Method) -> _Method:
    """Run a store entry point under ``Session.guard``: a server lost mid-session becomes an
    environment error (exit 2) instead of a driver traceback."""

    @functools.wraps(method)
    def wrapper(self: _HasSession, *args: Any, **kwargs: Any) -> Any:
        with self._session.guard():
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
