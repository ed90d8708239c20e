"""Recall speed of the sqlite and postgres backends through the public API, at scale.

    python benchmarks/backends.py --backend sqlite --records 1000000
    python benchmarks/backends.py --backend postgres --records 100000   # starts its own server

Records come from the benchmark corpus (short notes and longer chunks, varied vocabulary), in
batches through ``Memory.remember``. Record vectors are synthetic (clustered unit vectors in the
embedding cache under the real model's name, as in ``semantic.py``: embedding 1M texts with the
NumPy model would take half a day); queries are embedded by the real model inside the measured
time. Measured: ingest rate, the first semantic recall (vectors indexed, graph built), p50/p95
of top-10 recall per mode in-process, a hybrid recall as a new process with its peak RSS, and
disk use. Results go to ``benchmarks/results/backend-<name>-<records>.json`` and
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # pg_server: a throwaway PostgreSQL

from corpus import exact_queries, keyword_queries, records  # noqa: E402
from report import update_doc  # noqa: E402
from semantic import clustered  # noqa: E402
from speed import isolated_env, machine, recall_latencies, summary  # noqa: E402

CHUNK = 50_000  # records generated, remembered and given vectors at a time (bounded memory)


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def ingest(n: int, cache_dir: Path) -> tuple[list[dict], float]:
    """Remember ``n`` records in chunks (no embedding) and plant their synthetic vectors in
    the cache; returns the first chunk (for queries) and the remember time in seconds."""
    from eidetic import Memory
    from eidetic.embed import local
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash

    first: list[dict] = []
    spent = 0.0
    cache = VectorCache(cache_dir / "vectors.sqlite")
    with Memory.open() as memory:
        for number, start in enumerate(range(0, n, CHUNK)):
            chunk = records(min(CHUNK, n - start), seed=7 + number)
            for r in chunk:
                r["id"] = f"c{number}-{r['id']}"
            started = time.perf_counter()
            memory.remember(chunk, embed=False)
            spent += time.perf_counter() - started
            vectors = clustered(len(chunk), seed=99 + number)
            cache.put(local.MODEL_NAME, ((text_hash(r["text"]), v) for r, v in zip(chunk, vectors)))
            if not first:
                first = chunk
            print(f"  {start + len(chunk)} records, {(start + len(chunk)) / spent:.0f}/s", flush=True)
    cache.close()
    return first, spent


def cli_hybrid(env: dict, queries: list[str]) -> dict:
    """Wall time and peak RSS of hybrid recalls, each a new ``eidetic recall`` process."""
    walls, peaks = [], []
    for query in queries:
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "eidetic", "recall", query,
                               "--top-k", "10", "--json"], env=env, capture_output=True, text=True)
        walls.append((time.perf_counter() - started) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"recall failed: {proc.stderr}")
        peaks.append(int(proc.stderr.strip().splitlines()[-1]) / 1024)  # this process's max RSS, MB
    return dict(summary(walls), peak_rss_mb=round(max(peaks)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], required=True)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--processes", type=int, default=7)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--keep", type=Path, help="build the store in this folder and keep it (sqlite)")
    parser.add_argument("--reuse", action="store_true",
                        help="the --keep folder holds a store built by an earlier run: measure recall only "
                             "(ingest figures are kept from that run's results)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix=f"eidetic-{args.backend}-"))
    work.mkdir(parents=True, exist_ok=True)
    env = isolated_env(work)
    stop = None
    if args.backend == "sqlite":
        location = work / "memory.sqlite"
        settings = {"EIDETIC_BACKEND": "sqlite", "EIDETIC_SQLITE_PATH": str(location)}
    else:
        from pg_server import start_postgres

        dsn, stop = start_postgres(work)
        settings = {"EIDETIC_BACKEND": "postgres", "EIDETIC_PG_DSN": dsn}
    os.environ.update(settings)
    env.update(settings)
    saved = args.out / f"backend-{args.backend}-{args.records}.json"
    result: dict = {"backend": args.backend, "records": args.records, "machine": machine(),
                    "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
    try:
        if args.reuse:
            if args.keep is None or args.backend != "sqlite":
                raise SystemExit("--reuse needs --keep and the sqlite backend")
            earlier = json.loads(saved.read_text())
            result.update({k: earlier[k] for k in ("remember_per_s", "first_semantic_recall_s", "ingest_note")
                           if k in earlier})
            first = records(min(CHUNK, args.records), seed=7)
        else:
            print(f"ingest {args.records} records into {args.backend} ...", flush=True)
            first, spent = ingest(args.records, work / "cache")
            result["remember_per_s"] = round(args.records / spent)
        if args.backend == "postgres":  # what autovacuum does after a bulk load (index-only scans need it)
            import psycopg

            with psycopg.connect(settings["EIDETIC_PG_DSN"], autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
        from eidetic import Memory

        with Memory.open() as memory:
            started = time.perf_counter()
            memory.recall("warm up", mode="hybrid")
            if not args.reuse:
                result["first_semantic_recall_s"] = round(time.perf_counter() - started, 1)
                print(f"  first semantic recall {result['first_semantic_recall_s']} s", flush=True)
            for mode, queries in (("keyword", keyword_queries(first, args.queries, seed=21)),
                                  ("exact", exact_queries(first, args.queries, seed=23)),
                                  ("hybrid", keyword_queries(first, args.queries, seed=25))):
                result[mode] = recall_latencies(memory, mode, queries)
                print(f"  {mode}: {result[mode]}", flush=True)
        result["hybrid_cli_process"] = cli_hybrid(env, keyword_queries(first, args.processes, seed=27))
        print(f"  hybrid as a new process: {result['hybrid_cli_process']}", flush=True)
        if args.backend == "sqlite":
            result["disk_mb"] = {"database": round(folder_bytes(location) / 1e6),
                                 "derived (keyword + vectors)": round(folder_bytes(work / "cache" / "sqlite") / 1e6)}
    finally:
        if stop is not None:
            stop()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc(f"backend-{args.backend}-{args.records}", table(result))


def table(r: dict) -> str:
    targets = {"sqlite": {"keyword": 20, "hybrid": 100}, "postgres": {"keyword": 50, "hybrid": 50}}[r["backend"]]
    lines = [f"### `{r['backend']}` backend at {r['records']:,} records (`benchmarks/backends.py`)", "",
             f"{r['date']}, {r['machine']}. Record vectors synthetic, queries embedded by the real model.", "",
             "| measure | p50 | p95 | target (p50) |", "|---|---|---|---|"]
    for mode in ("keyword", "exact", "hybrid"):
        target = f"≤ {targets[mode]} ms" if mode in targets else ""
        lines.append(f"| {mode} recall, top 10, in-process | {r[mode]['p50_ms']} ms | {r[mode]['p95_ms']} ms | {target} |")
    cli = r["hybrid_cli_process"]
    lines.append(f"| hybrid recall as a new process (model load included) | {cli['p50_ms']} ms | {cli['p95_ms']} ms | |")
    lines += ["", f"- remember (no embedding): {r['remember_per_s']:,} records/s"
              + (f" ({r['ingest_note']})" if r.get("ingest_note") else ""),
              f"- first semantic recall after ingest (vectors indexed from the cache, graph built): "
              f"{r['first_semantic_recall_s']} s",
              f"- peak RSS of a hybrid recall process: {cli['peak_rss_mb']} MB"]
    if "disk_mb" in r:
        lines.append("- disk: " + ", ".join(f"{k} {v:,} MB" for k, v in r["disk_mb"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
