"""``eidetic import`` and ``eidetic export``: a store in and out as NDJSON, and the stores of
other tools (eidetic-cli JSONL stores, markdown memory folders) in.

Export writes every field a store holds, usage included, and import keeps them all (lifecycle,
created, updated, usage) through ``Memory.restore``: export then import is the same store.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import user_error
from ..importers import FORMATS
from ..stores.backends import SERVERS
from .output import emit_json, emit_text, inform, report_error, warn
from .overview_doctor import access_of, scope_flags
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    importer = sub.add_parser(
        "import",
        help="read records from NDJSON, an eidetic-cli store or a markdown memory folder",
        description="Import records with their lifecycle, dates and usage. Each record is validated as "
        "remember validates it; bad lines are reported (file and line) and the good ones "
        "imported; importing again writes nothing. Exit 1 when a line was skipped.",
    )
    importer.add_argument(
        "source",
        nargs="?",
        default="-",
        metavar="FILE|DIR|-",
        help="NDJSON file, eidetic-cli store folder, markdown folder; '-' or nothing: stdin",
    )
    importer.add_argument(
        "--format",
        choices=FORMATS,
        help="default: detected (a folder of *.jsonl: eidetic-cli; of .md: markdown; a file or stdin: ndjson)",
    )
    importer.add_argument("--scope", help="scope name for records that name none (default: default)")
    importer.add_argument("--visibility", help="public (default) or private, for records that name no scope")
    importer.add_argument(
        "--allow-secrets",
        action="store_true",
        help="import a public record even when it holds what looks like a credential (skipped by default)",
    )
    add_common(importer)
    importer.set_defaults(run=run_import, creates_store=True)

    export = sub.add_parser(
        "export",
        help="write the records you may see as NDJSON (what import reads); --all: a full backup",
        description="One record per line: the remember format plus lifecycle, updated, "
        "hash and usage (recall_count, last_recall), which import keeps and "
        "remember ignores. Without --all, only what your scope may see; how many records "
        "were written (and left out, as far as you may know of them) is said on stderr.",
    )
    scope_flags(export)
    export.add_argument("--active-only", action="store_true", help="leave out shadowed and archived records")
    export.add_argument(
        "--all",
        action="store_true",
        help="every record of every scope, visibility and lifecycle state, with usage: the store "
        "owner's full backup (import restores it exactly)",
    )
    export.add_argument(
        "--no-usage",
        action="store_true",
        help="leave out recall_count and last_recall (e.g. to share records, not how you used them)",
    )
    add_common(export)
    export.set_defaults(run=run_export)


def run_export(args: argparse.Namespace) -> int:
    if args.all:
        return _export_all(args)
    from ..importers.ndjson import export_line

    reach = access_of(args)  # every lifecycle state the scope may see
    wanted = type(reach)(reach.scope) if args.active_only else reach
    written, left_out = 0, {"shadowed": 0, "archived": 0}
    with open_memory(args) as memory:
        for record, usage in memory.export_all(reach):
            if wanted.admits(record.scope, record.lifecycle):
                sys.stdout.write(export_line(record, usage, with_usage=not args.no_usage))
                written += 1
            else:
                left_out[record.lifecycle] += 1
    scope = f"{reach.scope.name}/{reach.scope.visibility}"
    others = "other scopes' private records" if reach.scope.visibility == "private" else "private records"
    inform(
        f"exported {written} record(s) that scope {scope} may see; {others} are not exported (--all: a full backup)",
        args.json,
    )
    if any(left_out.values()):
        counts = " and ".join(f"{n} {state}" for state, n in left_out.items() if n)
        inform(f"{counts} record(s) left out by --active-only; export without it to include them", args.json)
    return 0


def _export_all(args: argparse.Namespace) -> int:
    """The store owner's backup: every record, whoever's. Whoever can open the store can read
    every record already (the folders and the sqlite file are the user's own; on a server, the
    credentials that open it read every row), so nothing more is revealed; on a shared server
    that is said, because the file then holds colleagues' private records."""
    from ..importers.ndjson import export_line

    given = [flag for flag in ("--scope", "--visibility") if flag in args.settings.origins.values()]
    if given or args.active_only:
        raise user_error(
            f"export --all takes every scope and state; {', '.join(given + ['--active-only'] * args.active_only)} "
            "would narrow it",
            "drop them for a full backup, or drop --all to export what one scope may see",
        )
    written = 0
    with open_memory(args) as memory:
        if memory.backend in SERVERS:
            warn(
                f"export --all writes every user's records, private ones included, from the shared server "
                f"{memory.stores()[0].location}: keep the file as private as the server",
                args.json,
            )
        for record, usage in memory.export_all():
            sys.stdout.write(export_line(record, usage, with_usage=not args.no_usage))
            written += 1
    inform(f"exported {written} record(s): every scope, visibility and lifecycle state", args.json)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from ..importers import detect, import_entries, place, read
    from ..ranking.access import Access

    source = None if args.source == "-" else Path(args.source).expanduser()
    fmt = args.format or detect(source)
    default_scope = Access.of(args.scope, args.visibility).scope
    if source is None and (sys.stdin is None or sys.stdin.isatty()):
        raise user_error("nothing to import", "name a file or folder, or pipe NDJSON on stdin")
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes when it can: a bad line is reported, not fatal
    entries = read(source, fmt, stdin, default_scope)
    with open_memory(args) as memory:
        steps = memory.progress.start("importing", "record", None)  # a bar on a terminal: the count is not known
        report = import_entries(
            memory, entries, default_scope, memory.settings.max_text_bytes, steps, args.allow_secrets
        )
    report = {"format": fmt, "source": args.source, **report}
    skipped = report["skipped"]
    for message in report["warnings"]:
        warn(message, args.json)
    if args.json:
        emit_json(report)
    else:
        for item in skipped:
            warn(f"skipped {place(item)}: {item['error']}")
        emit_text(
            f"Imported {report['imported']} record(s) ({fmt}): {report['written']} written, "
            f"{report['unchanged']} unchanged, {len(skipped)} skipped."
        )
    if not skipped:
        return 0
    return report_error(
        user_error(
            f"{len(skipped)} item(s) skipped, the others imported",
            "fix the items listed and import again: what is already there is not written twice"
            + (
                "; a public record that holds a credential is imported knowingly with --allow-secrets"
                if any(item.get("credential") for item in skipped)
                else ""
            ),
        ),
        args.json,
    )
