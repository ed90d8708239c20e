"""``eidetic log``: the write log a server keeps (``team.write_log``): who changed which
records, when, newest first. Read-only; it shows ids and names, never a record's text."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import user_error
from .output import emit_json, emit_text
from .render import Column, Style, one_line, table, terminal_width
from .stores import open_memory

if TYPE_CHECKING:
    from ..team.write_log import Entry

DEFAULT_LIMIT = 50


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "log",
        help="who changed what through eidetic serve: member, time, operation, ids (newest first)",
        description="Show the write log of the store the flags name: every change made through "
        "`eidetic serve` (remember, supersede, forget, restore, edit, sweep), with who made it, "
        "when (UTC) and the ids it changed, newest first; never a record's text. A postgres store "
        "keeps it in its database, every other in write-log.jsonl in the state folder.",
    )
    parser.add_argument(
        "--member", metavar="NAME", help="only this member's writes ('(server)': a one-identity server's)"
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only writes on or after this: an ISO date, 7d / 12h / 2w / 3mo / 1y back, or 'last monday'",
    )
    parser.add_argument("--id", metavar="ID", help="only writes that changed this record")
    parser.add_argument("--operation", metavar="OP", help="only this operation (remember, forget, edit...)")
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="N", help=f"at most N entries (default {DEFAULT_LIMIT})"
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from ..ranking.filters import date_bound
    from ..team.write_log import Wanted, open_book

    if args.limit < 1:
        raise user_error(f"--limit must be 1 or more, not {args.limit}", "e.g. --limit 200")
    since = date_bound(args.since, "since", None)
    wanted = Wanted(
        member=args.member,
        operation=args.operation,
        id=args.id,
        since=None if since is None else datetime.fromtimestamp(since, UTC),
        limit=args.limit + 1,  # one more: whether there are more
    )
    with open_memory(args, progress=False) as memory:
        book = open_book(memory)
        try:
            found = book.read(wanted)
        finally:
            book.close()
    entries, more = found[: args.limit], len(found) > args.limit
    if args.json:
        emit_json({"log": book.where, "items": [e.to_dict() for e in entries], "more": more})
        return 0
    emit_text(render(entries, more, book.where, Style.for_stdout(args.settings)))
    return 0


def render(entries: list[Entry], more: bool, where: str, style: Style) -> str:
    """A table, newest first, and where the log is; a note when the limit left entries out."""
    if not entries:
        return f"no writes logged that match (log: {where})"
    columns = [
        Column("TIME", style=("dim",)),
        Column("MEMBER", least=8, style=("cyan",)),
        Column("OPERATION"),
        Column("SCOPE", least=7),
        Column("IDS", least=12),
    ]
    rows = [
        [e.time, one_line(e.member), one_line(e.operation), one_line(e.scope), one_line(" ".join(e.ids))]
        for e in entries
    ]
    shown = table(columns, rows, terminal_width(), style)
    tail = f"{len(entries)} newest shown; --limit to see more" if more else f"{len(entries)} shown"
    return f"{shown}\n\n{tail} (log: {where})"
