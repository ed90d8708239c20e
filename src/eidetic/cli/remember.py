"""``eidetic remember``: plain text or one JSON object as an argument, or NDJSON on stdin; then
what happened to each record (new, updated, unchanged, a duplicate of which, close to which)
and where it lives."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..errors import user_error
from ..records import DEFAULT_SCOPE_NAME
from .output import emit_json, emit_text, inform, warn
from .record_input import add_record_flags, given_records
from .stores import open_memory

LISTED = 50  # records listed one per line in the human output; --json lists them all


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "remember",
        help="store records (text or a JSON argument, or NDJSON on stdin)",
        description="Upsert records by id. An argument starting with '{' is a JSON record; any other "
        "argument is the text of a record, described by the flags below. Without an argument, "
        "NDJSON is read from stdin. The whole batch is validated before anything is written. A new "
        "record whose meaning is already in its scope is reported with the records it is close to "
        "(similar_to); --on-similar says what it does. A public record that holds what looks like a credential "
        "is refused (exit 1, naming the record and the kind, never the secret); a private one is written "
        "with a warning.",
    )
    parser.add_argument(
        "record", nargs="?", help="the text to remember, or one JSON object; omit to read NDJSON from stdin"
    )
    add_record_flags(parser)
    parser.add_argument("--scope", help="scope name for records without one (default: default)")
    parser.add_argument("--visibility", help="public (default) or private")
    parser.add_argument("--added-by", help="attribution (default: nick from culture.yaml)")
    parser.add_argument(
        "--no-embed",
        action="store_true",
        help="do not compute vectors now (the first semantic recall does); near-duplicates are then "
        "judged by text alone",
    )
    parser.add_argument(
        "--on-similar",
        default="write",
        metavar="write|skip|supersede",
        help="a new record close to one already in its scope (reported as similar_to): write it "
        "anyway (default), skip it, or write it to supersede the closest",
    )
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="write a public record even when it holds what looks like a credential (an API key, a token, "
        "a private key, a password); refused by default, since public records are shared",
    )
    add_common(parser)
    parser.set_defaults(run=run, creates_store=True)


def run(args: argparse.Namespace) -> int:
    records = given_records(args)
    if records is None and (sys.stdin is None or sys.stdin.isatty()):
        raise user_error(
            "no record given", 'pass the text, a JSON object, or pipe NDJSON on stdin: eidetic remember "..."'
        )
    with open_memory(args) as memory:
        options = {
            "scope": args.scope,
            "visibility": args.visibility,
            "added_by": args.added_by,
            "embed": not args.no_embed,
            "on_similar": args.on_similar,
            "allow_secrets": args.allow_secrets,
        }
        if records is not None:
            result = memory.remember(records, **options)
        else:
            result = memory.remember_ndjson(sys.stdin, **options)
    for message in result.warnings:
        warn(message, args.json)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit_text(render_text(result.items))
    if private := out_of_plain_reach(args, records, result.ids):
        sys.stdout.flush()  # on a terminal, the note comes after the line it is about
        inform(private, args.json)
    return 0


def out_of_plain_reach(args: argparse.Namespace, records: list[dict[str, Any]] | None, ids: list[str]) -> str:
    """A note when the record just written as private is out of reach of the same commands
    without scope flags (``eidetic show ID``): the flags that reach it, and the config file lines
    that make them the default. Empty when it is in reach, names its own scope or came on stdin."""
    if args.visibility != "private" or not records or any("scope" in raw for raw in records):
        return ""
    scope = args.scope or DEFAULT_SCOPE_NAME
    name, visibility = args.reads_as
    if (name or DEFAULT_SCOPE_NAME, visibility) == (scope, "private"):
        return ""
    flags = f"--scope {shlex.quote(scope)} --visibility private"
    if len(ids) == 1:
        what, read = f"{ids[0]} is", f"read it back with: eidetic show {shlex.quote(ids[0])} {flags}"
    else:
        what, read = "these are", f"list them with: eidetic list {flags}"
    return (
        f"{what} private to scope {scope}; {read}\n"
        f'to read your private records without flags, set scope = "{scope}" and visibility = "private" '
        "in your config file ('eidetic config' names it)"
    )


def render_text(records: list[dict[str, Any]]) -> str:
    """One line per record (its status, id and where it lives), then the counts of a batch."""
    lines = [_line(entry) for entry in records[:LISTED]]
    if len(records) > LISTED:
        lines.append(f"... and {len(records) - LISTED} more (--json lists every record)")
        if near := sum(1 for entry in records[LISTED:] if entry.get("similar_to")):
            lines.append(f"    {near} of them with near-duplicates in their scope (--json names them)")
    if len(records) != 1:
        counts: dict[str, int] = {}
        for entry in records:
            counts[entry["status"]] = counts.get(entry["status"], 0) + 1
        states = ("new", "updated", "unchanged", "duplicate", "similar")
        summary = ", ".join(f"{counts[s]} {s}" for s in states if s in counts)
        lines.append(f"{len(records)} record(s): {summary or 'none'}.")
    return "\n".join(lines)


def _line(entry: dict[str, Any]) -> str:
    where = entry.get("path") or " ".join(str(entry[key]) for key in ("backend", "store") if entry.get(key))
    if entry["status"] == "duplicate":
        line = f"duplicate  {entry['id']}: same text as {entry['duplicate_of']}, not written ({where})"
    elif entry["status"] == "similar":
        line = f"similar    {entry['id']}: close to {_close(entry)}, not written ({where})"
    else:
        line = f"{entry['status']:<9}  {entry['id']}  {where}"
        if entry.get("similar_to"):
            line += f"\n           similar to {_close(entry)}"
    if entry.get("shadowed"):
        line += f"\n           supersedes {entry['shadowed']}, now shadowed"
    return line


def _close(entry: dict[str, Any]) -> str:
    """The near-duplicates of an entry, with their scores: ``n1 (0.97), n2 (0.95)``."""
    return ", ".join(f"{near['id']} ({near['score']:.2f})" for near in entry["similar_to"])
