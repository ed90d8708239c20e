"""``eidetic recall QUERY``: ranked records with score, freshness signal and full metadata."""

from __future__ import annotations

import argparse
import json

from .output import emit_json, emit_text, warn
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "recall",
        help="find records verbatim, by keyword or by meaning",
        description="Recall records ranked by relevance and freshness.",
    )
    parser.add_argument("query", nargs="?", default="", help=_help("text"))
    for option in query_options():
        add_option(parser, option)
    add_common(parser)
    parser.set_defaults(run=run)


def query_options() -> list:
    """The recall options every interface offers (``query.RecallQuery``'s fields)."""
    from ..query import exposed_options

    return exposed_options()


def _help(name: str) -> str:
    from dataclasses import fields

    from ..query import RecallQuery

    return next(f.metadata["help"] for f in fields(RecallQuery) if f.name == name)


def add_option(parser: argparse.ArgumentParser, option) -> None:
    """One ``RecallQuery`` field as a flag: booleans are switches (``--no-record`` turns a true
    default off), tuples repeat, numbers are checked as the query checks them."""
    from typing import get_args, get_type_hints

    from ..query import MODES, RecallQuery

    flag = option.metadata["flag"] or "--" + option.name.replace("_", "-")
    kind = get_type_hints(RecallQuery)[option.name]
    base = next((t for t in get_args(kind) if t is not type(None)), kind)
    common = {"dest": option.name, "help": option.metadata["help"]}
    if kind is bool and option.default:  # a switch that turns a true default off
        parser.add_argument(flag, action="store_false", dest=option.name, help="do not " + option.metadata["help"])
    elif kind is bool:
        parser.add_argument(flag, action="store_true", **common)
    elif str(kind).startswith("tuple"):
        parser.add_argument(flag, action="append", metavar=option.metadata["metavar"], **common)
    else:
        convert = {int: _int, float: _float}.get(base, str)
        parser.add_argument(
            flag,
            type=convert,
            default=None if option.name in ("mode", "top_k") else option.default,  # None: the settings'
            metavar=option.metadata["metavar"],
            choices=MODES if option.name == "mode" else None,
            **common,
        )


def query_from(args: argparse.Namespace, text: str):  # -> RecallQuery
    from ..query import RecallQuery

    options = {option.name: getattr(args, option.name) for option in query_options()}
    return RecallQuery.configured(text, args.settings, **options)


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None


def run(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        result = memory.recall(query_from(args, args.query))
    for message in result.warnings:
        warn(message, args.json)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit_text(render_text(result.to_dict()))
    return 0


def render_text(bundle: dict) -> str:
    online = "online" if bundle["embedder"]["online"] else "offline"
    lines = [
        f"query: {bundle['query']}  mode: {bundle['mode']}  "
        f"truncated: {'yes' if bundle['truncated'] else 'no'}  embedder: {online}",
        "",
    ]
    if not bundle["items"]:
        lines.append("(no results)")
    for item in bundle["items"]:
        via = f" via={item['via']} parent={item['parent']}" if item["tier"] == "traversal" else ""
        lines.append(f"[{item['tier']} depth={item['depth']}{via}] id: {item['id']}")
        lines.append(
            f"score: {item['score']:.4f}  signal: {item['signal']:.3f}  "
            f"type: {item['type']}  scope: {item['scope']['name']}/{item['scope']['visibility']}"
            f"  lifecycle: {item['lifecycle']}"
        )
        if item.get("name"):
            lines.append(f"name: {item['name']}")
        if item.get("description"):
            lines.append(f"description: {item['description']}")
        lines.append(f"text: {item['text']}")
        lines.append(
            f"created: {item['created']}  recalled: {item['recall_count']}x"
            + (f", last {item['last_recall']}" if item["last_recall"] else "")
        )
        for key, value in item["metadata"].items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"  {key}: {shown}")
        if item.get("explain"):
            from .score_text import explain_lines

            lines += ["  explain: " + line for line in explain_lines(item["explain"], item["score"])]
        lines.append("")
    return "\n".join(lines).rstrip("\n")
