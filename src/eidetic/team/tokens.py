"""Members' tokens for ``eidetic serve``: what a member is, how a token is made and kept, and
which registry a store's server reads (``open_registry``).

A token is shown once, when it is made; only its SHA-256 is kept. A token is 32 random bytes
(``secrets.token_urlsafe``), so a fast hash is enough: a slow one (bcrypt, scrypt) guards
guessable passwords, and nobody can guess 256 random bits whatever the hash costs. A fast
hash also lets every request be looked up by its digest, at the same cost for any token.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import did_you_mean, user_error
from ..records import Scope

if TYPE_CHECKING:
    from ..memory import Memory

PREFIX = "eid_"  # a token is recognisable (in a leaked file, by a secret scanner)
TOUCH_EVERY = 60.0  # seconds: a member's last_seen is written at most this often per server
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class Member:
    """One token's holder: a name, the scope its session serves, and whether it may write."""

    name: str
    scope: str
    visibility: str
    read_only: bool
    created: str
    last_seen: str | None = None

    @property
    def session_scope(self) -> Scope:
        return Scope(self.scope, self.visibility)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """What is kept of a token, and what a presented one is looked up by."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise user_error(
            f"invalid member name {name!r}",
            "a name is 1-64 letters, digits, '-', '_' or '.', e.g. alice or ci-bot",
        )
    return name


def unknown(name: str, known: Sequence[str]) -> Exception:
    hint = did_you_mean(name, known) or (
        f"the members are: {', '.join(sorted(known))}" if known else "there are no members yet"
    )
    return user_error(f"no member named {name!r}", f"{hint} (eidetic tokens list shows them)")


def taken(name: str) -> Exception:
    return user_error(
        f"a member named {name!r} already has a token",
        f"to give {name} a new token, revoke the old one first: eidetic tokens revoke {name}",
    )


class Registry(Protocol):
    """Where a server's members are kept: the postgres database of a postgres store
    (``token_table``), a file in the state folder otherwise (``token_file``)."""

    where: str  # said by ``tokens add`` and ``tokens list``: which registry a command used

    def add(self, name: str, scope: Scope, *, read_only: bool) -> str:
        """A new member; returns its token, which is kept nowhere."""
        ...

    def members(self, *, revoked: bool = False) -> list[Member]:
        """The members by name (revoked ones too with ``revoked``); never tokens or digests."""
        ...

    def revoke(self, name: str) -> None: ...

    def lookup(self, token_digest: str) -> tuple[bool, Member | None]:
        """Whether the server has members (revoked ones too: once it had members, a server never
        opens to callers without a token again), and the member whose live token has this digest
        (recording its use, at most every ``TOUCH_EVERY`` seconds)."""
        ...

    def close(self) -> None: ...


def open_registry(memory: Memory) -> Registry:
    """The registry of the server ``memory``'s store would run: the store's own database for
    postgres (both servers on one database share the members), else the state folder's file."""
    if memory.backend == "postgres":
        from .token_table import TokenTable

        return TokenTable(str(memory.location))
    from .token_file import TokenFile

    return TokenFile(memory.settings.state_dir / "serve-tokens.json")
