"""A page's query string as query options, read by the query's own field names and types, so a
new recall or listing option needs no change here; and the scope a request reads as."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Any

from starlette.datastructures import QueryParams

from ..records import Scope
from ..session import Session

TRUE = ("1", "on", "true", "yes")


def options_of(params: QueryParams, owner: type, names: Iterable[str]) -> dict[str, Any]:
    """The fields ``names`` of ``owner`` (``RecallQuery``, ``ListQuery``) given in ``params``: a
    switch is on for 1/on/true/yes, a list repeats, a number is parsed; empty values are left
    out. Invalid values are left for the query to refuse with its own message."""
    hints = typing.get_type_hints(owner)
    options: dict[str, Any] = {}
    for name in names:
        if name not in params:
            continue
        kind = hints[name]
        if kind is bool:
            options[name] = params.get(name, "").strip().lower() in TRUE
        elif typing.get_origin(kind) is tuple:
            options[name] = tuple(v.strip() for v in params.getlist(name) if v.strip())
        elif raw := params.get(name, "").strip():
            options[name] = _number(kind, raw)
    return options


def _number(kind: Any, raw: str) -> Any:
    """``raw`` as the field's number type; text that is not one is left as it is, for the query
    to refuse (``top_k must be an integer``)."""
    for number in (int, float):
        if kind is number or number in typing.get_args(kind):
            try:
                return number(raw)
            except ValueError:
                return raw
    return raw


def scope_of(session: Session, params: QueryParams) -> Scope:
    """The scope a request reads as: the session's unless it names another, never wider (the
    session decides). Another scope's name alone means its public records."""
    name = params.get("scope", "").strip() or None
    visibility = params.get("visibility", "").strip() or None
    if visibility is None and name is not None and name != session.scope.name:
        visibility = "public"
    return session.read_scope(name, visibility)
