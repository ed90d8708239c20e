"""Editing one record as a markdown file (``eidetic edit``): the text a person edits, and the
edited text read back as ``remember`` input, so a save passes exactly remember's checks and goes
through the normal write path (locked, atomic, one record or nothing).

The id names the record being edited, so it cannot change; the lifecycle has its own verbs
(``forget``, ``restore``), which date their changes in its ``history``; ``updated`` is stamped by
the save. Everything else is the person's, the event clock (``occurred``, ``valid_from``,
``valid_until``) included.
"""

from __future__ import annotations

from typing import Any

from .. import frontmatter
from ..errors import user_error
from ..record_intake import jsonable
from ..records import Record


def edit_text(record: Record) -> str:
    """The record as a person edits it: the files backend's own file format."""
    return frontmatter.render(record)


def edited_input(text: str, original: Record) -> dict[str, Any]:
    """The edited file as a remember input (a JSON-style dict); a file that cannot be one, or
    that changes what editing may not, is refused with what to do instead."""
    try:
        data, body = frontmatter.split(text)
    except ValueError as exc:
        raise user_error(
            f"the edited file is not a record: {exc}", "keep the front matter between two '---' lines"
        ) from None
    data = jsonable(data)
    if "text" in data:
        raise user_error("'text' is not a front matter field", "the record's text is everything after the front matter")
    if str(data.get("id", original.id)) != original.id:
        raise user_error(
            f"the id cannot be changed by editing (it was {original.id!r})",
            f"remember the record under the new id, then 'eidetic forget {original.id}'",
        )
    lifecycle = data.pop("lifecycle", original.lifecycle)
    if lifecycle != original.lifecycle:
        raise user_error(
            f"editing cannot change the lifecycle ({original.lifecycle} -> {lifecycle})",
            "use 'eidetic forget ID' to archive a record and 'eidetic restore ID' to make it active",
        )
    if data.pop("history", None) != (jsonable([c.to_dict() for c in original.history]) or None):
        raise user_error(
            "editing cannot change the history (the dated lifecycle changes)",
            "eidetic writes it when a record is forgotten, restored or superseded; leave those lines as they are",
        )
    data.pop("updated", None)  # the save stamps it
    data.setdefault("added_by", None)  # a deleted line clears it (remember would fill in a default)
    return {**data, "id": original.id, "text": body}
