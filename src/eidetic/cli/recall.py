"""``eidetic recall QUERY``: ranked records with score, freshness signal and full metadata."""

from __future__ import annotations

import argparse
import json

from ..errors import user_error
from .output import emit_json, emit_text, warn
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser("recall", help="find records verbatim, by keyword or by meaning",
                            description="Recall records ranked by relevance and freshness.")
    parser.add_argument("query", nargs="?", default="",
                        help="what to look for (fields mode: may be left out with --type, to browse)")
    parser.add_argument("--mode", default="hybrid",
                        choices=["exact", "keyword", "approximate", "hybrid", "fields"],
                        help="exact substring, BM25 keyword, vector, their blend (default hybrid), or the "
                             "transparent fields ranking of markdown memory folders")
    parser.add_argument("--top-k", type=_int, default=5, help="number of primary hits (default 5)")
    parser.add_argument("--alpha", type=_float, default=0.5,
                        help="hybrid weight of the semantic signal, 0..1 (default 0.5)")
    parser.add_argument("--case-sensitive", action="store_true", help="exact mode: match case")
    parser.add_argument("--filter", action="append", metavar="KEY=VALUE",
                        help="metadata facet; typed values; KEY>=V and KEY<=V ranges (repeatable)")
    parser.add_argument("--source", help="only records whose metadata.source is this")
    parser.add_argument("--type", action="append", dest="types", metavar="TYPE",
                        help="only records of this type (repeatable)")
    parser.add_argument("--since", help="only records created on or after this ISO date")
    parser.add_argument("--until", help="only records created on or before this ISO date")
    parser.add_argument("--scope", help="query scope name (default: default)")
    parser.add_argument("--visibility", help="public (default) or private: private also sees "
                                             "that scope's private records")
    parser.add_argument("--scope-only", action="store_true",
                        help="only records whose scope name is the query's")
    parser.add_argument("--include-shadowed", action="store_true", help="include superseded records")
    parser.add_argument("--include-archived", action="store_true", help="include archived records")
    parser.add_argument("--min-score", type=_float, help="drop hits scoring below this (fields mode: default 0.5)")
    parser.add_argument("--stale-months", type=_float, default=6.0,
                        help="fields mode: months over which the recency factor falls from 1.5 to 0.5 (default 6)")
    parser.add_argument("--depth", type=_int, default=1,
                        help="follow links/supersedes from the hits this many hops (default 1, 0 = none)")
    parser.add_argument("--max-nodes", type=_int, default=20,
                        help="at most this many linked records (default 20)")
    parser.add_argument("--explain", action="store_true", help="show how each score was computed")
    parser.add_argument("--no-record", action="store_true",
                        help="do not count this recall in the records' usage")
    add_common(parser)
    parser.set_defaults(run=run)


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
    if args.top_k < 1:
        raise user_error(f"--top-k must be >= 1 (got {args.top_k})", "e.g. --top-k 5")
    with open_memory(args) as memory:
        result = memory.recall(
            args.query, mode=args.mode, top_k=args.top_k, alpha=args.alpha,
            case_sensitive=args.case_sensitive, filters=args.filter, source=args.source,
            types=args.types, since=args.since, until=args.until, scope=args.scope,
            visibility=args.visibility, scope_only=args.scope_only,
            include_shadowed=args.include_shadowed, include_archived=args.include_archived,
            min_score=args.min_score, depth=args.depth, max_nodes=args.max_nodes,
            stale_months=args.stale_months, explain=args.explain, record=not args.no_record)
    for message in result.warnings:
        warn(message)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit_text(render_text(result.to_dict()))
    return 0


def render_text(bundle: dict) -> str:
    online = "online" if bundle["embedder"]["online"] else "offline"
    lines = [f"query: {bundle['query']}  mode: {bundle['mode']}  "
             f"truncated: {'yes' if bundle['truncated'] else 'no'}  embedder: {online}", ""]
    if not bundle["items"]:
        lines.append("(no results)")
    for item in bundle["items"]:
        via = f" via={item['via']} parent={item['parent']}" if item["tier"] == "traversal" else ""
        lines.append(f"[{item['tier']} depth={item['depth']}{via}] id: {item['id']}")
        lines.append(f"score: {item['score']:.4f}  signal: {item['signal']:.3f}  "
                     f"type: {item['type']}  scope: {item['scope']['name']}/{item['scope']['visibility']}"
                     f"  lifecycle: {item['lifecycle']}")
        if item.get("name"):
            lines.append(f"name: {item['name']}")
        if item.get("description"):
            lines.append(f"description: {item['description']}")
        lines.append(f"text: {item['text']}")
        lines.append(f"created: {item['created']}  recalled: {item['recall_count']}x"
                     + (f", last {item['last_recall']}" if item["last_recall"] else ""))
        for key, value in item["metadata"].items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"  {key}: {shown}")
        if item.get("explain"):
            lines.append("  explain: " + json.dumps(item["explain"], ensure_ascii=False))
        lines.append("")
    return "\n".join(lines).rstrip("\n")
