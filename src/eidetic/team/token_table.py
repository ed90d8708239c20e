"""Members kept in the postgres database of a postgres store: the table ``eidetic_members``,
created if missing beside the store's tables (the connection's current schema). Every server on
that database reads it, so a token added or revoked counts on all of them at their next request.
Its own small connection (``stores.postgres.connection.Session``): lookups run on the server's
request threads, never on the store's worker thread."""

from __future__ import annotations

import threading
import time
from typing import Any

from ..records import Scope
from ..stores.postgres.connection import Session
from ..timeutil import format_ts, now_utc
from .tokens import TOUCH_EVERY, Member, digest, new_token, taken, unknown

TABLE = """CREATE TABLE IF NOT EXISTS eidetic_members(
    name text PRIMARY KEY, digest text UNIQUE, scope text NOT NULL, visibility text NOT NULL,
    read_only boolean NOT NULL, created text NOT NULL, last_seen text, revoked text)"""
COLUMNS = "name, scope, visibility, read_only, created, last_seen"


class TokenTable:
    """A ``Registry`` (``tokens.Registry``) in the database at ``dsn``."""

    def __init__(self, dsn: str) -> None:
        self._db = Session(dsn)
        self.where = f"{self._db.target} (table eidetic_members)"
        self._mutex = threading.Lock()  # one connection, used by one thread at a time
        self._touched: dict[str, float] = {}
        self._created = False

    def add(self, name: str, scope: Scope, *, read_only: bool) -> str:
        import psycopg

        token = new_token()
        with self._mutex, self._db.guard():
            self._create()
            try:
                with self._db.conn.transaction():
                    self._db.conn.execute(
                        "DELETE FROM eidetic_members WHERE name = %s AND revoked IS NOT NULL", (name,)
                    )
                    self._db.conn.execute(
                        "INSERT INTO eidetic_members(name, digest, scope, visibility, read_only, created) "
                        "VALUES (%s, %s, %s, %s, %s, %s)",
                        (name, digest(token), scope.name, scope.visibility, read_only, format_ts(now_utc())),
                    )
            except psycopg.errors.UniqueViolation:
                raise taken(name) from None
        return token

    def members(self, *, revoked: bool = False) -> list[Member]:
        where = "" if revoked else " WHERE revoked IS NULL"
        rows = self._rows(f"SELECT {COLUMNS} FROM eidetic_members{where} ORDER BY name", ())
        return [Member(*row) for row in rows]

    def revoke(self, name: str) -> None:
        with self._mutex, self._db.guard():
            self._create()
            done = self._db.conn.execute(
                "UPDATE eidetic_members SET revoked = %s, digest = NULL WHERE name = %s AND revoked IS NULL",
                (format_ts(now_utc()), name),
            ).rowcount
        if not done:
            raise unknown(name, [member.name for member in self.members()])

    def lookup(self, token_digest: str) -> tuple[bool, Member | None]:
        """One round trip: whether the server has members (revoked ones too: revoking the last one
        opens nothing), and the live one with this digest (by its index)."""
        rows = self._rows(
            f"SELECT EXISTS(SELECT 1 FROM eidetic_members), m.* FROM (SELECT 1) AS one "
            f"LEFT JOIN (SELECT {COLUMNS} FROM eidetic_members WHERE digest = %s AND revoked IS NULL) AS m ON true",
            (token_digest,),
        )
        if not rows:  # no table yet: no members
            return False, None
        closed, *found = rows[0]
        if found[0] is None:
            return bool(closed), None
        member = Member(*found)
        if time.monotonic() - self._touched.get(member.name, -TOUCH_EVERY) >= TOUCH_EVERY:
            self._touched[member.name] = time.monotonic()
            with self._mutex, self._db.guard():
                self._db.conn.execute(
                    "UPDATE eidetic_members SET last_seen = %s WHERE digest = %s", (format_ts(now_utc()), token_digest)
                )
        return True, member

    def close(self) -> None:
        with self._mutex:
            self._db.drop()

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """A read; no table yet reads as no rows (a read creates nothing)."""
        import psycopg

        with self._mutex, self._db.guard():
            try:
                return list(self._db.conn.execute(sql, params))
            except psycopg.errors.UndefinedTable:
                return []

    def _create(self) -> None:
        if not self._created:
            self._db.conn.execute(TABLE)
            self._created = True
