"""``GET /record?id=ID``: one record as ``eidetic show`` gives it: the text rendered as
markdown, every field, its file, its links both ways and the supersedes chain, its usage, and a
chat turn or doc chunk among its thread's neighbours (``Memory.thread``: only those the session
may read). A
missing id and one out of the session's reach get the same 404 page; a connection to a record
the session may not see reads "not found", exactly like a missing one. Not a recall."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..memory.thread_view import ThreadView
from ..results import RecordView
from .respond import lookup, render, session_of


async def record(request: Request) -> Response:
    session = session_of(request)
    rid = request.query_params.get("id", "")

    def work() -> tuple[RecordView, ThreadView | None]:
        scope, visibility = session.scope.name, session.scope.visibility
        view = session.memory.show(rid, scope=scope, visibility=visibility)
        return view, session.memory.thread(rid, scope=scope, visibility=visibility)

    view, thread = await lookup(session.call(work))
    return render(request, "record.html", view=view, r=view.item.record, thread=thread)
