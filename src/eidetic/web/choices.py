"""The typed filters' choices: the types and scope names the session may see, offered as lists
to pick from rather than boxes to type into (a typo there silently matched nothing). They come
from the overview's latest report (``overview_report``: made off the request path, other scopes'
private records never counted), so a page never reads every record to draw its form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams


@dataclass(frozen=True)
class Choices:
    types: list[str]
    scopes: list[str]  # scope names: a name stands for its public records and the session's own private ones
    counted: bool  # False while the first report is still being made (the lists hold only what was asked)


def choices_of(report: dict[str, Any] | None, params: QueryParams) -> Choices:
    """The choices from ``report`` (None: not made yet), with any value the address names kept
    (a type remembered since the report, a shared link), so a page always shows what it filters by."""
    types = set(report["types"]) if report else set()
    scopes = {entry["name"] for entry in report["scopes"]} if report else set()
    types.update(value.strip() for value in params.getlist("types") if value.strip())
    if asked := params.get("scope", "").strip():
        scopes.add(asked)
    return Choices(sorted(types), sorted(scopes), report is not None)
