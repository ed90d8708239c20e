"""``eidetic capture TRANSCRIPT``: keep what a session produced (the user's "remember ..." and
"note that ..." statements, the agent's "Decision: ..." and "Lesson: ..." lines) as records with
their provenance, without a model, leaving out what is stored already. docs/hooks.md has the rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import user_error
from .output import emit_json, emit_text
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "capture",
        help="remember the statements and decisions of an agent's transcript file",
        description="Read a transcript (a Claude Code JSONL file, or any text file) and remember the "
        "user's explicit 'remember ...'/'note that ...' statements and the agent's 'Decision:'/'Lesson:' "
        "lines, with provenance, skipping what is stored already (the same words, or a meaning as close as "
        "remember's near-duplicates in the records' scope). A statement holding what looks like a "
        "credential (a key, a token, a password) is left out and only counted. Private unless the capture "
        "setting or --visibility says public.",
    )
    parser.add_argument("transcript", metavar="TRANSCRIPT", help="the transcript file")
    parser.add_argument(
        "--format",
        choices=("auto", "claude", "text"),
        default="auto",
        help="claude (JSON lines) or text; auto (default) reads the first line",
    )
    parser.add_argument("--session", metavar="ID", help="the session's id, for provenance (default: the transcript's)")
    parser.add_argument("--scope", help="the records' scope (default: your configured scope)")
    parser.add_argument(
        "--visibility",
        choices=("public", "private"),
        help="default: the capture setting when it is public or private, else private",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would be kept (judged by words alone); write nothing"
    )
    parser.add_argument(
        "--no-embed",
        action="store_true",
        help="write no vectors now (no model loaded): statements close in meaning to a stored record are kept",
    )
    add_common(parser)
    parser.set_defaults(run=run, creates_store=True)


def run(args: argparse.Namespace) -> int:
    from ..hooks.keep import keep
    from ..hooks.payloads import provenance
    from ..hooks.regular import Missing, Refused
    from ..hooks.transcripts import read_transcript
    from ..timeutil import now_utc

    path = Path(args.transcript).expanduser()
    try:  # any regular file, named on purpose; never a FIFO or a device (the read must end)
        found, about = read_transcript(path, args.format)
    except Missing:
        raise user_error(f"no transcript file at {args.transcript}", "name an existing file") from None
    except Refused as exc:
        hint = "split it" if str(exc).startswith("larger") else "name a transcript file (a regular file)"
        raise user_error(f"{args.transcript} is {exc}", hint) from None
    settings = args.settings
    visibility = args.visibility or (settings.capture if settings.capture != "off" else "private")
    cwd = Path(about["cwd"]) if about.get("cwd") and Path(about["cwd"]).is_dir() else Path.cwd()
    agent = "claude-code" if about else "transcript"
    origin = provenance(agent, args.session or about.get("session", ""), cwd)
    with open_memory(args, progress=False) as memory:
        report = keep(
            memory,
            found,
            origin,
            {"scope": args.scope or settings.scope, "visibility": visibility},
            now_utc(),
            args.dry_run,
            embed=not args.no_embed,
        )
    if args.json:
        emit_json(report)
    else:
        emit_text(_summary(report, path))
    return 0


def _summary(report: dict, path: Path) -> str:
    new = sum(item["status"] == "new" for item in report["items"])
    verb = "would keep" if report["dry_run"] else "kept"
    lines = [f"{verb} {new} of {report['found']} statement(s) from {path}"]
    if report["credentials_left_out"]:
        kinds = ", ".join(report["credential_kinds"])
        lines.append(f"  left out {report['credentials_left_out']}: holding what looks like a credential ({kinds})")
    for item in report["items"]:
        if item.get("duplicate_of"):
            where = f" of {item['duplicate_of']} (same {'meaning' if item.get('rule') == 'meaning' else 'words'})"
        else:
            where = f" {item['id']}" if item.get("id") else ""
        lines.append(f"  {item['status']}{where} ({item['type']}): {item['text'][:100]}")
    return "\n".join(lines)
