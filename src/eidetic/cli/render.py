"""Output formats for people: tables that fit the terminal, markdown, and colour.

Colour only when stdout is a terminal, ``NO_COLOR`` is unset (or empty) and ``TERM`` is not
``dumb``: a pipe never gets an escape code. Whatever a record holds is printed inert: control
characters (an ESC in a hostile record's text could drive the terminal) become visible escapes.
Plain ANSI codes, no library: ``rich`` would add ~70 ms to every command's start
(docs/architecture.md).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import user_error
from ..settings import Settings

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CODES = {"bold": "1", "dim": "2", "cyan": "36", "yellow": "33", "green": "32"}


def add_format(parser: argparse.ArgumentParser, choices: tuple[str, ...], piped: str) -> None:
    parser.add_argument(
        "--format",
        choices=choices,
        help=f"{', '.join(choices[:-1])} or json (the same as --json); default: table"
        + ("" if piped == "table" else f" on a terminal, {piped} in a pipe"),
    )


def chosen_format(args: argparse.Namespace, piped: str) -> str:
    """The format asked for (``--json`` is ``--format json``), else table on a terminal and
    ``piped`` elsewhere."""
    wanted = getattr(args, "format", None)
    if args.json and wanted not in (None, "json"):
        raise user_error(f"--json and --format {wanted} ask for two formats", "give one of them")
    if args.json or wanted:
        return "json" if args.json else str(wanted)
    return "table" if sys.stdout.isatty() else piped


@dataclass(frozen=True)
class Style:
    """ANSI styling, or none."""

    colour: bool = False

    @classmethod
    def for_stdout(cls, settings: Settings) -> Style:
        return cls(sys.stdout.isatty() and settings.colour_allowed)

    def __call__(self, text: str, *styles: str) -> str:
        if not self.colour or not styles or not text:
            return text
        return f"\x1b[{';'.join(_CODES[s] for s in styles)}m{text}\x1b[0m"


def inert(text: str) -> str:
    """``text`` with control characters shown as escapes (newlines and tabs kept)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def one_line(text: str | None) -> str:
    """``text`` on one line: runs of white space as one space, controls made visible."""
    return inert(" ".join((text or "").split()))


def width_of(text: str) -> int:
    """Terminal cells: wide (East Asian) characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def clip(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells, an ellipsis marking the cut."""
    if width_of(text) <= cells:
        return text
    out, used = [], 0
    for ch in text:
        need = width_of(ch)
        if used + need > cells - 1:
            break
        out.append(ch)
        used += need
    return "".join(out) + "…"


@dataclass(frozen=True)
class Column:
    header: str
    least: int = 0  # narrowest it may get when the table must fit (0: never cut)
    right: bool = False
    style: tuple[str, ...] = ()
    spare: bool = False  # a narrow terminal's wrapped table may leave it out (``text_table``)


def table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    width: int | None,
    style: Style,
    dim_from: int | None = None,
) -> str:
    """Rows under a header, two spaces apart; with a ``width`` (a terminal's), the columns that
    may be cut shrink, last first, until the table fits. Rows from ``dim_from`` on are drawn dim
    whatever their columns' colours (rows set apart)."""
    widths = natural_widths(columns, rows)
    if width is not None:
        widths = fit(columns, widths, width)
    lines = [row_line(columns, [c.header for c in columns], widths, style, header=True)]
    apart = len(rows) if dim_from is None else dim_from
    lines += [row_line(columns, row, widths, style, dim=n >= apart) for n, row in enumerate(rows)]
    return "\n".join(lines)


def natural_widths(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's width with no cell cut."""
    return [max([width_of(c.header), *(width_of(row[n]) for row in rows)]) for n, c in enumerate(columns)]


def fit(columns: Sequence[Column], widths: list[int], width: int) -> list[int]:
    """``widths`` narrowed to fit ``width`` cells: the columns that may be cut shrink, last
    first, down to their ``least``."""
    widths = list(widths)
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for n in reversed(range(len(columns))):
        if excess <= 0:
            break
        if columns[n].least:
            cut = min(excess, max(0, widths[n] - columns[n].least))
            widths[n] -= cut
            excess -= cut
    return widths


def row_line(
    columns: Sequence[Column],
    cells: Sequence[str],
    widths: list[int],
    style: Style,
    header: bool = False,
    dim: bool = False,
    strip: bool = True,
) -> str:
    """One line of a table: each cell cut and padded to its column's width (``strip``: no
    trailing blanks)."""
    out = []
    for column, cell, cells_wide in zip(columns, cells, widths):
        text = clip(cell, cells_wide)
        pad = " " * (cells_wide - width_of(text))
        shown = style(text, "bold") if header else style(text, "dim") if dim else style(text, *column.style)
        out.append(pad + shown if column.right else shown + pad)
    joined = "  ".join(out)
    return joined.rstrip() if strip else joined


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table; pipes in cells are escaped."""

    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def terminal_width() -> int | None:
    """The terminal's columns when stdout is one, else None: a pipe gets whole cells."""
    if not sys.stdout.isatty():
        return None
    import shutil

    return shutil.get_terminal_size((100, 24)).columns


def when(stamp: str | None) -> str:
    """An ISO time as a table shows it: date, hours and minutes."""
    if not stamp or stamp == "date-unknown":
        return "-"
    return stamp[:16].replace("T", " ")


def day(stamp: str | None) -> str:
    """An ISO time's date, as a narrow table shows it."""
    return when(stamp)[:10]


def count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def no_results(hidden: dict[str, int], below_floor: int = 0) -> str:
    """``(no results)``, and why: archived or shadowed records would have matched, or every hit
    fell below the relevance floor (nothing relevant is an answer too)."""
    parts = [
        f"{n} {state} record{'s match' if n != 1 else ' matches'} (--include-{state} shows {'them' if n != 1 else 'it'})"
        for state, n in sorted(hidden.items())
    ]
    if below_floor:
        hits = f"{below_floor} hit{'s' if below_floor != 1 else ''}"
        shown = "them" if below_floor != 1 else "it"
        parts.insert(0, f"{hits} fell below the relevance floor (--relevance-floor off shows {shown})")
        return "(nothing relevant: " + "; ".join(parts) + ")"
    return "(no results: " + "; ".join(parts) + ")" if parts else "(no results)"


def floor_note(bundle: dict[str, Any]) -> str:
    """What the relevance floor did, for a header or a footer ("" when it was off)."""
    if bundle.get("relevance_floor") is None:
        return ""
    below = bundle["below_floor"]
    hits = f"{below} hit{'s' if below != 1 else ''}"
    return f"relevance floor {bundle['relevance_floor']:g}: {hits} below it left out (--relevance-floor off shows all)"
