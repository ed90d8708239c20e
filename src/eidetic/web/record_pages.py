"""``GET /record?id=ID``: one record as ``eidetic show`` gives it: the text rendered as
markdown, every field, its file, its links both ways and the supersedes chain, its usage. A
missing id and one out of the session's reach get the same 404 page; a connection to a record
the session may not see reads "not found", exactly like a missing one. Not a recall."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..results import RecordView
from .respond import lookup, render, session_of


async def record(request: Request) -> Response:
    session = session_of(request)
    rid = request.query_params.get("id", "")

    def work() -> RecordView:
        return session.memory.show(rid, scope=session.scope.name, visibility=session.scope.visibility)

    view = await lookup(request, work)
    return render(request, "record.html", view=view, r=view.item.record)
