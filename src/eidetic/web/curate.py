"""Changing records from the browser: edit, forget/restore, supersede. Each goes through the
same ``Memory`` call as the CLI (the same locks and validation) as the session: a record is
reached only if the session may see it (else the 404 of a missing one), and written only into
scopes the session may read (``writer``, as the MCP ``remember`` tool). Forget and restore ask
first; edit and supersede are explicit forms. After a change, a 303 to the record's page. A
read-only member gets a 403 for every form and change (the record page hides the controls)."""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import EideticError, user_error
from ..memory.editing import edit_text
from ..ranking.access import Access
from ..records import Record
from ..session import Session
from .respond import NotFound, lookup, moved, render, writer_of
from .templating import record_url


class Changed(EideticError):
    """The record is no longer what the edit started from."""


def visible(session: Session, rid: str) -> Record:
    """The record, on the worker thread, if the session may see it; else the 404."""
    try:
        return session.memory.get(rid, scope=session.scope.name, visibility=session.scope.visibility)
    except EideticError as exc:
        raise NotFound(exc) from None


def digest(text: str) -> str:
    """What an edit started from, as the form carries it: a digest of the file as shown (the
    record itself is read again on save, under the same check)."""
    return hashlib.sha256(typed(text).encode()).hexdigest()


def typed(text: str) -> str:
    """Text from a form: a browser sends line breaks as CRLF."""
    return text.replace("\r\n", "\n")


async def fields(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


# -- forget / restore ------------------------------------------------------------------------


async def forget(request: Request) -> Response:
    return await _lifecycle(request, "archived", "forget")


async def restore(request: Request) -> Response:
    return await _lifecycle(request, "active", "restore")


async def _lifecycle(request: Request, state: str, change: str) -> Response:
    session, form = writer_of(request, change), await fields(request)
    rid = form.get("id", "")
    if form.get("confirm") != "yes":
        record = await session.call(lambda: visible(session, rid))
        return render(request, "confirm.html", r=record, change=change)
    scope = session.scope
    await lookup(
        session.write(
            change,
            lambda: session.memory.set_lifecycle(rid, state, scope=scope.name, visibility=scope.visibility),
            lambda _: [rid],
        )
    )
    request.app.state.reports.changed()
    return moved(record_url(rid))


# -- edit --------------------------------------------------------------------------------------


async def edit_form(request: Request) -> Response:
    session = writer_of(request, "edit")
    record = await session.call(lambda: visible(session, request.query_params.get("id", "")))
    text = edit_text(record)
    return render(request, "edit.html", r=record, text=text, original=digest(text), error=None)


async def edit_save(request: Request) -> Response:
    session, form = writer_of(request, "edit"), await fields(request)
    rid, text, original = form.get("id", ""), typed(form.get("text", "")), form.get("original", "")

    def save() -> None:
        record = visible(session, rid)
        if digest(edit_text(record)) != original:
            raise Changed(
                f"record {rid!r} changed since this edit began; nothing was saved",
                "open the record to see the change, then edit it again (your text is kept below to copy)",
            )
        session.memory.save_edit(record, text, scope=session.scope.name, visibility=session.scope.visibility)

    try:
        await session.write("edit", save, lambda _: [rid])
    except NotFound:
        raise
    except EideticError as exc:  # re-shown with the text as typed
        record = await session.call(lambda: visible(session, rid))
        status = 409 if isinstance(exc, Changed) else 400
        return render(request, "edit.html", status, r=record, text=text, original=original, error=_spelled(exc))
    request.app.state.reports.changed()
    return moved(record_url(rid))


# -- supersede ---------------------------------------------------------------------------------


async def supersede_form(request: Request) -> Response:
    session = writer_of(request, "supersede")
    record = await session.call(lambda: visible(session, request.query_params.get("id", "")))
    return render(request, "supersede.html", r=record, text=record.text, name=record.name or "", new_id="", error=None)


async def supersede_save(request: Request) -> Response:
    session, form = writer_of(request, "supersede"), await fields(request)
    rid, text = form.get("id", ""), typed(form.get("text", ""))
    name, new_id = form.get("name", "").strip(), form.get("new_id", "").strip()

    def save() -> str:
        old = visible(session, rid)
        entry: dict[str, Any] = {"text": text, "type": old.type, "supersedes": old.id, "scope": old.scope.to_dict()}
        entry.update({key: value for key, value in (("id", new_id), ("name", name)) if value})
        if session.member is not None:  # a member's record is theirs (team.attribution)
            entry["added_by"] = session.member
        item = session.memory.remember([entry], writer=Access(session.scope)).items[0]
        if item["status"] == "duplicate":
            raise user_error(
                f"this text is already stored, as {item['duplicate_of']!r}; nothing was saved",
                "change the text, or open that record",
            )
        return str(item["id"])

    try:
        new = await session.write("supersede", save, lambda new_id: [new_id, rid])
    except NotFound:
        raise
    except EideticError as exc:
        record = await session.call(lambda: visible(session, rid))
        return render(
            request, "supersede.html", 400, r=record, text=text, name=name, new_id=new_id, error=_spelled(exc)
        )
    request.app.state.reports.changed()
    return moved(record_url(new))


def _spelled(error: EideticError) -> EideticError:
    """An error as the viewer shows it: a switch the viewer does not offer (``allow_secrets``, for
    a public record holding a credential) is named as the command line's flag."""
    from ..query import flag_of

    if error.override is None:
        return error
    return error.spelled(flag_of, lambda option, value: f"the command line's {flag_of(option)}")
