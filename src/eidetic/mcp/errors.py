"""Errors of the MCP tools in MCP terms: the arguments as the tools name them (``top_k``, never the
CLI's ``--top-k``), one short line each, with no validation library's dump.

A model reads these to correct its call, so each says which argument is wrong, what it must be,
what was sent, and (as a ``hint:`` line) what the argument is for. Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import EideticError

# pydantic error types -> what the argument must be
_KINDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
}
_SHOWN = 40  # characters of a rejected value echoed back


def error_text(error: EideticError) -> str:
    """An eidetic error as the tool's error text: the message, then its hint, options named as
    the tools' arguments (``"top_k": 5``)."""
    error = error.spelled(str, lambda option, value: json.dumps({option: value}, ensure_ascii=False)[1:-1])
    return error.message + (f"\nhint: {error.remediation}" if error.remediation else "")


def unknown_arguments(tool: str, given: set[str], schema: dict[str, Any], unlisted: Sequence[str] = ()) -> str | None:
    """The error text for arguments ``tool`` does not take (``schema``: all it takes, of which
    its listing leaves out ``unlisted``), or None when there are none."""
    known = list(schema.get("properties", {}))
    unknown = sorted(given - set(known))
    if not unknown:
        return None
    names = ", ".join(repr(name) for name in unknown)
    listed = ", ".join(name for name in known if name not in unlisted)
    also = f"; also, unlisted: {', '.join(unlisted)}" if unlisted else ""
    return f"unknown argument{'s' if len(unknown) > 1 else ''} {names}\nhint: {tool} takes {listed}{also}"


def invalid_arguments(errors: Sequence[Mapping[str, Any]], schema: dict[str, Any]) -> str:
    """Validation errors (pydantic's ``errors()``) as one short line per argument, and a hint that
    says what the first one is for (its description in the tool's schema)."""
    wanted: dict[str, list[str]] = {}
    sent: dict[str, Any] = {}
    for error in errors:
        where = _where(error["loc"])
        kind = _kind(error)
        if kind not in wanted.setdefault(where, []):
            wanted[where].append(kind)
        if error["type"] != "missing":
            sent.setdefault(where, error.get("input"))
    lines = []
    for where, kinds in wanted.items():
        line = f"{where} is required" if kinds == ["required"] else f"{where} must be " + " or ".join(kinds)
        if where in sent:
            line += f" (got {_short(sent[where])})"
        lines.append(line)
    first = next(iter(wanted)).split("[")[0]
    about = schema.get("properties", {}).get(first, {}).get("description")
    return "; ".join(lines) + (f"\nhint: {first}: {about}" if about else "")


def _where(loc: tuple[Any, ...]) -> str:
    """``("filters", 0)`` -> ``filters[0]``; the type names pydantic adds for unions are left out."""
    return str(loc[0]) + "".join(f"[{part}]" for part in loc[1:] if isinstance(part, int))


def _kind(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "required"
    if error["type"] == "literal_error":
        return "one of " + str(error.get("ctx", {}).get("expected", "the listed values"))
    return _KINDS.get(error["type"]) or str(error.get("msg", "valid")).lower().removeprefix("input should be ")


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."
