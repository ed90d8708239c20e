"""``eidetic migrate``: copy a whole store to another backend, with usage and lifecycle."""

from __future__ import annotations

import argparse
import itertools
from typing import TYPE_CHECKING, Any

from ..errors import user_error
from ..stores.backends import LOCATED, SPOKEN
from .output import emit_json, emit_text

if TYPE_CHECKING:
    from ..memory import Memory

BATCH = 2000  # records per write: bounded memory, a progress step, little redone if interrupted


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "migrate",
        help="copy every record (with usage and lifecycle) from one backend to another",
        description="Copy a whole store: every scope, every lifecycle state, usage counts. "
        "Idempotent: running it again writes only what changed.",
    )
    for side in ("from", "to"):
        parser.add_argument(
            f"--{side}",
            dest=f"{side}_backend",
            required=True,
            metavar="BACKEND",
            help=f"backend to copy {side}: {SPOKEN}",
        )
        parser.add_argument(
            f"--{side}-dir",
            action="append",
            metavar="DIR",
            help=f"files: the store folder(s) to copy {side} (default: the usual ones)",
        )
        for row in LOCATED.values():  # files: --from-dir/--to-dir above
            metavar = row.metavar or row.option.upper()
            parser.add_argument(
                f"--{side}-{row.option}", metavar=metavar, help=f"{row.name}: {row.place} to copy {side}"
            )
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.set_defaults(run=run, memory_dir=None, backend=None)


def run(args: argparse.Namespace) -> int:
    from ..memory import Memory

    def side(name: str) -> Memory:
        places = {row.option: getattr(args, f"{name}_{row.option}") for row in LOCATED.values()}
        return Memory.open(
            getattr(args, f"{name}_dir"), backend=getattr(args, f"{name}_backend"), settings=args.settings, **places
        )

    with side("from") as source, side("to") as target:
        if not any(store.exists() for store in source.stores()):
            raise user_error(
                "there is nothing to copy: the source store does not exist: "
                + ", ".join(store.location for store in source.stores()),
                "check --from and its location",
            )
        if [s.key for s in source.stores()] == [s.key for s in target.stores()]:
            raise user_error("the source and the target are the same store", "name another --to location")
        records, written = _copy(source, target, args.json)
        report: dict[str, Any] = {
            "from": [s.location for s in source.stores()],
            "to": [s.location for s in target.stores()],
            "records": records,
            "written": written,
            "unchanged": records - written,
        }
    if args.json:
        emit_json(report)
    else:
        emit_text(
            f"Copied {records} record(s) from {', '.join(report['from'])} to {', '.join(report['to'])}: "
            f"{written} written, {records - written} already there."
        )
    return 0


def _copy(source: Memory, target: Memory, as_json: bool) -> tuple[int, int]:
    """Every record of ``source`` restored into ``target`` in batches, with progress on stderr
    (a bar on a terminal); returns (records, written)."""
    from .progress import Bars

    bars = Bars(as_json)
    source.progress.listener = target.progress.listener = bars  # e.g. a source folder indexed first
    exported = source.export_all()
    # The first item syncs every source store and lists its records, once: the count is the
    # folders' own, and no second sync (which re-reads files written a moment ago, as racy)
    # reports after the copy has begun.
    first = next(exported, None)
    total = sum(store.count() for store in source.stores() if store.exists())
    into = ", ".join(store.location for store in target.stores())
    step = bars(f"copying {total} records to {into}", "record", total)
    records = written = 0
    batch: list[Any] = []
    try:
        for item in itertools.chain([] if first is None else [first], exported):
            batch.append(item)
            if len(batch) >= BATCH:
                done = target.restore(batch)
                records, written = records + done["records"], written + done["written"]
                step(records)
                batch = []
        done = target.restore(batch)
        records, written = records + done["records"], written + done["written"]
        step(records)
    finally:
        bars.close()
    return records, written
