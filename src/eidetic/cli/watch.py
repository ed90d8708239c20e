"""``eidetic watch``: keep the index current while files change (optional, foreground)."""

from __future__ import annotations

import argparse
import sys

from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "watch",
        help="keep the index current as record files change (runs until Ctrl-C)",
        description="Watch the stores with the operating system's file events and index every "
        "change at once, including files edited in place in large stores. Optional: "
        "recall finds changes without it, at a bounded cost per call.",
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def ready(roots) -> None:
        for root in roots:
            sys.stderr.write(f"watching {root}\n")
        sys.stderr.flush()

    def changed(root, report) -> None:
        if report.changed:
            sys.stderr.write(f"{root}: {report.added} added, {report.updated} updated, {report.removed} removed\n")
            sys.stderr.flush()

    with open_memory(args) as memory:
        try:
            memory.watch(on_change=changed, ready=ready)
        except KeyboardInterrupt:
            pass
    return 0
