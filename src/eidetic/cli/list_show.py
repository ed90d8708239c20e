"""``eidetic list`` and ``eidetic show ID``: see what is stored, and one record in full with its
file (or database) and connections. Neither counts as a recall."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .clock_text import clock_facts
from .output import emit_json, emit_text, warn
from .recall import add_option
from .render import (
    Column,
    Style,
    add_format,
    chosen_format,
    count,
    inert,
    markdown_table,
    no_results,
    one_line,
    table,
    terminal_width,
    when,
)
from .stores import open_memory

TEXT_LINES = 2  # a record's text on a terminal: its first lines (a listing is scanned, a recall read)


def add_parser(sub, add_common) -> None:
    from ..listing import ListQuery, list_options

    listing = sub.add_parser(
        "list",
        help="list records, newest first (filters like recall's; not counted as a recall)",
        description="List the records your scope may see, sorted and paged. Listing is not a recall: "
        "it changes no usage count.",
    )
    for option in list_options():
        add_option(listing, option, ListQuery)
    add_format(listing, ("table", "markdown", "json"), "table")
    add_common(listing)
    listing.set_defaults(run=run_list)
    show = sub.add_parser(
        "show",
        help="one record in full: its file, usage and links (not counted as a recall)",
        description="Show one record: every field, its text in full, where it is stored, its usage and "
        "the records it links to and that link to it. Showing is not a recall.",
    )
    show.add_argument("id", help="the record id")
    show.add_argument("--scope", help="your scope name (to reach a private record)")
    show.add_argument("--visibility", help="public (default) or private")
    add_common(show)
    show.set_defaults(run=run_show)


def run_list(args: argparse.Namespace) -> int:
    from ..listing import ListQuery, list_options

    shape = chosen_format(args, "table")
    query = ListQuery(**{option.name: getattr(args, option.name) for option in list_options()})
    with open_memory(args) as memory:
        result = memory.list_records(query).to_dict()
        typos = memory.type_warnings(query.types, query.with_access_defaults(args.settings).access())
    for message in typos:
        warn(message, args.json)
    if shape == "json":
        emit_json(result)
        return 0
    if not result["items"]:
        emit_text(
            no_results(result.get("hidden", {})) if not result["total"] else f"(none here: {_page(result, query)})"
        )
        return 0
    dated = "created" if query.sort == "created" else "updated"  # the date the order goes by
    rows = [
        [
            one_line(item["id"]),
            one_line(item["type"]),
            _label(item),
            when(item["created"] if dated == "created" else item["updated"] or item["created"]),
            count(item["recall_count"]),
        ]
        for item in result["items"]
    ]
    if shape == "markdown":
        emit_text(markdown_table(["id", "type", "name / text", dated, "recalls"], rows) + "\n\n" + _page(result, query))
        return 0
    style = Style.for_stdout(args.settings)
    columns = [Column("ID", least=8, style=("cyan",)), Column("TYPE", least=4)]
    date = Column(dated.upper(), style=("dim",))
    width = terminal_width()
    if width is None:  # a pipe: one line a record, every cell whole
        columns += [Column("NAME / TEXT", least=12), date, Column("RECALLS", right=True)]
        shown = table(columns, rows, width, style)
    else:
        from .text_table import named, scope_of, text_table

        columns += [Column("SCOPE", least=7), date, Column("RECALLS", right=True, spare=True)]
        facts = [[*row[:2], scope_of(item), *row[3:]] for row, item in zip(rows, result["items"])]
        texts = [named(item) for item in result["items"]]
        shown = "\n".join(text_table(columns, facts, texts, width, style, TEXT_LINES)[0])
    emit_text(shown + "\n" + style(_page(result, query), "dim"))
    return 0


def _label(item: dict[str, Any]) -> str:
    label = one_line(item.get("name") or item["text"])
    return label if item["lifecycle"] == "active" else f"[{item['lifecycle']}] {label}"


def _page(result: dict[str, Any], query: Any) -> str:
    """Which records of how many these are, and the flag for the next page."""
    shown, total, first = len(result["items"]), result["total"], query.offset + 1
    line = f"{first}-{first + shown - 1} of {total}" if shown else f"{total} in all, none from {first}"
    if query.offset + shown < total:
        line += f" (--offset {query.offset + shown} for more)"
    return line


def run_show(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        view = memory.show(args.id, scope=args.scope, visibility=args.visibility).to_dict()
    if args.json:
        emit_json(view)
    else:
        emit_text(render_view(view, Style.for_stdout(args.settings)))
    return 0


def _ref(ref: dict[str, Any]) -> str:
    if not ref["found"]:
        return f"{one_line(ref['id'])} (not found)"
    facts = [ref["type"], *([f'"{one_line(ref["name"])}"'] if ref.get("name") else [])]
    if ref["lifecycle"] != "active":
        facts.append(ref["lifecycle"])
    return f"{one_line(ref['id'])} ({', '.join(facts)})"


def render_view(view: dict[str, Any], style: Style) -> str:
    """Every field, labelled, then the text in full."""
    store, links = view["store"], view["connections"]
    where = ("file", view["path"]) if view["path"] else (f"{store['backend']} store", store["location"])
    usage = f"{count(view['recall_count'])}x" + (f", last {view['last_recall']}" if view["last_recall"] else "")
    facts = [
        ("type", view["type"]),
        ("name", view["name"]),
        ("description", view["description"]),
        ("scope", f"{view['scope']['name']}/{view['scope']['visibility']}"),
        ("lifecycle", view["lifecycle"]),
        ("created", view["created"]),
        ("updated", view["updated"]),
        *clock_facts(view),
        ("added by", view["added_by"]),
        ("recalled", usage if view["recall_count"] else "never"),
        where,
        ("supersedes", _ref(links["supersedes"]) if links["supersedes"] else None),
        ("superseded by", ", ".join(_ref(r) for r in links["superseded_by"])),
        ("links out", ", ".join(_ref(r) for r in links["links_out"])),
        ("links in", ", ".join(_ref(r) for r in links["links_in"])),
    ]
    lines = [style(one_line(view["id"]), "bold", "cyan")]
    lines += [f"  {style(f'{label:<14}', 'dim')}{one_line(value)}" for label, value in facts if value]
    for key, value in view["metadata"].items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"  {style('metadata', 'dim')}      {one_line(key)}: {one_line(shown)}")
    lines += ["", inert(view["text"])]
    return "\n".join(lines)
