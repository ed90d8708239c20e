"""The home page (``GET /`` without a search): where to start. The records written last (a
listing, ``Memory.list_records``, in each store's SQL: live), and from the overview's latest
report (``overview_report``, made off the request path) the counts by type and scope and the most
and never recalled records; while the session sees no record at all, how to remember the first
one. Ordering by recall count reads every record's usage (a quarter of a second at 100,000 on
sqlite), so those lists are the report's, never made on the request. None of it is a recall."""

from __future__ import annotations

from dataclasses import dataclass

from ..listing import ListQuery
from ..results import ListedRecord
from ..session import Session

SHOWN = 6  # records in each of the home page's lists; the overview and browse have the rest


@dataclass(frozen=True)
class Home:
    recent: list[ListedRecord]  # the report's lists are cut to as many (``shown``)
    active: int  # active records the session sees
    hidden: dict[str, int]  # when none is active: how many archived or shadowed there are
    shown: int = SHOWN


def gather(session: Session) -> Home:
    """The records written last, as the session sees them (on its worker thread)."""
    scope = session.scope
    recent = session.memory.list_records(ListQuery(scope=scope.name, visibility=scope.visibility, limit=SHOWN))
    return Home(recent.items, recent.total, recent.hidden)
