"""Recall latency of two versions of eidetic on one store, measured side by side.

    python benchmarks/compare.py files 100000 --old e924a5b            # old commit vs HEAD
    python benchmarks/compare.py sqlite 100000 --old e924a5b --new HEAD
    python benchmarks/compare.py postgres 100000 --old e924a5b         # starts its own PostgreSQL
    python benchmarks/compare.py neo4j 10000 --old e924a5b             # starts its own graph server

Why interleaved: this machine is shared and its load changes by the minute, so two runs an hour
apart differ by more than most changes do. Here one store is built once (``remember --no-embed``
by the new version; vectors planted as in ``speed.py``), then one long-lived process per version
opens it (each with its own cache folder, so each builds its own derived indexes; with sqlite each
with its own copy of the database, since a newer version may upgrade its schema) and the two take
turns on batches of the same queries. The store is built by the old version, which may not read a
newer schema. Both see the same load; the p50 ratios (wall clock, and
CPU time, which contention disturbs least) are the answer.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402
from measure import backend_store, ingest_no_embed, machine, plant_vectors  # noqa: E402

MODES = ("keyword", "hybrid")
BATCH = 10

WORKER = """
import json, sys, time
from eidetic import Memory
memory = Memory.open()
for mode in ("keyword", "hybrid"):
    memory.recall("warm up", mode=mode, record=False)  # indexes built, model loaded
while True:  # until background work (full-text segment merges) is done: it would be timed too
    cpu = time.process_time()
    time.sleep(1)
    if time.process_time() - cpu < 0.02:
        break
print("ready", flush=True)
for line in sys.stdin:
    mode, queries = json.loads(line)
    spent = []
    for query in queries:
        started, cpu = time.perf_counter(), time.process_time()
        memory.recall(query, mode=mode, top_k=10, record=False)
        spent.append(((time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000))
    print(json.dumps(spent), flush=True)
"""


def export_tree(rev: str, target: Path) -> Path:
    """The ``src`` folder of ``rev``, byte-compiled, under ``target``."""
    import compileall

    archive = subprocess.run(["git", "archive", rev, "src"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    compileall.compile_dir(str(target / "src"), quiet=1)
    return target / "src"


def build_store(n: int, work: Path, env: dict, src: Path, caches: list[Path]) -> list[dict]:
    """``n`` records remembered by the version at ``src``; their vectors planted in each cache."""
    chunk = records(n, seed=7)
    for r in chunk:
        r["id"] = f"c0-{r['id']}"
    ingest_no_embed(chunk, work, {**env, "PYTHONPATH": str(src), "EIDETIC_CACHE_DIR": str(caches[0])})
    plant_vectors(chunk, caches)
    return chunk


def start_worker(src: Path, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        env={**env, "PYTHONPATH": str(src)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def ask(proc: subprocess.Popen, mode: str, queries: list[str]) -> list[list[float]]:
    """(wall ms, CPU ms) of each query: CPU time is what contention on a shared machine
    disturbs least."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps([mode, queries]) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def compare(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="eidetic-compare-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EIDETIC_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"EIDETIC_DATA_DIR": str(work / "store"), "EIDETIC_STATE_DIR": str(work / "state")})
    env["HOME"] = str(work / "home")
    server = ExitStack()  # a server the backend needs, stopped at the end
    env.update(server.enter_context(backend_store(args.backend, work)).env)
    workers: dict[str, subprocess.Popen] = {}
    try:
        trees = {name: export_tree(rev, work / name) for name, rev in (("old", args.old), ("new", args.new))}
        caches = {name: work / f"cache-{name}" for name in trees}
        print(f"building a {args.backend} store of {args.n:,} records", flush=True)
        first = build_store(args.n, work, env, trees["old"], list(caches.values()))
        envs = {name: {**env, "EIDETIC_CACHE_DIR": str(caches[name])} for name in trees}
        if args.backend == "sqlite":
            for name in trees:
                copy = work / f"memory-{name}.sqlite"
                shutil.copyfile(work / "memory.sqlite", copy)
                envs[name]["EIDETIC_SQLITE_PATH"] = str(copy)
        queries = {"keyword": keyword_queries(first, args.queries, seed=21)}
        queries["hybrid"] = keyword_queries(first, args.queries, seed=25)
        workers = {name: start_worker(trees[name], envs[name]) for name in trees}
        spent: dict[str, dict[str, list[list[float]]]] = {name: {m: [] for m in MODES} for name in trees}
        order = list(trees)
        for mode in MODES:
            for start in range(0, args.queries, BATCH):
                random.shuffle(order)  # neither version always goes first
                for name in order:
                    spent[name][mode] += ask(workers[name], mode, queries[mode][start : start + BATCH])
        result = {
            "backend": args.backend,
            "records": args.n,
            "queries": args.queries,
            "old": args.old,
            "new": args.new,
            "machine": machine(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        }
        for kind, column in (("p50_ms", 0), ("cpu_p50_ms", 1)):
            result[kind] = {
                name: {m: round(statistics.median(s[column] for s in spent[name][m]), 2) for m in MODES}
                for name in trees
            }
            result[f"new_over_old_{kind}"] = {
                m: round(result[kind]["new"][m] / result[kind]["old"][m], 3) for m in MODES
            }
        return result
    finally:
        for proc in workers.values():
            proc.kill()
        server.close()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backend", choices=NAMES)
    parser.add_argument("n", type=int)
    parser.add_argument("--old", required=True, help="the commit to compare against")
    parser.add_argument("--new", default="HEAD", help="the commit measured (default HEAD)")
    parser.add_argument("--queries", type=int, default=300, help="queries per mode (default 300)")
    result = compare(parser.parse_args())
    print(json.dumps(result, indent=2))
    saved = HERE / "results" / f"compare-{result['backend']}-{result['records']}.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
