"""``eidetic sweep``, ``forget`` and ``restore``: the lifecycle verbs. Nothing is deleted
except by ``forget --purge``, which asks first."""

from __future__ import annotations

import argparse
import sys

from ..errors import user_error
from .output import emit_json, emit_text
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    sweep = sub.add_parser(
        "sweep",
        help="shadow superseded records, archive stale ones (never deletes)",
        description="Apply the lifecycle rules: a record superseded by one of its "
        "own scope is shadowed; one created over 365 days ago or with "
        "a freshness signal below 0.25 is archived; metadata.protected "
        "exempts. Same-scope duplicate texts are listed, not changed.",
    )
    sweep.add_argument("--dry-run", action="store_true", help="report what would change, write nothing")
    sweep.add_argument("--now", help="ISO time to judge ages at (default: the current time)")
    sweep.add_argument("--scope", help="your scope name: the report shows what it may see (default: default)")
    sweep.add_argument("--visibility", help="public (default) or private: private adds that scope's private records")
    add_common(sweep)
    sweep.set_defaults(run=run_sweep)
    for verb, help_text in (
        ("forget", "archive a record (undo with restore); --purge deletes it for good"),
        ("restore", "make an archived or shadowed record active again"),
    ):
        parser = sub.add_parser(verb, help=help_text, description=help_text)
        parser.add_argument("id", help="the record id")
        parser.add_argument("--scope", help="your scope name (to reach a private record)")
        parser.add_argument("--visibility", help="public (default) or private")
        if verb == "forget":
            parser.add_argument(
                "--purge", action="store_true", help="remove the file, index entries and usage for good"
            )
            parser.add_argument("--yes", action="store_true", help="do not ask before --purge")
        add_common(parser)
        parser.set_defaults(run=run_forget if verb == "forget" else run_restore)


def run_sweep(args: argparse.Namespace) -> int:
    from ..ranking.access import Access
    from ..timeutil import parse_ts

    now = None
    if args.now is not None:
        now = parse_ts(args.now)
        if now is None:
            raise user_error(f"--now is not an ISO-8601 time: {args.now!r}", "e.g. --now 2026-12-01T00:00:00Z")
    with open_memory(args) as memory:
        report = memory.sweep(Access.of(args.scope, args.visibility), dry_run=args.dry_run, now=now).to_dict()
    _with_store_flags(report, args)
    if args.json:
        emit_json(report)
        return 0
    lines = [
        f"Scanned {report['scanned']} record(s).",
        f"  shadowed: {report['shadowed']}",
        f"  archived: {report['archived']}",
    ]
    lines += [
        f"  {item['id']} -> {item['lifecycle']}" + (f"  (undo: {item['undo']})" if "undo" in item else "")
        for item in report["changed"]
    ]
    if report["dry_run"]:
        lines.append("(dry-run: no changes written)")
    if report["suggestions"]:
        lines.append(f"Suggestions ({len(report['suggestions'])}) — confirm manually:")
        for item in report["suggestions"]:
            lines.append(f"  - {item['reason']}: {', '.join(item['ids'])}")
            lines += [f"    to keep {item['keep']}: {command}" for command in item["commands"]]
    emit_text("\n".join(lines))
    return 0


def _with_store_flags(report: dict, args: argparse.Namespace) -> None:
    """The report's commands with the store flags of this command line (``with_store_flags``)."""
    for item in report["changed"]:
        if "undo" in item:
            item["undo"] = with_store_flags(item["undo"], args)
    for item in report["suggestions"]:
        item["commands"] = [with_store_flags(command, args) for command in item["commands"]]


def with_store_flags(command: str, args: argparse.Namespace) -> str:
    """``command`` (``eidetic VERB ...``) with the store flags of this command line
    (``--memory-dir``, ``--backend``, ``--db``), so it acts on the same store. A ``--dsn`` or ``--uri``
    is not repeated: either may hold a password (set EIDETIC_PG_DSN or EIDETIC_NEO4J_URI instead)."""
    import shlex

    flags = [*(w for d in args.memory_dir or () for w in ("--memory-dir", d))]
    flags += [w for flag, value in (("--backend", args.backend), ("--db", args.db)) if value for w in (flag, value)]
    if not flags:
        return command
    program, verb, rest = command.split(" ", 2)
    return f"{program} {verb} {shlex.join(flags)} {rest}"


def run_forget(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        if args.purge:
            if not args.yes:
                if args.json or sys.stdin is None or not sys.stdin.isatty():  # no one to ask
                    raise user_error(
                        f"refusing to purge {args.id!r} without confirmation",
                        "add --yes to delete it for good (forget without --purge archives it)",
                    )
                sys.stderr.write(f"Delete record {args.id!r} for good? Type its id to confirm: ")
                sys.stderr.flush()
                if sys.stdin.readline().strip() != args.id:
                    raise user_error("not confirmed; nothing was deleted", "type the record id exactly")
            report = memory.purge(args.id, scope=args.scope, visibility=args.visibility)
        else:
            report = memory.set_lifecycle(args.id, "archived", scope=args.scope, visibility=args.visibility)
    _print(args, report)
    return 0


def run_restore(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.set_lifecycle(args.id, "active", scope=args.scope, visibility=args.visibility)
    _print(args, report)
    return 0


def _print(args: argparse.Namespace, report: dict) -> None:
    if args.json:
        emit_json(report)
    elif report.get("purged"):
        emit_text(f"Purged {report['id']} ({report['path'] or report['store']}).")
    else:
        emit_text(f"{report['id']}: {report['previous']} -> {report['lifecycle']}")
