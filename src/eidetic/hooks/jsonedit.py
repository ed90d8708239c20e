"""Small edits to a JSON text that leave every other byte as it was: a member appended to an
object, an element to an array, one removed. What a person wrote (spacing, order, unknown keys,
other tools' entries) stays byte for byte; the new text follows the file's own indentation. A value
can be replaced in place.

Positions come from the standard library's decoder (``raw_decode`` and ``scanstring``), so the
text is read exactly as ``json.loads`` reads it. Pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


@dataclass(frozen=True)
class Child:
    """A member of an object (``key`` set) or an element of an array: its span and its value."""

    key: str | None
    start: int
    end: int
    value_start: int
    value: Any


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def children(text: str, at: int) -> list[Child]:
    """The members or elements of the object or array whose bracket is at ``at``."""
    found: list[Child] = []
    is_object = text[at] == "{"
    at = _skip(text, at + 1)
    while text[at] not in "]}":
        start, key = at, None
        if is_object:
            key, at = scanstring(text, at + 1)
            at = _skip(text, _skip(text, at) + 1)  # past the colon
        value, end = _DECODER.raw_decode(text, at)
        found.append(Child(key, start, end, at, value))
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return found


def member(text: str, at: int, key: str) -> Child | None:
    return next((child for child in children(text, at) if child.key == key), None)


def closing(text: str, at: int) -> int:
    """The index just past the object or array whose bracket is at ``at``."""
    return _DECODER.raw_decode(text, at)[1]


def append(text: str, at: int, value: Any, key: str | None = None) -> str:
    """``text`` with ``value`` (as member ``key`` of an object) added last to the container at ``at``."""
    unit = indent_unit(text)
    kids = children(text, at)
    end = closing(text, at)
    if kids:
        last = kids[-1]
        own = _line_indent(text, last.start)
        if own is None:  # written on one line: stay on it
            return text[: last.end] + ", " + _render(value, key, None) + text[last.end :]
        return text[: last.end] + ",\n" + own + _render(value, key, own, unit) + text[last.end :]
    outer = _line_indent(text, at, anywhere=True) or ""
    if "\n" not in text.strip():
        return text[: at + 1] + _render(value, key, None) + text[end - 1 :]
    inner = outer + unit
    return text[: at + 1] + "\n" + inner + _render(value, key, inner, unit) + "\n" + outer + text[end - 1 :]


def replace(text: str, child: Child, value: Any) -> str:
    """``text`` with ``child``'s value written as ``value`` (its key and everything around kept)."""
    return text[: child.value_start] + json.dumps(value, ensure_ascii=False) + text[child.end :]


def remove(text: str, at: int, index: int) -> str:
    """``text`` without the ``index``-th child of the container at ``at`` (and its comma)."""
    kids = children(text, at)
    if len(kids) == 1:
        return text[: at + 1] + text[closing(text, at) - 1 :]
    if index > 0:
        return text[: kids[index - 1].end] + text[kids[index].end :]
    return text[: kids[0].start] + text[kids[1].start :]


def indent_unit(text: str) -> str:
    """The file's indentation step: the leading whitespace of its first indented line; else 2 spaces."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            return line[: len(line) - len(stripped)]
    return "  "


def _line_indent(text: str, at: int, anywhere: bool = False) -> str | None:
    """The whitespace before ``at`` on its line, if only whitespace precedes it (``anywhere``:
    the line's leading whitespace whatever follows it)."""
    line_start = text.rfind("\n", 0, at) + 1
    before = text[line_start:at]
    if not before.strip(" \t"):
        return before
    if anywhere:
        return before[: len(before) - len(before.lstrip(" \t"))]
    return None


def _render(value: Any, key: str | None, indent: str | None, unit: str = "  ") -> str:
    if indent is None:
        body = json.dumps(value, ensure_ascii=False)
    else:
        body = json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", "\n" + indent)
    return body if key is None else json.dumps(key, ensure_ascii=False) + ": " + body
