"""``MEMORY.md``, the index a coding agent keeps in its memory folder and reads first: one line
per memory, ``- [Title](file.md) — one-line hook``. Pure text in, text out.

eidetic revises it in place: the lines of the files a write touches are replaced, removed or
added at the end; every other line (headings, the user's notes, entries eidetic did not write)
stays byte for byte, with the file's own line endings.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote

from ...records import Record

NAME = "MEMORY.md"
MAX_LINE = 150  # the agent loads the whole index into its context: one short line each
MAX_TITLE = 80
MIN_HOOK = 20  # a hook cut shorter than this says too little to be worth its room
_ENTRY = re.compile(r"^\ufeff?(\s*[-*+]\s+)\[(?:\\.|[^\\\]])*\]\(\s*(<[^>\n]*>|[^)\s]+)")


def entry_line(record: Record, rel: str) -> str:
    """The index line of a record kept in the file ``rel`` (relative to the folder): its name
    (else its id) as the title, its description (else its text's first line) as the hook."""
    target = quote(rel, safe="/._-~")
    title = _clip(_one_line(record.name or record.id), min(MAX_TITLE, max(MAX_LINE - len(target) - 6, 20)))
    title = title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    line = f"- [{title}]({target})"
    hook = _one_line(record.description or _first_line(record.text))
    room = MAX_LINE - len(line) - 3
    if hook and hook != _one_line(record.name or "") and room >= MIN_HOOK:
        line += " — " + _clip(hook, room)
    return line


def target_of(line: str) -> str | None:
    """The file an index line links to (relative to the folder), None for any other line."""
    entry = _entry(line)
    return entry[1] if entry else None


def _entry(line: str) -> tuple[str, str] | None:
    """(the entry's indentation and bullet, the file it links to) of an index line, else None."""
    match = _ENTRY.match(line)
    if match is None:
        return None
    target = match.group(2)
    if target.startswith("<"):
        target = target[1:-1]
    target = unquote(target.split("#", 1)[0].strip())
    while target.startswith("./"):
        target = target[2:]
    return match.group(1), target


def revise(text: str, lines: dict[str, str | None]) -> str:
    """``text`` with each entry for a file in ``lines`` replaced by its new line (keeping the
    entry's indentation and bullet), or dropped when the new line is None; files without an
    entry get theirs appended. Other lines are kept exactly."""
    out: list[str] = []
    present: set[str] = set()
    pieces = text.split("\n")
    for number, raw in enumerate(pieces):
        body, cr = (raw[:-1], "\r") if raw.endswith("\r") else (raw, "")
        entry = _entry(body)
        if entry is None or entry[1] not in lines:
            out.append(raw)
            continue
        present.add(entry[1])
        new = lines[entry[1]]
        if new is not None:
            bom = "\ufeff" if body.startswith("\ufeff") else ""
            out.append(bom + entry[0] + new[2:] + cr)  # new[2:]: the line after its "- "
        elif number == len(pieces) - 1 and out:
            out.append("")  # the last line went: the one before it keeps its line break
    revised = "\n".join(out)
    added = [new for target, new in lines.items() if new is not None and target not in present]
    if not added:
        return revised
    newline = "\r\n" if "\r\n" in text else "\n"
    if revised and not revised.endswith("\n"):
        revised += newline
    return revised + "".join(line + newline for line in added)


def _one_line(text: str) -> str:
    """Whitespace (newlines included) collapsed to single spaces; control and format characters
    (bidi overrides among them) dropped."""
    text = "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf"))
    return " ".join(text.split())


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
