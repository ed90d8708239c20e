"""``eidetic consolidate``: near-duplicate clusters per scope, each with its proposed survivor;
a dry run unless ``--apply``. The rules: ``eidetic explain consolidate``."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import user_error
from ..worddiff import marked
from .output import emit_json, emit_text, warn
from .stores import open_memory

PREVIEW = 80  # characters of the survivor's text shown; members show their words that differ from it


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "consolidate",
        help="find near-duplicate records per scope and fold each cluster into one (dry run by default)",
        description="Group each scope's near-duplicates (the same text once normalised, or a cosine at or above "
        "the threshold with the same numbers, ids, dates and names) around a proposed survivor; each record to "
        "fold shows its words against the survivor's. Nothing changes without --apply; then the others are "
        "shadowed, the survivor gains their links and usage, and 'eidetic restore ID' undoes one member. "
        "See 'eidetic explain consolidate'.",
    )
    parser.add_argument("--apply", action="store_true", help="fold the clusters shown (default: only show them)")
    parser.add_argument(
        "--keep",
        choices=("recent", "recalled"),
        default="recent",
        help="the survivor: the most recently changed record (default) or the most recalled",
    )
    parser.add_argument("--threshold", type=float, help="the cosine from which two records are near-duplicates")
    parser.add_argument(
        "--survivor", metavar="ID", help="only the cluster formed around this record, which survives (pick a member)"
    )
    text = parser.add_mutually_exclusive_group()
    text.add_argument("--text", help="with --survivor: the merged text the survivor takes")
    text.add_argument("--text-file", metavar="FILE", help="with --survivor: read the merged text from FILE")
    parser.add_argument("--scope", help="your scope name (default: default)")
    parser.add_argument("--visibility", help="public (default) or private: private adds your scope's private records")
    parser.add_argument("--scope-only", action="store_true", help="only records of your scope name")
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    merged = args.text
    if args.text_file is not None:
        try:
            merged = Path(args.text_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise user_error(
                f"cannot read --text-file {args.text_file!r}: {exc}", "give a readable UTF-8 file"
            ) from None
    with open_memory(args) as memory:
        access = memory.access(args.scope, args.visibility, scope_only=args.scope_only)
        report = memory.consolidate(
            access, keep=args.keep, threshold=args.threshold, survivor=args.survivor, text=merged, apply=args.apply
        )
    from .sweep_forget_restore import with_store_flags

    for cluster in report.items:
        cluster.undo = [with_store_flags(command, args) for command in cluster.undo]
    for message in report.warnings:
        warn(message, args.json)
    if args.json:
        emit_json(report.to_dict())
    else:
        emit_text("\n".join(_lines(report.to_dict())))
    return 0


def _lines(report: dict) -> list[str]:
    lines: list[str] = []
    for number, cluster in enumerate(report["items"], start=1):
        scope = cluster["scope"]
        lines.append(f"Cluster {number} ({scope['name']}/{scope['visibility']}, {len(cluster['members']) + 1} records)")
        survivor = cluster["survivor"]
        text = cluster["merged_text"] if cluster["merged_text"] is not None else survivor["text"]
        lines.append(_row("keep", survivor, _preview(text)))
        lines += [_row("fold", member, marked(text, member["text"])) for member in cluster["members"]]
        lines += [f"    undo: {command}" for command in cluster["undo"]]
    count = sum(len(c["members"]) for c in report["items"])
    verb = "were folded into" if not report["dry_run"] else "would be folded into"
    lines.append(
        f"{len(report['items'])} cluster(s): {count} record(s) {verb} {len(report['items'])} survivor(s); "
        f"scanned {report['scanned']} record(s), {report['without_vectors']} without vectors "
        f"(threshold {report['threshold']}, keep {report['keep']})."
    )
    if report["items"]:
        lines.append("Each folded record shows its words against the survivor's: [-survivor's-]{+its own+}.")
    if report["dry_run"]:
        lines.append("Dry run: nothing changed. Add --apply to fold them.")
    return lines


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def _row(role: str, member: dict, shown: str) -> str:
    score = "survivor" if role == "keep" else f"{member['score']:.3f}"
    recalled = f"{member['recall_count']:g}"
    return f"  {role} {member['id']}  {score}  created {member['created']}  recalled {recalled}  {shown}"
