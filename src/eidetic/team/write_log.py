"""The server's write log: who changed which records, when, and through which server scope;
never a record's text, never a token.

A postgres server keeps it in a table beside its store (``eidetic_write_log``, same database
and schema), so every server process on that database writes to one log; every other server
in an append-only JSON-lines file in the state folder (``write-log.jsonl``). ``eidetic log``
(``cli/log.py``) reads either back, newest first.

A write the log cannot record (a full disk, a lost database) has already happened, so the
caller is still told it succeeded, and the entry goes to the server's stderr in full, where a
service manager's journal keeps it: an entry is never lost silently.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EideticError

if TYPE_CHECKING:
    from ..memory import Memory
    from ..records import Scope

SERVER = "(server)"  # the member of a write on a one-identity server (no member tokens)
FILE_NAME = "write-log.jsonl"
TABLE = "eidetic_write_log"
# Creating the table, once, whichever server process writes first ("eidetic" + 0x10).
CREATE_LOCK = 0x6569_6465_7469_6310


@dataclass(frozen=True)
class Entry:
    """One write: when (UTC, ISO 8601), who, what, which records, through which server scope."""

    time: str
    member: str
    operation: str
    ids: tuple[str, ...]
    scope: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "member": self.member,
            "operation": self.operation,
            "ids": list(self.ids),
            "scope": self.scope,
        }


@dataclass(frozen=True)
class Wanted:
    """Which entries to read: all filters must hold; at most ``limit`` (None: every one)."""

    member: str | None = None
    operation: str | None = None
    id: str | None = None
    since: datetime | None = None
    limit: int | None = None

    def admits(self, entry: Entry) -> bool:
        return (
            (self.member is None or entry.member == self.member)
            and (self.operation is None or entry.operation == self.operation)
            and (self.id is None or self.id in entry.ids)
            and (self.since is None or datetime.fromisoformat(entry.time) >= self.since)
        )


class Book(Protocol):
    """Where entries are kept: appended one at a time, read back newest first."""

    where: str  # for messages: a path, or the server without credentials

    def add(self, entry: Entry) -> None: ...

    def read(self, wanted: Wanted) -> list[Entry]: ...

    def close(self) -> None: ...


def stamp(moment: datetime) -> str:
    """An entry's time: UTC, ISO 8601, to the millisecond (writes a second apart stay ordered)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


class FileBook:
    """An append-only JSON-lines file, one line per write. Each line goes out in one ``write``
    on a descriptor opened with ``O_APPEND``, under an exclusive ``flock`` of the file, and is
    fsync'd, so server processes sharing the file never interleave their lines; a line torn by
    a crash is sealed off by the next write and skipped when read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def add(self, entry: Entry) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"  # as ``_json``
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            # held for one write: the last byte read below is a finished line's, never a line
            # another process is writing (a reader may see a write half done)
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":  # a line torn by a crash: end it first
                line = "\n" + line
            data = line.encode()
            if os.write(fd, data) != len(data):
                raise OSError(f"wrote part of the entry to {self.path} (disk full?)")
            os.fsync(fd)
        finally:
            os.close(fd)  # and the lock with it

    def read(self, wanted: Wanted) -> list[Entry]:
        """Newest first: the file read from its end, so the newest ``limit`` cost what they
        hold, not what the whole log does; a line that cannot hold a wanted member, operation
        or id is passed over unparsed."""
        needles = [_json(v).encode() for v in (wanted.member, wanted.operation, wanted.id) if v is not None]
        found: list[Entry] = []
        for line in self._lines_backwards():
            if wanted.limit is not None and len(found) >= wanted.limit:
                break
            if all(needle in line for needle in needles):
                entry = _parsed(line)  # None for a line torn by a crash (or sealed off after one)
                if entry is not None and wanted.admits(entry):
                    found.append(entry)
        return found

    def _lines_backwards(self, block: int = 1 << 16) -> Iterator[bytes]:
        """The file's lines, last first."""
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return
        with handle:
            position, rest = handle.seek(0, os.SEEK_END), b""
            while position > 0:
                step = min(block, position)
                position -= step
                handle.seek(position)
                lines = (handle.read(step) + rest).split(b"\n")
                rest = lines.pop(0)  # perhaps the end of a line that starts in the block before
                yield from reversed(lines)
            yield rest

    def close(self) -> None:
        pass


def _json(value: str) -> str:
    """A value as an entry's line spells it."""
    return json.dumps(value, ensure_ascii=False)


def _parsed(line: bytes) -> Entry | None:
    """The entry a line holds; None for a blank, torn or foreign line."""
    try:
        data = json.loads(line)
        entry = Entry(
            str(data["time"]),
            str(data["member"]),
            str(data["operation"]),
            tuple(map(str, data["ids"])),
            str(data["scope"]),
        )
        datetime.fromisoformat(entry.time)
    except (ValueError, TypeError, KeyError):
        return None
    return entry


class PostgresBook:
    """A table in the store's own database and schema, created by the first write (reads never
    create it); one row per write, its ids an array (a GIN index finds a record's writes), with
    indexes on time and on member."""

    STATEMENTS = (
        f"CREATE TABLE IF NOT EXISTS {TABLE}(entry bigserial PRIMARY KEY, at timestamptz NOT NULL, "
        "member text NOT NULL, operation text NOT NULL, ids text[] NOT NULL, scope text NOT NULL)",
        f"CREATE INDEX IF NOT EXISTS {TABLE}_at ON {TABLE}(at)",
        f"CREATE INDEX IF NOT EXISTS {TABLE}_member ON {TABLE}(member, at)",
        # no pending list: a read of one id's writes looks in the index, never through a list of
        # recent entries kept aside (each write is one row; the index takes it at once)
        f"CREATE INDEX IF NOT EXISTS {TABLE}_ids ON {TABLE} USING gin (ids) WITH (fastupdate = off)",
    )

    def __init__(self, dsn: str) -> None:
        from ..stores.postgres.connection import Session

        self._session = Session(dsn)  # a connection of its own: the store's belongs to its calls
        self._lock = threading.Lock()  # one statement at a time on it, whichever thread writes
        self._ready = False
        self.where = str(self._session.target)

    def add(self, entry: Entry) -> None:
        with self._lock, self._session.guard():
            conn = self._session.conn
            if not self._ready:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (CREATE_LOCK,))
                    for statement in self.STATEMENTS:
                        conn.execute(statement)
                self._ready = True
            conn.execute(
                f"INSERT INTO {TABLE}(at, member, operation, ids, scope) VALUES (%s, %s, %s, %s, %s)",
                (datetime.fromisoformat(entry.time), entry.member, entry.operation, list(entry.ids), entry.scope),
            )

    def read(self, wanted: Wanted) -> list[Entry]:
        # One record's writes are few, but the planner guesses an array holds a value in 0.5% of
        # rows and would walk the time index back through every row: the id's rows come first
        # (from the GIN index; OFFSET 0 keeps the subquery apart), then their order.
        rows_of = TABLE if wanted.id is None else f"(SELECT * FROM {TABLE} WHERE ids @> %s::text[] OFFSET 0) AS touched"
        clauses: list[str] = []
        params: list[Any] = [] if wanted.id is None else [[wanted.id]]
        for clause, value in (
            ("member = %s", wanted.member),
            ("operation = %s", wanted.operation),
            ("at >= %s", wanted.since),
        ):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        limit = "" if wanted.limit is None else f"LIMIT {int(wanted.limit)}"
        with self._lock, self._session.guard():
            conn = self._session.conn
            if conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0] is None:
                return []  # no write yet
            rows = conn.execute(
                f"SELECT at, member, operation, ids, scope FROM {rows_of} {where} ORDER BY at DESC, entry DESC {limit}",
                params,
            ).fetchall()
        return [Entry(stamp(at), member, operation, tuple(ids), scope) for at, member, operation, ids, scope in rows]

    def close(self) -> None:
        self._session.drop()


def open_book(memory: Memory) -> Book:
    """The write log of ``memory``'s store: its database's table for postgres, else the file
    in the state folder."""
    if memory.backend == "postgres":
        return PostgresBook(str(memory.location))
    return FileBook(memory.settings.state_dir / FILE_NAME)


class ServerLog:
    """The ``session.WriteLog`` a server hands its sessions: each write as an entry, stamped now,
    with the member's name (``SERVER`` for none) and the server's scope."""

    def __init__(self, book: Book, scope: Scope) -> None:
        self.book = book
        self.scope = f"{scope.name}/{scope.visibility}"

    def append(self, member: str | None, operation: str, ids: Sequence[str]) -> None:
        if not ids:  # the call changed nothing (a text remembered again, a sweep with nothing due)
            return
        entry = Entry(stamp(datetime.now(UTC)), member or SERVER, operation, tuple(ids), self.scope)
        try:
            self.book.add(entry)
        except Exception as exc:  # the write happened: never a failed call, but the entry kept
            _unrecorded(self.book.where, exc, entry)


def open_write_log(memory: Memory, scope: Scope) -> ServerLog:
    """The log a server serving ``scope`` on ``memory`` appends its writes to."""
    return ServerLog(open_book(memory), scope)


def _unrecorded(where: str, error: Exception, entry: Entry) -> None:
    """An entry the log could not keep, on stderr in full (no text, no token: there is none)."""
    lines = str(error).strip().splitlines()
    reason = error.message if isinstance(error, EideticError) else lines[0] if lines else type(error).__name__
    sys.stderr.write(
        f"eidetic: the write log at {where} could not record a write ({reason}); the change was made. "
        f"Its entry: {json.dumps(entry.to_dict(), ensure_ascii=False)}\n"
    )
    sys.stderr.flush()
