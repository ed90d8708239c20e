"""Tables for a terminal that show what records say: each row's short facts in columns and its
text wrapped to the terminal's width, its first few lines. A wide terminal gets the text as the
last column; a narrow one (80 columns) under each row, across the width, where a column would
leave it a couple of dozen cells. Pipes keep ``render.table``'s one line a row.

Wrapping counts terminal cells (``render.width_of``), so wide characters wrap where they end on
screen: the standard library's ``textwrap`` counts code points.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .render import Column, Style, clip, fit, natural_widths, one_line, row_line, width_of

INDENT = 4  # text under its row starts here
SIDE_LEAST = 50  # the fewest cells a text column may have; fewer and the text goes under the row


def scope_of(item: dict[str, Any]) -> str:
    """A record's scope as the CLI writes it: ``name/visibility``."""
    return one_line(f"{item['scope']['name']}/{item['scope']['visibility']}")


def named(item: dict[str, Any]) -> tuple[str, str]:
    """A record's name and text for :func:`text_table`, the lifecycle marked when not active."""
    name, text = item.get("name") or "", item["text"]
    if item["lifecycle"] != "active":
        mark = f"[{item['lifecycle']}] "
        name, text = (mark + name, text) if name else ("", mark + text)
    return name, text


def wrap(text: str, cells: int, most: int) -> list[str]:
    """``text`` on lines of at most ``cells`` terminal cells, broken between words (a word
    longer than a line is cut), at most ``most`` lines; an ellipsis ends the last when text is
    left over. White space runs count as one space; control characters are shown as escapes."""
    lines: list[str] = []
    line = ""
    for word in one_line(text).split():
        if width_of(word) > cells:  # a word wider than a line (a URL, a hash): on lines of its own
            lines += [line] if line else []
            while width_of(word) > cells:
                head = _head(word, cells)
                lines.append(head)
                word = word[len(head) :]
            line = word
        elif line and width_of(line) + 1 + width_of(word) > cells:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    if len(lines) > most:
        lines, last = lines[:most], lines[most - 1]
        while width_of(last) + 2 > cells and " " in last:  # room for the mark: drop the last word
            last = last.rsplit(" ", 1)[0]
        lines[-1] = clip(last + " …", cells)
    return lines or [""]


def _head(word: str, cells: int) -> str:
    """The longest start of ``word`` that fits in ``cells`` (at least one character)."""
    used = 0
    for n, ch in enumerate(word):
        used += width_of(ch)
        if used > cells:
            return word[: max(n, 1)]
    return word


def text_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    texts: Sequence[tuple[str, str]],
    width: int,
    style: Style,
    most: int,
    header: str = "NAME / TEXT",
    dim_from: int | None = None,
) -> tuple[list[str], list[int]]:
    """The lines of a table ``width`` cells wide: ``rows`` under ``columns``, and each row's
    text, a ``(name, text)`` pair (the name, when there is one, leads in bold), in at most
    ``most`` lines. Rows from ``dim_from`` on are drawn dim (set apart). Returns the lines (the
    first is the header) and where each row's lines start among them, and after the last."""
    natural = natural_widths(columns, rows)
    room = width - sum(natural) - 2 * len(natural)
    apart = len(rows) if dim_from is None else dim_from
    side = room >= SIDE_LEAST
    if not side:
        columns, rows = _spared(columns, rows, width)
        natural = natural_widths(columns, rows)
    widths = natural if side else fit(columns, natural, width)
    head = row_line(columns, [c.header for c in columns], widths, style, header=True)
    lines, starts = [head + "  " + style(header, "bold") if side else head], []
    blank = [""] * len(columns)
    for n, (row, pair) in enumerate(zip(rows, texts)):
        dim = n >= apart
        starts.append(len(lines))
        if side:  # the text as the last column, ``room`` cells wide
            for k, shown in enumerate(_text(pair, room, most, style, dim)):
                cells = row_line(columns, row if k == 0 else blank, widths, style, dim=dim, strip=False)
                lines.append((cells + "  " + shown).rstrip())
        else:
            lines.append(row_line(columns, row, widths, style, dim=dim))
            lines += [" " * INDENT + shown for shown in _text(pair, width - INDENT, most, style, dim)]
    return lines, [*starts, len(lines)]


def _spared(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[Column], list[list[str]]]:
    """The columns and rows without the spare columns, last first, that leave the others too
    little room: at 80 columns a recall's scope reads better whole than its recall count."""
    keep = list(range(len(columns)))
    for n in reversed(keep[:]):
        widths = natural_widths([columns[k] for k in keep], [[row[k] for k in keep] for row in rows])
        if sum(widths) + 2 * (len(widths) - 1) <= width:
            break
        if columns[n].spare:
            keep.remove(n)
    return [columns[k] for k in keep], [[row[k] for k in keep] for row in rows]


def _text(pair: tuple[str, str], cells: int, most: int, style: Style, dim: bool) -> list[str]:
    """A row's name and text wrapped to ``cells``, the name bold (all of it dim when ``dim``)."""
    name, text = one_line(pair[0]), pair[1]
    lines = wrap(f"{name} — {text}" if name and text.strip() else name or text, cells, most)
    if dim:
        return [style(line, "dim") for line in lines]
    if name and lines[0].startswith(name):
        lines[0] = style(name, "bold") + lines[0][len(name) :]
    return lines
