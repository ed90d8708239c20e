"""Speed of the files store at a given size: ingest, recall in-process and as a new process,
and how fast a hand edit becomes visible. Writes JSON to ``benchmarks/results/`` and prints a
markdown table for ``docs/benchmarks.md``.

    python benchmarks/speed.py --records 100000

Latencies are medians (p50) and p95 over many queries; the machine is shared and noisy, so
read them as ratios against each other and against the targets, not as absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import exact_queries, keyword_queries, records  # noqa: E402
from report import update_doc  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values_ms: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(values_ms), 2), "p95_ms": round(pct(values_ms, 0.95), 2),
            "n": len(values_ms)}


def installed_env(env: dict) -> dict:
    """The environment of an installed eidetic: its modules byte-compiled (pip does this on a
    normal install; this machine sets PYTHONDONTWRITEBYTECODE, which would make every new
    process compile eidetic's sources again, ~0.1 s that no user pays)."""
    import compileall

    import eidetic

    compileall.compile_dir(str(Path(eidetic.__file__).parent), quiet=1)
    clean = dict(env)
    clean.pop("PYTHONDONTWRITEBYTECODE", None)
    return clean


def isolated_env(work: Path) -> dict:
    """A run's own store, cache, state and HOME under ``work``: set for this process, and
    returned (as an installed eidetic's environment) for the CLI processes it starts."""
    env = os.environ.copy()
    env.update({"EIDETIC_DATA_DIR": str(work / "store"), "EIDETIC_CACHE_DIR": str(work / "cache"),
                "EIDETIC_STATE_DIR": str(work / "state"), "HOME": str(work / "home")})
    os.environ.update({k: env[k] for k in ("EIDETIC_DATA_DIR", "EIDETIC_CACHE_DIR", "EIDETIC_STATE_DIR")})
    return installed_env(env)


def recall_latencies(memory, mode: str, queries: list[str]) -> dict:
    """p50/p95 of in-process top-10 recalls, one per query."""
    latencies = []
    for query in queries:
        started = time.perf_counter()
        memory.recall(query, mode=mode, top_k=10)
        latencies.append((time.perf_counter() - started) * 1000)
    return summary(latencies)


def run_cli(args: list[str], env: dict, stdin=None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "eidetic", *args], env=env, stdin=stdin,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"eidetic {' '.join(args)} failed: {proc.stderr}")
    return elapsed, proc


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--processes", type=int, default=21, help="CLI runs per mode")
    parser.add_argument("--ingest-runs", type=int, default=3, help="fresh-store ingests (median)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="eidetic-speed-"))
    env = isolated_env(work)
    result: dict = {"records": args.records, "machine": machine(),
                    "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}

    print(f"generating {args.records} records ...", flush=True)
    corpus = records(args.records)
    words = sum(len(r["text"].split()) for r in corpus)
    result["mean_words"] = round(words / len(corpus), 1)
    ndjson = work / "records.ndjson"
    with ndjson.open("w") as handle:
        for record in corpus:
            handle.write(json.dumps(record) + "\n")

    print(f"ingest (eidetic remember < NDJSON, one process, {args.ingest_runs} fresh stores) ...", flush=True)
    runs = []
    for _ in range(args.ingest_runs):
        for folder in ("store", "cache", "state"):
            shutil.rmtree(work / folder, ignore_errors=True)
        with ndjson.open() as stdin:
            runs.append(run_cli(["remember", "--json", "--no-embed"], env, stdin=stdin)[0])
    seconds = statistics.median(runs)
    result["ingest"] = {"seconds": round(seconds, 2), "records_per_s": round(args.records / seconds),
                        "runs_s": [round(r, 2) for r in runs]}
    print(f"  {result['ingest']}", flush=True)

    from eidetic import Memory
    from eidetic.records import record_path

    store = work / "store"
    result["disk"] = {"store_mb": round(sum(p.stat().st_size for p in store.rglob("*.md")) / 1e6, 1),
                      "index_mb": round(sum(p.stat().st_size for p in (work / "cache").rglob("*")
                                            if p.is_file()) / 1e6, 1)}
    kw_queries = keyword_queries(corpus, args.queries)
    ex_queries = exact_queries(corpus, args.queries)
    with Memory.open() as memory:
        memory.recall("warm up", mode="keyword")
        for mode, queries in (("keyword", kw_queries), ("exact", ex_queries)):
            result[f"{mode}_in_process"] = recall_latencies(memory, mode, queries)
            print(f"  {mode} in-process: {result[f'{mode}_in_process']}", flush=True)

    for mode, queries in (("keyword", kw_queries), ("exact", ex_queries)):
        walls = [run_cli(["recall", q, "--mode", mode, "--json"], env)[0] * 1000
                 for q in queries[: args.processes]]
        result[f"{mode}_cli_process"] = summary(walls)
        print(f"  {mode} as a new process: {result[f'{mode}_cli_process']}", flush=True)

    startup = [run_cli(["--help"], env)[0] * 1000 for _ in range(11)]
    result["cli_help"] = summary(startup)

    rng = random.Random(5)
    watcher = None
    for style in ("rename", "in_place", "in_place_watched"):
        if style == "in_place_watched":
            watcher = subprocess.Popen([sys.executable, "-m", "eidetic", "watch"], env=env,
                                       stderr=subprocess.PIPE, text=True)
            watcher.stderr.readline()  # "watching ...": the watch is set up
            time.sleep(0.2)
        visible, first_recall = [], []
        for trial in range(5):
            target = store / record_path(f"rec-{rng.randrange(args.records):07d}")
            marker = f"zqx{style.replace('_', '')}{trial}marker"
            content = target.read_text().rstrip("\n") + f" {marker}\n"
            edited_at = time.perf_counter()
            if style == "rename":
                temp = target.with_name(".edit.tmp")
                temp.write_text(content)
                os.replace(temp, target)
            else:
                with target.open("r+") as handle:
                    handle.seek(0)
                    handle.write(content)
                    handle.truncate()
            attempts = 0
            while True:
                attempts += 1
                wall, proc = run_cli(["recall", marker, "--mode", "keyword", "--json", "--no-record"], env)
                if attempts == 1:
                    first_recall.append(wall * 1000)
                if json.loads(proc.stdout)["items"]:
                    visible.append((time.perf_counter() - edited_at) * 1000)
                    break
                if attempts > 400:
                    raise SystemExit(f"{style} edit never became visible")
                if style == "in_place_watched":
                    time.sleep(0.01)
        result[f"hand_edit_{style}"] = {"visible_after_ms": summary(visible),
                                        "first_recall_ms": summary(first_recall)}
        print(f"  hand edit ({style}): {result[f'hand_edit_{style}']}", flush=True)
    if watcher is not None:
        watcher.terminate()
        watcher.wait(timeout=30)

    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"speed-files-{args.records}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    print(table(result))
    update_doc(f"speed-files-{args.records}", table(result))


def table(r: dict) -> str:
    rows = [
        ("remember from NDJSON, --no-embed (one process; median of fresh stores)", f"{r['ingest']['records_per_s']:,} records/s (runs: {', '.join(f'{x} s' for x in r['ingest']['runs_s'])})"),
        ("keyword recall, in-process, top-10", f"p50 {r['keyword_in_process']['p50_ms']} ms, p95 {r['keyword_in_process']['p95_ms']} ms"),
        ("exact recall, in-process, top-10", f"p50 {r['exact_in_process']['p50_ms']} ms, p95 {r['exact_in_process']['p95_ms']} ms"),
        ("`eidetic recall --mode keyword` new process", f"p50 {r['keyword_cli_process']['p50_ms']} ms, p95 {r['keyword_cli_process']['p95_ms']} ms"),
        ("`eidetic recall --mode exact` new process", f"p50 {r['exact_cli_process']['p50_ms']} ms, p95 {r['exact_cli_process']['p95_ms']} ms"),
        ("`eidetic --help` new process", f"p50 {r['cli_help']['p50_ms']} ms"),
        ("hand edit by rename: visible after", f"p50 {r['hand_edit_rename']['visible_after_ms']['p50_ms']} ms"),
        ("hand edit in place: visible after", f"p50 {r['hand_edit_in_place']['visible_after_ms']['p50_ms']} ms, p95 {r['hand_edit_in_place']['visible_after_ms']['p95_ms']} ms (verification slice, recalls back to back)"),
        ("hand edit in place, `eidetic watch` running: visible after", f"p50 {r['hand_edit_in_place_watched']['visible_after_ms']['p50_ms']} ms, p95 {r['hand_edit_in_place_watched']['visible_after_ms']['p95_ms']} ms"),
        ("disk: record files / index", f"{r['disk']['store_mb']} MB / {r['disk']['index_mb']} MB"),
    ]
    lines = [f"Files store, {r['records']:,} records (mean {r['mean_words']} words), {r['date']}, {r['machine']}",
             "", "| measure | result |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
