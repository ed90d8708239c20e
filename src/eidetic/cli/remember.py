"""``eidetic remember``: one JSON object as an argument, or NDJSON on stdin."""

from __future__ import annotations

import argparse
import sys
from json import JSONDecodeError
from typing import Any

from ..errors import user_error
from ..records import load_json
from .output import emit_json, emit_text, warn
from .stores import open_memory


class _Bar:
    """A tqdm bar on a terminal, started only once embedding takes a while."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total <= 256:
            return  # over in a moment: no bar
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="text", desc="embedding", file=sys.stderr)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _progress_bar() -> _Bar | None:
    return _Bar() if sys.stderr.isatty() else None


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "remember",
        help="store records (JSON argument or NDJSON on stdin)",
        description="Upsert records by id. The whole batch is validated before anything is written.",
    )
    parser.add_argument("record", nargs="?", help="one JSON object; omit to read NDJSON from stdin")
    parser.add_argument("--scope", help="scope name for records without one (default: default)")
    parser.add_argument("--visibility", help="public (default) or private")
    parser.add_argument("--added-by", help="attribution (default: nick from culture.yaml)")
    parser.add_argument(
        "--no-embed", action="store_true", help="do not compute vectors now (the first semantic recall does)"
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        memory.progress = _progress_bar()
        options = {
            "scope": args.scope,
            "visibility": args.visibility,
            "added_by": args.added_by,
            "embed": not args.no_embed,
        }
        if args.record is not None:
            try:
                raw = load_json(args.record)
            except JSONDecodeError as exc:
                raise user_error(
                    f"invalid JSON argument ({exc.msg} at column {exc.colno})",
                    'pass one JSON object, e.g. \'{"text": "..."}\'; nothing was written',
                ) from None
            result = memory.remember([raw], **options)
        else:
            if sys.stdin is None or sys.stdin.isatty():
                raise user_error("no record given", "pass a JSON object, or pipe NDJSON on stdin")
            result = memory.remember_ndjson(sys.stdin, **options)
        if memory.progress is not None:
            memory.progress.close()
    for message in result.warnings:
        warn(message, args.json)
    if args.json:
        emit_json(result.to_dict())
    else:
        lines = [f"Upserted {result.upserted} record(s)."]
        lines += [
            f"Duplicate: {d['id']} has the same text as {d['duplicate_of']} (not written)." for d in result.duplicates
        ]
        emit_text("\n".join(lines))
    return 0
