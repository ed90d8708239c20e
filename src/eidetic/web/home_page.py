"""The home page (``GET /`` without a search): where to start. The records written last, the
most and the never recalled, counts by type and scope (from the overview's latest report), and,
while the session sees no record at all, how to remember the first one. Every list is a
listing (``Memory.list_records``, in each store's SQL), so the page stays quick on a large
store; none of it is a recall."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..listing import ListQuery
from ..results import ListedRecord
from ..session import Session

SHOWN = 6  # records in each of the home page's lists; the overview and browse have the rest


@dataclass(frozen=True)
class Home:
    recent: list[ListedRecord]
    most_recalled: list[ListedRecord]
    never_recalled: list[ListedRecord]
    active: int  # active records the session sees
    hidden: dict[str, int]  # when none is active: how many archived or shadowed there are


def gather(session: Session) -> Home:
    """The home page's lists, as the session sees them (on its worker thread)."""
    scope, memory = session.scope, session.memory

    def top(**order: Any) -> ListQuery:
        return ListQuery(scope=scope.name, visibility=scope.visibility, limit=SHOWN, **order)

    recent = memory.list_records(top(sort="updated"))
    most = memory.list_records(top(sort="recalled")).items
    never = memory.list_records(top(sort="recalled", reverse=True)).items
    return Home(
        recent.items,
        [item for item in most if item.recall_count > 0],
        [item for item in never if not item.recall_count],
        recent.total,
        recent.hidden,
    )
