"""Every caller's ``Session`` on one server: the server's own (a one-identity server, or its
single ``EIDETIC_SERVE_TOKEN``) and one per member, made on a member's first request and kept.
All of them share the server's one ``Memory``, its pool of worker threads (``workers.py``) and
its write log."""

from __future__ import annotations

from ..session import Session
from ..team.tokens import Member


class Sessions:
    """The one place a member's session is made: its scope and visibility from the token (the
    session's scope rule keeps private reads to that scope), its name, whether it may write."""

    def __init__(self, server: Session) -> None:
        self.server = server
        self._members: dict[tuple[str, str, str, bool], Session] = {}

    def of(self, member: Member | None) -> Session:
        if member is None:
            return self.server
        key = (member.name, member.scope, member.visibility, member.read_only)  # a name given a new token anew
        session = self._members.get(key)
        if session is None:
            session = Session(
                self.server.memory,
                member.session_scope,
                member=member.name,
                read_only=member.read_only,
                log=self.server.log,
                workers=self.server.workers,
            )
            self._members[key] = session
        return session

    def all(self) -> list[Session]:
        return [self.server, *self._members.values()]
