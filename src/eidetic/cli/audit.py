"""``eidetic audit``: grade every memory fresh, stale or dead-reference, with reasons. Read-only.
People see the problems first; the fresh records are counted, not listed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..ranking.fields import DEFAULT_STALE_MONTHS
from .output import emit_json, emit_text
from .render import Style, one_line
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "audit",
        help="grade memories fresh / stale / dead-reference (read-only)",
        description="Grade every memory you may see: stale when neither touched nor "
        "recalled within --stale-months; dead-reference when it names a "
        "repository file (src/x.py, docs/y.md:12) that does not exist.",
    )
    parser.add_argument(
        "--stale-months",
        type=float,
        default=DEFAULT_STALE_MONTHS,
        help=f"staleness limit in months (default {DEFAULT_STALE_MONTHS:g})",
    )
    parser.add_argument(
        "--repo-root",
        metavar="DIR",
        help="where named file paths must exist (default: the git work tree of the "
        "current folder, else the current folder)",
    )
    parser.add_argument("--scope", help="your scope name (default: default)")
    parser.add_argument("--visibility", help="public (default) or private: private adds that scope's private records")
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..ranking.access import Access

    access = Access.of(args.scope, args.visibility)
    with open_memory(args) as memory:
        report = memory.audit(
            access, stale_months=args.stale_months, repo_root=Path(args.repo_root) if args.repo_root else None
        )
    if args.json:
        emit_json(report)
        return 0
    emit_text(render(report, Style.for_stdout(args.settings)))
    return 0


def render(report: dict[str, Any], style: Style) -> str:
    """The problems (dead references, then stale records; the report's order) with their
    reasons, then the counts: fresh records are only counted (``--json`` lists every one)."""
    problems = [item for item in report["items"] if item["grade"] != "fresh"]
    lines = []
    for item in problems:
        where = f"  ({item['path']})" if item.get("path") else ""
        grade = style(f"{item['grade']:<15}", "yellow" if item["grade"] == "stale" else "bold")
        lines.append(f"{grade} {style(one_line(item['name'] or item['id']), 'cyan')}{where}")
        lines += [f"                  - {one_line(reason)}" for reason in item["reasons"]]
    summary, fresh = report["summary"], report["summary"]["fresh"]
    if not problems and report["count"]:
        lines.append("no stale or dead-reference memories")
    lines += [
        "",
        f"{report['count']} memories: {fresh} fresh, {summary['stale']} stale, "
        f"{summary['dead-reference']} dead-reference (repository {report['repo_root']}, "
        f"stale after {report['stale_months']:g} months)"
        + (
            f"; {'the fresh one is' if fresh == 1 else f'the {fresh} fresh ones are'} not listed (--json lists all)"
            if fresh
            else ""
        ),
    ]
    return "\n".join(lines).strip("\n")
