"""Members kept in one JSON file in the state folder (a server on a files or sqlite store).

Written whole to a new file and renamed over the old one (mode 0600: the digests are no
secret, but who may ask is nobody else's business), under a lock file, so ``eidetic tokens``
and a running server's ``last_seen`` never lose each other's changes. A server reads the file
again when its modification time or size changes, so an added or revoked token counts on the
next request."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..errors import env_error
from ..records import Scope
from ..timeutil import format_ts, now_utc
from .tokens import TOUCH_EVERY, Member, digest, new_token, taken, unknown

VERSION = 1


class TokenFile:
    """A ``Registry`` (``tokens.Registry``) in ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._lock = FileLock(str(path) + ".lock", mode=0o600)
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of what ``_rows`` holds
        self._rows: dict[str, dict[str, Any]] = {}
        self._by_digest: dict[str, dict[str, Any]] = {}
        self._touched: dict[str, float] = {}
        self._mutex = threading.Lock()  # the server looks tokens up from several threads

    # -- what the CLI does -------------------------------------------------------------------

    def add(self, name: str, scope: Scope, *, read_only: bool) -> str:
        token = new_token()
        with self._changing() as rows:
            if name in rows and not rows[name].get("revoked"):
                raise taken(name)
            rows[name] = {
                "digest": digest(token),
                "scope": scope.name,
                "visibility": scope.visibility,
                "read_only": read_only,
                "created": format_ts(now_utc()),
                "last_seen": None,
                "revoked": None,
            }
        return token

    def members(self, *, revoked: bool = False) -> list[Member]:
        with self._mutex:
            rows = self._fresh()
            return [_member(name, row) for name, row in sorted(rows.items()) if revoked or not row.get("revoked")]

    def revoke(self, name: str) -> None:
        with self._changing() as rows:
            live = [n for n, row in rows.items() if not row.get("revoked")]
            if name not in live:
                raise unknown(name, live)
            rows[name]["revoked"] = format_ts(now_utc())
            rows[name]["digest"] = None  # nothing of the token is kept once it is revoked

    # -- what the server does ----------------------------------------------------------------

    def lookup(self, token_digest: str) -> tuple[bool, Member | None]:
        with self._mutex:
            self._fresh()
            closed = bool(self._rows)  # revoked members too: revoking the last one opens nothing
            row = self._by_digest.get(token_digest)
        if row is None:
            return closed, None
        name = row["name"]
        if time.monotonic() - self._touched.get(name, -TOUCH_EVERY) >= TOUCH_EVERY:
            self._touched[name] = time.monotonic()
            self._touch(name, token_digest)
        return True, _member(name, row)

    def close(self) -> None:
        pass

    # -- the file ----------------------------------------------------------------------------

    def _touch(self, name: str, token_digest: str) -> None:
        """``last_seen`` of a member whose token was just used (unless revoked meanwhile)."""
        try:
            with self._changing() as rows:
                row = rows.get(name)
                if row is not None and row.get("digest") == token_digest:
                    row["last_seen"] = format_ts(now_utc())
        except OSError:  # a read-only state folder: the member is still served
            pass

    def _fresh(self) -> dict[str, dict[str, Any]]:
        """The rows, read again if the file changed since the last read (the caller holds ``_mutex``)."""
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._seen, self._rows, self._by_digest = None, {}, {}
            return self._rows
        seen = (info.st_mtime_ns, info.st_size)
        if seen != self._seen:
            self._rows = self._read()
            self._by_digest = {
                row["digest"]: {**row, "name": name}
                for name, row in self._rows.items()
                if row.get("digest") and not row.get("revoked")
            }
            self._seen = seen
        return self._rows

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            rows = data["members"]
            assert isinstance(rows, dict)
            return rows
        except FileNotFoundError:
            return {}
        except (ValueError, KeyError, TypeError, AssertionError):
            raise env_error(
                f"the members' file {self.path} is not one eidetic wrote",
                "restore it from a backup, or move it away and add the members again (eidetic tokens add)",
            ) from None

    @contextmanager
    def _changing(self) -> Iterator[dict[str, dict[str, Any]]]:
        """The rows to change, read and written back under the file's lock (not written if the
        change raises)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            rows = self._read()
            yield rows
            self._write(rows)

    def _write(self, rows: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"version": VERSION, "members": rows}, out, indent=1, sort_keys=True)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def _member(name: str, row: dict[str, Any]) -> Member:
    return Member(
        name=name,
        scope=row["scope"],
        visibility=row["visibility"],
        read_only=bool(row["read_only"]),
        created=row["created"],
        last_seen=row.get("last_seen"),
    )
