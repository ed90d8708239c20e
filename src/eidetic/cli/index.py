"""``eidetic index``: where the index is, how many records it holds, whether it is current."""

from __future__ import annotations

import argparse

from .output import emit_json, emit_text
from .overview_doctor import access_of, scope_flags
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "index",
        help="show the search index state, or rebuild it",
        description="The index is derived from the record files and can be rebuilt at any time with no loss.",
    )
    parser.add_argument("--rebuild", action="store_true", help="drop the index and build it again")
    parser.add_argument(
        "--refresh", action="store_true", help="check every file now (recall checks a bounded slice per call)"
    )
    scope_flags(parser)
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        if args.rebuild:
            memory.rebuild_index()
        elif args.refresh:
            memory.refresh_index()
        stores = memory.index_status(access_of(args))
    if args.json:
        emit_json({"stores": stores})
        return 0
    lines = []
    for status in stores:
        if not status["exists"]:
            lines.append(f"{status['store']}: no store yet (0 records)")
            continue
        state = "current" if status["current"] else "stale (the next recall updates it)"
        lines.append(f"{status['store']}\n  index: {status['index']}\n  records: {status['records']}\n  state: {state}")
        for vectors in status["vectors"]:
            graph = f", HNSW graph over {vectors['graph_rows']}" if vectors["graph_rows"] else ", exact search"
            lines.append(f"  vectors ({vectors['model']}, {vectors['partition']}): {vectors['rows']} rows{graph}")
        for item in status["unparseable"]:
            lines.append(f"  unparseable: {item['path']}: {item['error']}")
        for item in status["conflicts"]:
            lines.append(f"  id conflict: {item['path']} also claims id {item['id']!r} (not served)")
    emit_text("\n".join(lines) or "no stores")
    return 0
