"""What ``eidetic remember`` was given: a JSON record, or plain text with record flags.

An argument whose first non-blank character is ``{`` is a JSON record: it must parse as one
object, and one that does not is an error (it is never quietly stored as a note); anything else
is the text of a new record. ``--text`` always takes its value as text, braces and all.
"""

from __future__ import annotations

import argparse
from json import JSONDecodeError
from typing import Any

from ..errors import user_error
from ..record_intake import load_json

# flag dest -> how a user spells it: the fields a text record takes from flags
RECORD_FLAGS = {
    "id": "--id",
    "type": "--type",
    "name": "--name",
    "description": "--description",
    "meta": "--meta",
    "link": "--link",
    "supersedes": "--supersedes",
}


def add_record_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--text", help="the record's text, taken as text even if it starts with '{'")
    parser.add_argument("--id", help="the record's id (default: derived from its scope and text)")
    parser.add_argument("--type", help="the record's type (default: note)")
    parser.add_argument("--name", help="a short name")
    parser.add_argument("--description", help="a one-line description")
    parser.add_argument(
        "--meta",
        action="append",
        metavar="KEY=VALUE",
        help="metadata, typed as --filter reads it (3, 2.5, true, null; else text); "
        "a key given twice holds a list (repeatable)",
    )
    parser.add_argument("--link", action="append", metavar="ID", help="the id of a related record (repeatable)")
    parser.add_argument("--supersedes", metavar="ID", help="the id of the record this one replaces")


def given_records(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """The records of the command line, or None when they come from stdin (NDJSON)."""
    flags = [flag for dest, flag in RECORD_FLAGS.items() if getattr(args, dest) is not None]
    if args.text is not None and args.record is not None:
        raise user_error("both a record argument and --text were given", "give the text once; nothing was written")
    text = args.text
    if text is None and args.record is not None:
        raw = json_record(args.record)
        if raw is None:
            text = args.record
        elif flags:
            raise _flags_need_text(flags, "in the JSON record")
        else:
            return [raw]
    if text is None:
        if flags:
            raise _flags_need_text(flags, "in each NDJSON line")
        return None
    return [text_record(text, args)]


def json_record(argument: str) -> dict[str, Any] | None:
    """The JSON object an argument holds, or None when it is text (it does not start with '{')."""
    if not argument.lstrip().startswith("{"):
        return None
    try:
        raw = load_json(argument)
    except JSONDecodeError as exc:
        raise user_error(
            f"the argument starts with '{{' but is not a JSON object ({exc.msg} at column {exc.colno})",
            'fix the JSON, e.g. \'{"text": "..."}\', or pass text that starts with a brace as --text "..."; '
            "nothing was written",
        ) from None
    return raw


def text_record(text: str, args: argparse.Namespace) -> dict[str, Any]:
    """A record in the JSON format from text and the record flags (validated like any other)."""
    raw: dict[str, Any] = {"text": text}
    for key in ("id", "type", "name", "description", "supersedes"):
        if getattr(args, key) is not None:
            raw[key] = getattr(args, key)
    if args.link:
        raw["links"] = list(args.link)
    if args.meta:
        raw["metadata"] = parse_meta(args.meta)
    return raw


def parse_meta(specs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as metadata: values typed as ``--filter`` types them; a key given
    more than once collects its values in a list (``--meta tag=a --meta tag=b``)."""
    from ..ranking.filters import typed_value

    values: dict[str, list[Any]] = {}
    for spec in specs:
        key, sep, raw = spec.partition("=")
        key = key.strip()
        if not sep or not key:
            raise user_error(f"malformed --meta {spec!r}", "give KEY=VALUE, e.g. --meta source=retro --meta priority=2")
        values.setdefault(key, []).append(typed_value(raw))
    return {key: found[0] if len(found) == 1 else found for key, found in values.items()}


def _flags_need_text(flags: list[str], where: str) -> Exception:
    return user_error(
        f"{', '.join(flags)}: only with a text argument, not with a JSON record",
        f"put the field(s) {where} instead; nothing was written",
    )
