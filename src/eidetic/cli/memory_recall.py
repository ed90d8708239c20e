"""``memory-recall``: the command line coding agents' memory-recall tools use, over markdown memory folders.

    memory-recall [query] TERMS... [--type T] [--limit N] [--min-score S] [--stale-months N]
                  [--memory-dir DIR] [--project-root DIR] [--all] [--json] [--explain] [--no-record]

Its JSON keeps those tools' shape (``{terms, dirs, count, results[]}``, ``usage_count``) and
also speaks eidetic's vocabulary: ``--top-k`` is ``--limit``, and each result carries ``id``,
``recall_count`` and ``last_recall`` as ``eidetic recall --json`` names them. It ranks with eidetic's ``fields`` mode (``ranking/fields.py``) over the derived index, so a
big folder is not re-read on every call. Memory files are only read: usage is kept in the
per-user state database, never in the folder, so a read-only folder works.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EideticError, user_error
from ..ranking import fields
from ..settings import Settings

if TYPE_CHECKING:
    from ..results import Hit


def build_parser() -> argparse.ArgumentParser:
    from .main import _Parser  # a usage error is an eidetic error: exit 1, JSON with --json

    parser = _Parser(
        prog="memory-recall",
        description="Pull only the memories relevant to a query, ranked by a "
        "transparent relevance signal (eidetic's fields ranking).",
    )
    parser.add_argument("terms", nargs="*", help="query terms (a leading word `query` is optional)")
    parser.add_argument(
        "--type",
        action="append",
        dest="types",
        metavar="T",
        help="only this memory type (user, feedback, project, reference); repeatable",
    )
    parser.add_argument("--limit", "--top-k", type=int, default=5, help="max results (default 5)")
    parser.add_argument(
        "--min-score", type=float, default=fields.DEFAULT_MIN_SCORE, help="minimum relevance score (default 0.5)"
    )
    parser.add_argument(
        "--stale-months",
        type=float,
        default=fields.DEFAULT_STALE_MONTHS,
        help="recency reference span in months (default 6)",
    )
    parser.add_argument("--memory-dir", action="append", metavar="DIR", help="an explicit memory folder")
    parser.add_argument(
        "--project-root", metavar="DIR", help="resolve the memory folder of this project (default: the current folder)"
    )
    parser.add_argument("--all", action="store_true", help="search every project's memory folder")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--explain", action="store_true", help="include the per-signal score breakdown")
    parser.add_argument("--no-record", action="store_true", help="do not record usage (read-only query)")
    return parser


def projects_root() -> Path:
    return Path.home() / ".claude" / "projects"


def memory_dir_for(root: Path) -> Path:
    """The coding agent's memory folder for a project: its absolute path with ``/`` replaced
    by ``-`` under ``~/.claude/projects``; if that does not exist, the variant that also
    replaces every other non-alphanumeric character (how the agent names folders of paths
    with dots or spaces)."""
    absolute = str(root.expanduser().absolute())
    plain = projects_root() / absolute.replace("/", "-") / "memory"
    if plain.is_dir():
        return plain
    strict = projects_root() / re.sub(r"[^A-Za-z0-9]", "-", absolute) / "memory"
    return strict if strict.is_dir() else plain


def resolve_dirs(args: argparse.Namespace) -> list[Path]:
    if args.memory_dir:
        return [Path(d).expanduser().absolute() for d in args.memory_dir]
    if args.all:
        return sorted(p for p in projects_root().glob("*/memory") if p.is_dir())
    return [memory_dir_for(Path(args.project_root) if args.project_root else Path.cwd())]


def main(argv: Sequence[str] | None = None) -> int:
    from .main import _quiet_stdout, report_error

    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
        args.settings = Settings.load()
        return run(args)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except EideticError as exc:
        return report_error(exc, "--json" in args_list)
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def run(args: argparse.Namespace) -> int:
    from ..memory import Memory
    from ..query import RecallQuery

    if args.limit < 1:
        raise user_error(f"--limit (--top-k) must be >= 1 (got {args.limit})", "e.g. --limit 5")
    query = " ".join(args.terms)
    terms = fields.terms_of(query) if query.strip() else []
    if not terms and not args.types:
        raise user_error("no query terms", "give words to look for, or --type T to browse a type")
    dirs = resolve_dirs(args)
    existing = [d for d in dirs if d.is_dir()]
    results: list[dict[str, Any]] = []
    if existing:
        with Memory.open(existing, settings=args.settings) as memory:
            found = memory.recall(
                RecallQuery(
                    " ".join(terms),
                    mode="fields",
                    top_k=args.limit,
                    types=args.types or (),
                    min_score=args.min_score,
                    stale_months=args.stale_months,
                    depth=0,
                    explain=True,
                    record=not args.no_record,
                )
            )
        results = [_result(hit, terms, args.explain) for hit in found.items]
    if args.json:
        print(
            json.dumps(
                {"terms": terms, "dirs": [str(d) for d in dirs], "count": len(results), "results": results},
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not existing:
        print(f"no memory folder at {', '.join(str(d) for d in dirs)}", file=sys.stderr)
    _print_text(results, args.explain)
    return 0


def _result(hit: Hit, terms: list[str], explain: bool) -> dict[str, Any]:
    """One hit in the seed's shape, with eidetic's names for the same facts beside it."""
    breakdown = dict(hit.explain or {})
    usage = hit.to_dict()  # recall_count and last_recall as eidetic names them everywhere
    result = {
        "id": hit.record.id,
        "name": hit.record.name or hit.record.id,
        "type": hit.record.type,
        "description": hit.record.description,
        "path": hit.path,
        "score": hit.score,
        "recency_months": breakdown.get("recency_months"),
        "usage_count": usage["recall_count"],  # the name memory-recall tools use
        "recall_count": usage["recall_count"],
        "last_recall": usage["last_recall"],
        "snippet": fields.snippet(hit.record.text, terms),
    }
    if explain:
        breakdown.pop("engine", None)
        result["breakdown"] = breakdown
    return result


def _print_text(results: list[dict[str, Any]], explain: bool) -> None:
    if not results:
        print("No matching memories.")
    for number, result in enumerate(results, 1):
        print(f"{number}. {result['name']}  [{result['type']}]  score {result['score']:.3f}")
        if result["description"]:
            print(f"   {result['description']}")
        if result["snippet"]:
            print(f"   > {result['snippet']}")
        print(f"   {result['path']}")
        if explain:
            b = result["breakdown"]
            print(
                f"   keyword {b['keyword']} + type {b['type_prior']} + usage {b['usage_boost']:.3f} "
                f"x recency {b['recency_factor']:.3f} (touched {b['recency_months']} months ago); "
                f"terms {json.dumps(b['terms'])}"
            )


if __name__ == "__main__":
    sys.exit(main())
