"""Where a bulk ``remember --no-embed`` spends its CPU, part by part, in the code on ``sys.path``.

    PYTHONPATH=/tmp/before/src python benchmarks/remember_parts.py --records 5000
    python benchmarks/remember_parts.py --records 5000

One ``remember --json --no-embed`` of the ``corpus.py`` records into a fresh files store, run in
this process through the CLI's own entry point, with the keyword-index writer run inline rather
than on its worker thread, so that each part's CPU (``time.thread_time``) is its own and not
another thread's wait for the GIL. Prints the process's CPU per record (every thread: tantivy
indexes on threads of its own), the main thread's, and each part's; a part the code does not
have (an earlier commit) is left out, and so is the time the cyclic garbage collector ran (its full
collections walk every live record of the batch). cProfile cannot do this: it sees one thread, and charges
a wait for the GIL to whatever runs next.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import functools
import gc
import importlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from measure import isolated_env  # noqa: E402

# (module, attribute path): the parts timed, where they exist
PARTS = (
    ("eidetic.credentials", "record_kinds"),  # the credential check of each record
    ("eidetic.index.text_index", "field_counts"),  # each record's term counts per field (earlier code)
    ("eidetic.index.text_index", "field_lines"),  # each record's terms per field, analysed (an earlier place)
    ("eidetic.index.term_lines", "field_lines"),  # the same, where it is now (a large batch: in a helper)
    ("eidetic.index.text_index", "TextIndex.add"),  # the keyword entries (term counts included)
    ("eidetic.index.database", "RecordDatabase._insert_rows"),  # the docs table's rows
    ("eidetic.stores.folder_index", "FolderIndex.apply_writes"),  # files and their index, in all (old place)
    ("eidetic.stores.files.folder_index", "FolderIndex.apply_writes"),  # the same, where it is now
    ("eidetic.memory.writes", "Writes._placed"),  # where each record lives, for the answer
    ("eidetic.memory.writes", "Writes._hash_owners"),  # exact duplicates in the stores
    ("eidetic.memory.writes", "Writes._near_duplicates"),
)


class Inline:
    """A one-worker pool that runs what it is given at once, in the caller's thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> Inline:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result(fn(*args, **kwargs))
        return done


def timed(module: str, path: str, spent: dict[str, float]) -> None:
    """Wrap ``module.path`` (if the code has it) to add its thread CPU to ``spent[path]``."""
    try:
        owner: Any = importlib.import_module(module)
    except ModuleNotFoundError:
        return
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part, None)
    original = getattr(owner, name, None) if owner is not None else None
    if original is None:
        return

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[path] = spent.get(path, 0.0) + time.thread_time() - started

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=5_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="remember-parts-") as tmp:
        isolated_env(Path(tmp))
        corpus = Path(tmp) / "corpus.ndjson"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in records(args.records, seed=7)))
        import eidetic
        import eidetic.index.database as database
        from eidetic.cli.main import main as cli

        database.ThreadPoolExecutor = Inline  # type: ignore[attr-defined,misc]
        spent: dict[str, float] = {}
        for module, path in PARTS:
            timed(module, path, spent)
        collected = [0.0, 0, 0.0]  # seconds, full collections, when the current one started

        def collector(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                collected[2] = time.thread_time()
            else:
                collected[0] += time.thread_time() - collected[2]
                collected[1] += info["generation"] == 2

        gc.callbacks.append(collector)
        started, main_started = time.process_time(), time.thread_time()
        with corpus.open() as stdin, contextlib.redirect_stdout(io.StringIO()):
            sys.stdin = stdin
            with contextlib.suppress(SystemExit):
                cli(["remember", "--json", "--no-embed"])
        total, main_thread = time.process_time() - started, time.thread_time() - main_started
        gc.callbacks.remove(collector)
    per = 1e6 / args.records
    print(f"{eidetic.__file__}: {args.records:,} records")
    print(f"CPU per record: {total * per:.0f} us in all threads, {main_thread * per:.0f} us in the main one")
    for path, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {path:32s} {seconds * per:6.0f} us")
    print(f"  {'garbage collector':32s} {collected[0] * per:6.0f} us ({collected[1]} full collections)")


if __name__ == "__main__":
    main()
