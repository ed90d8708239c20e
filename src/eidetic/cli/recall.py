"""``eidetic recall QUERY``: ranked records with score, freshness signal and full metadata."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from functools import cache
from typing import Any

from .output import emit_json, emit_text, warn
from .render import add_format
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
    add_format(parser, ("table", "text", "markdown", "json"), "text")
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


@cache
def _hints(owner: type) -> dict[str, Any]:
    """A query class's resolved field types: resolving them costs ~1 ms, and every command's
    parser asks for each of ~40 options (the CLI's start-up)."""
    from typing import get_type_hints

    return get_type_hints(owner)


def add_option(parser: argparse.ArgumentParser, option, owner: type | None = None) -> None:
    """One field of a query (``owner``: RecallQuery, or ListQuery) as a flag: booleans are
    switches (``--no-record`` turns a true default off), tuples repeat, numbers are checked as
    the query checks them."""
    from typing import get_args

    from ..query import MODES, RecallQuery

    flag = option.metadata["flag"] or "--" + option.name.replace("_", "-")
    kind = _hints(owner or RecallQuery)[option.name]
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
            choices=MODES if option.name == "mode" else option.metadata["choices"],
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
    from . import recall_output
    from .render import Style, chosen_format, inert, terminal_width

    shape = chosen_format(args, "text")
    with open_memory(args) as memory:
        query = query_from(args, args.query)
        result = memory.recall(replace(query, judge_relevance=True))  # each hit says whether it is relevant
    for message in result.warnings:
        warn(message, args.json)
    bundle = result.to_dict()
    if shape == "json":
        emit_json(bundle)
    elif shape == "text":
        text = recall_output.render_text(bundle)
        emit_text(inert(text) if sys.stdout.isatty() else text)
    elif shape == "markdown":
        emit_text(recall_output.render_markdown(bundle))
    else:
        emit_text(recall_output.render_table(bundle, Style.for_stdout(args.settings), terminal_width()))
    return 0
