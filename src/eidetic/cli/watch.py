"""``eidetic watch``: keep the index current while files change (optional, foreground)."""

from __future__ import annotations

import argparse
import sys

from .output import emit_json
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "watch",
        help="keep the index current as record files change (runs until Ctrl-C)",
        description="Watch the stores with the operating system's file events and index every "
        "change at once, including files edited in place in large stores. Optional: "
        "recall finds changes without it, at a bounded cost per call. With --json, one JSON "
        'object a line on stdout: {"watching": STORE} when ready, then {"store", "added", '
        '"updated", "removed"} per change.',
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def ready(roots) -> None:
        for root in roots:
            if args.json:
                emit_json({"watching": str(root)}, stream=True)
            else:
                sys.stderr.write(f"watching {root}\n")
        _flush()

    def changed(root, report) -> None:
        if not report.changed:
            return
        if args.json:
            emit_json(
                {"store": str(root), "added": report.added, "updated": report.updated, "removed": report.removed},
                stream=True,
            )
        else:
            sys.stderr.write(f"{root}: {report.added} added, {report.updated} updated, {report.removed} removed\n")
        _flush()

    with open_memory(args) as memory:
        try:
            memory.watch(on_change=changed, ready=ready)
        except KeyboardInterrupt:
            pass
    return 0


def _flush() -> None:
    """Each line as it happens: a reader of a pipe waits for events, not for a full buffer."""
    sys.stdout.flush()
    sys.stderr.flush()
