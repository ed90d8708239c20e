"""Listing speed: ``eidetic list`` and ``eidetic show`` on a large store of each backend.

    python benchmarks/listing.py [files sqlite postgres neo4j] [--size 100000] [--work DIR]

Builds a store of ``--size`` synthetic records (``corpus.py``; a third named, some linked) per
backend (every backend unless some are named; a server is started for the run), then times,
best of five in one process (``Memory.list_records``, ``Memory.show``): the first page in each
order, a type filter, a metadata facet, a deep page, and ``show``; and ``eidetic list`` as a
new process (best of three, wall time). Writes
``benchmarks/results/listing.json`` and a table in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402
from measure import backend_store  # noqa: E402
from report import update_doc  # noqa: E402

CASES = {
    "newest first (default)": {},
    "by creation": {"sort": "created"},
    "by name": {"sort": "name"},
    "most recalled": {"sort": "recalled"},
    "--type lesson": {"types": ["lesson"]},
    "--filter source=retro (a facet)": {"filters": ["source=retro"]},
    "--offset 50000": {"offset": 50_000},
}


def corpus(size: int) -> list[dict]:
    out = records(size)
    for n, record in enumerate(out):
        if n % 3 == 0:
            record["name"] = " ".join(record["text"].split()[:4])
        if n % 50 == 1:
            record["links"] = [out[n - 1]["id"]]
    return out


def best(action, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return round(min(times) * 1000, 1)


def measure(backend: str, size: int, work: Path) -> dict:
    from eidetic import Memory

    env = dict(os.environ, EIDETIC_CACHE_DIR=str(work / "cache"), EIDETIC_STATE_DIR=str(work / "state"))
    env["EIDETIC_EMBEDDER"] = "none"
    with backend_store(backend, work / f"{backend}-{size}") as store:
        env.update(store.env)
        os.environ.update(env)
        with Memory.open() as memory:
            if not memory.list_records(limit=1).total:
                started = time.perf_counter()
                items = corpus(size)
                for start in range(0, size, 10_000):
                    memory.remember(items[start : start + 10_000], embed=False)
                print(f"{backend}: {size} records in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            memory.recall("configuration file", mode="keyword", top_k=20)  # some usage to sort by
            result = {
                name: best(lambda options=options: memory.list_records(**options)) for name, options in CASES.items()
            }
            result["show (links both ways)"] = best(lambda: memory.show("rec-0000000"))
        command = [sys.executable, "-m", "eidetic", "list"]
        result["`eidetic list`, a new process"] = best(
            lambda: subprocess.run(command, env=env, check=True, capture_output=True), runs=3
        )
        return result


def table(result: dict) -> str:
    backends = list(result["backends"])
    lines = [
        f"{result['date']}, {result['machine']}, {result['size']} records; `{result['command']}`",
        "",
        "| ms (best of 5; a process: of 3) | " + " | ".join(backends) + " |",
        "|---|" + "---|" * len(backends),
    ]
    for case in result["backends"][backends[0]]:
        lines.append(f"| {case} | " + " | ".join(f"{result['backends'][b][case]}" for b in backends) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=list(NAMES), help=f"some of {' '.join(NAMES)} (default: all)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--work", type=Path, help="keep the stores here (reruns reuse them)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="eidetic-listing-"))
    work.mkdir(parents=True, exist_ok=True)
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "size": args.size,
        "command": f"python benchmarks/listing.py {' '.join(args.backends)} --size {args.size}",
        "backends": {backend: measure(backend, args.size, work) for backend in args.backends},
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "listing.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc("listing", table(result))


if __name__ == "__main__":
    main()
