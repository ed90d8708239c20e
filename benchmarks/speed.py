"""Speed and scale of every backend, 10k to 1M records, and against eidetic-cli: one entry point.

    python benchmarks/speed.py files 10000 100000
    python benchmarks/speed.py sqlite 10000 100000 1000000
    python benchmarks/speed.py postgres 10000 100000       # starts its own PostgreSQL (pgserver)
    python benchmarks/speed.py neo4j 10000                 # starts its own graph server (ArcadeDB, Bolt)
    python benchmarks/speed.py versus 1000 10000           # eidetic-cli 0.14.1 side by side (versus.py)
    python benchmarks/speed.py report                      # the plot and every speed target, from saved results

For each backend and size: a realistic corpus (``corpus.py``: half short notes, half longer
chunks, real English vocabulary) is remembered from NDJSON by ``eidetic remember --no-embed``
processes (up to 100k records a process, the rest in further processes), then each record's
vector is planted in the embedding cache under the real model's name (synthetic, clustered like
sentence embeddings: embedding 1M texts with the NumPy model would take half a day; queries are
always embedded by the real model, inside the measured time). Then: ingest with the embedding
model (new records on top of the store), the first semantic recall (vectors indexed, graph
built), p50/p95 of top-10 recall in-process per mode, recall per mode as a new CLI process with
its peak RSS, ``eidetic --help``, how soon a hand edit is seen (files: rename, in place, in place
with ``eidetic watch``) and disk use. Results go to ``benchmarks/results/speed-<backend>-<n>.json``
and docs/benchmarks.md; ``report`` draws docs/recall-latency.png and checks every target.

The machine is shared and noisy: latencies are medians over many queries; read them as ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import exact_queries, keyword_queries, records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402  (the copy measured is imported after: main)
from measure import (  # noqa: E402
    backend_store,
    folder_bytes,
    isolated_env,
    machine,
    recall_latencies,
    run_cli,
    snapshot,
    summary,
    timed_cli,
)
from report import update_doc  # noqa: E402

RESULTS = HERE / "results"
MODES = ("keyword", "exact", "hybrid", "approximate")
CHUNK = 100_000  # records per `remember` process (and generated at a time: bounded memory)
LARGEST = {"sqlite": 1_000_000}  # the largest store a backend is meant for, where not 100k


def query_sets(first: list[dict], n: int) -> dict[str, list[str]]:
    """The queries of each mode, drawn from the first chunk's records (the same seeds as ever)."""
    return {
        "keyword": keyword_queries(first, n, seed=21),
        "exact": exact_queries(first, n, seed=23),
        "hybrid": keyword_queries(first, n, seed=25),
        "approximate": keyword_queries(first, n, seed=27),
    }


def ingest(n: int, work: Path, env: dict, runs: int) -> tuple[list[dict], dict]:
    """Remember ``n`` records with ``remember --no-embed`` processes (``CHUNK`` records each)
    and plant their vectors; returns the first chunk and the ingest figures. Under ``CHUNK``
    records the ingest is repeated on fresh stores ``runs`` times (median)."""
    from eidetic.embed import local
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash
    from semantic import clustered

    first: list[dict] = []
    seconds: list[float] = []
    for attempt in range(runs if n <= CHUNK else 1):
        if attempt:
            wipe(work, env)
        spent = 0.0
        for number, start in enumerate(range(0, n, CHUNK)):
            chunk = records(min(CHUNK, n - start), seed=7 + number)
            for r in chunk:
                r["id"] = f"c{number}-{r['id']}"
            path = work / "chunk.ndjson"
            path.write_text("".join(json.dumps(r) + "\n" for r in chunk))
            with path.open() as stdin:
                spent += run_cli(["remember", "--json", "--no-embed"], env, stdin=stdin)[0]
            if attempt == 0:
                cache = VectorCache(Path(env["EIDETIC_CACHE_DIR"]) / "vectors.sqlite")
                cache.put(
                    local.MODEL_NAME,
                    ((text_hash(r["text"]), v) for r, v in zip(chunk, clustered(len(chunk), seed=99 + number))),
                )
                cache.close()
                first = first or chunk
            print(f"  {start + len(chunk):,} records, {(start + len(chunk)) / spent:,.0f}/s", flush=True)
        seconds.append(spent)
    median = sorted(seconds)[len(seconds) // 2]
    return first, {
        "records_per_s": round(n / median),
        "runs_s": [round(s, 1) for s in seconds],
        "processes": -(-n // CHUNK),
    }


def wipe(work: Path, env: dict) -> None:
    """An empty store of the same backend, for another ingest run (the vector cache stays)."""
    shutil.rmtree(work / "store", ignore_errors=True)
    shutil.rmtree(work / "state", ignore_errors=True)
    for entry in (work / "cache").iterdir():  # derived indexes go; the planted vectors stay
        if not entry.name.startswith("vectors.sqlite"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    if env.get("EIDETIC_BACKEND") == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(env["EIDETIC_SQLITE_PATH"] + suffix).unlink(missing_ok=True)
    elif env.get("EIDETIC_BACKEND") == "neo4j":
        import neo4j

        uri, database = env["EIDETIC_NEO4J_URI"].rsplit("/", 1)
        auth = (env["EIDETIC_NEO4J_USER"], env["EIDETIC_NEO4J_PASSWORD"])
        with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
            driver.execute_query("MATCH (n) DETACH DELETE n", database_=database)
    elif env.get("EIDETIC_BACKEND") == "postgres":
        import psycopg

        with psycopg.connect(env["EIDETIC_PG_DSN"], autocommit=True) as conn:
            conn.execute("DROP SCHEMA public CASCADE")
            conn.execute("CREATE SCHEMA public")


def warm_up(server, work: Path) -> None:
    """A server that has just started compiles its hot paths (Java's JIT) during its first
    writes: the first 10k ingest took 1.5-2.5x as long as the next ones. A graph server runs for
    months, so it is warmed first: one ingest of other records into a database of its own."""
    env = dict(
        os.environ,
        EIDETIC_CACHE_DIR=str(work / "warm-up" / "cache"),
        EIDETIC_STATE_DIR=str(work / "warm-up" / "state"),
        EIDETIC_BACKEND="neo4j",
        EIDETIC_NEO4J_URI=server.database("warmup"),
        EIDETIC_NEO4J_USER=server.user,
        EIDETIC_NEO4J_PASSWORD=server.password,
    )
    path = work / "warm-up.ndjson"
    path.write_text("".join(json.dumps(dict(r, id=f"warm-{r['id']}")) + "\n" for r in records(10_000, seed=3)))
    with path.open() as stdin:
        seconds = run_cli(["remember", "--json", "--no-embed"], env, stdin=stdin)[0]
    print(f"  server warmed up: 10,000 records into another database in {seconds:.1f} s", flush=True)
    shutil.rmtree(work / "warm-up", ignore_errors=True)


def traversal(memory, first: list[dict], count: int) -> dict:
    """p50/p95 of in-process keyword recalls whose hits lead on through two hops: ``count``
    linked records are remembered on top (each links to the next two and to a record of the
    corpus, so two hops reach about six more), then each is recalled by its own words with
    ``depth=2``. Measured after the other recalls: they see the store as ingested."""
    rng = random.Random(31)
    web = [
        {
            "id": f"web-{i}",
            "text": f"waypoint {i} of the linked web",
            "links": [f"web-{i + 1}", f"web-{i + 2}", rng.choice(first)["id"]],
        }
        for i in range(count)
    ]
    memory.remember(web, embed=False)
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        result = memory.recall(f"waypoint {i}", mode="keyword", depth=2, top_k=10)
        latencies.append((time.perf_counter() - started) * 1000)
        assert any(hit.depth == 2 for hit in result.items), f"waypoint {i}: nothing at depth 2"
    return summary(latencies)


def embedded_ingest(env: dict, count: int) -> dict:
    """``count`` new records remembered with the local embedding model, on top of the store."""
    extra = records(count, seed=5)
    for r in extra:
        r["id"] = f"embedded-{r['id']}"
    path = Path(env["EIDETIC_CACHE_DIR"]).parent / "embedded.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in extra))
    with path.open() as stdin:
        seconds = run_cli(["remember", "--json"], env, stdin=stdin)[0]
    return {"records": count, "seconds": round(seconds, 1), "records_per_s": round(count / seconds, 1)}


def hand_edits(store: Path, first: list[dict], env: dict) -> dict:
    """How soon recall sees a hand-edited record file: replaced by rename, rewritten in place,
    and rewritten in place while ``eidetic watch`` runs (5 edits each, new recall processes
    back to back until the edit shows)."""
    from eidetic.records import record_path

    rng = random.Random(5)
    out: dict = {}
    watcher = None
    for style in ("rename", "in_place", "in_place_watched"):
        if style == "in_place_watched":
            watcher = subprocess.Popen(
                [sys.executable, "-m", "eidetic", "watch"], env=env, stderr=subprocess.PIPE, text=True
            )
            watcher.stderr.readline()  # "watching ...": the watch is set up
            time.sleep(0.2)
        visible = []
        for trial in range(5):
            target = store / record_path(rng.choice(first)["id"])
            marker = f"zqx{style.replace('_', '')}{trial}marker"
            content = target.read_text().rstrip("\n") + f" {marker}\n"
            edited_at = time.perf_counter()
            if style == "rename":
                temp = target.with_name(".edit.tmp")
                temp.write_text(content)
                os.replace(temp, target)
            else:
                with target.open("r+") as handle:
                    handle.write(content)
                    handle.truncate()
            for _ in range(400):
                _, proc = run_cli(["recall", marker, "--mode", "keyword", "--json", "--no-record"], env)
                if json.loads(proc.stdout)["items"]:
                    visible.append((time.perf_counter() - edited_at) * 1000)
                    break
                if style == "in_place_watched":
                    time.sleep(0.01)
            else:
                raise SystemExit(f"{style} edit never became visible")
        out[style] = summary(visible)
        print(f"  hand edit ({style}): visible after {out[style]}", flush=True)
    if watcher is not None:
        watcher.terminate()
        watcher.wait(timeout=30)
    return out


def disk(backend: str, work: Path, env: dict, server: Any) -> dict:
    """MB on disk; the embedding model's prepared weights (cache/models, ~90 MB once per
    machine) and the embedding cache are the model's, not the store's, and are left out."""
    if backend == "files":
        derived = sum(
            folder_bytes(p)
            for p in (work / "cache").iterdir()
            if p.name not in ("models", "model-checks") and not p.name.startswith("vectors.sqlite")
        )
        return {
            "record files": round(folder_bytes(work / "store") / 1e6),
            "derived (keyword index, vectors)": round(derived / 1e6),
        }
    if backend == "sqlite":
        database = sum(folder_bytes(Path(env["EIDETIC_SQLITE_PATH"] + s)) for s in ("", "-wal"))
        return {
            "database": round(database / 1e6),
            "derived (keyword index, vectors)": round(folder_bytes(work / "cache" / "sqlite") / 1e6),
        }
    if backend == "neo4j":
        return {
            "graph server (all its files)": round(folder_bytes(server.root) / 1e6),
            "derived (copy, keyword index, vectors)": round(folder_bytes(work / "cache" / "neo4j") / 1e6),
        }
    import psycopg

    with psycopg.connect(env["EIDETIC_PG_DSN"]) as conn:
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return {"database (tables and indexes)": round(size / 1e6)}


def measure(backend: str, n: int, args: argparse.Namespace) -> dict:
    print(f"\n== {backend}, {n:,} records", flush=True)
    work = Path(tempfile.mkdtemp(prefix=f"eidetic-speed-{backend}-"))
    env = isolated_env(work)
    server = ExitStack()  # a server the backend needs, stopped at the end
    store = server.enter_context(backend_store(backend, work))
    if backend == "neo4j":
        warm_up(store.server, work)
    os.environ.update(store.env)
    env.update(store.env)
    result: dict = {
        "backend": backend,
        "records": n,
        "machine": machine(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    try:
        first, result["ingest"] = ingest(n, work, env, args.ingest_runs)
        result["mean_words"] = round(sum(len(r["text"].split()) for r in first) / len(first), 1)
        queries = query_sets(first, args.queries)
        from eidetic import Memory

        with Memory.open() as memory:
            started = time.perf_counter()
            memory.recall("warm up", mode="hybrid", record=False)
            result["first_semantic_recall_s"] = round(time.perf_counter() - started, 1)
            print(f"  first semantic recall {result['first_semantic_recall_s']} s", flush=True)
            result["in_process"] = {}
            for mode in MODES:
                result["in_process"][mode] = recall_latencies(memory, mode, queries[mode])
                print(f"  {mode} in-process: {result['in_process'][mode]}", flush=True)
            result["traversal"] = traversal(memory, first, args.queries)
            print(f"  keyword recall with a depth-2 traversal: {result['traversal']}", flush=True)
        result["cli"] = {}
        for mode in MODES:
            runs = [
                timed_cli(["recall", q, "--mode", mode, "--top-k", "10", "--json"], env)
                for q in queries[mode][: args.processes]
            ]
            result["cli"][mode] = {
                **summary([wall for wall, _, _ in runs]),
                "peak_rss_mb": round(max(rss for _, rss, _ in runs)),
            }
            print(f"  {mode} as a new process: {result['cli'][mode]}", flush=True)
        result["cli_help"] = summary([timed_cli(["--help"], env)[0] for _ in range(11)])
        result["ingest_embedded"] = embedded_ingest(env, args.embedded)
        print(f"  remember with the embedding model: {result['ingest_embedded']}", flush=True)
        if backend == "files":
            result["hand_edit"] = hand_edits(work / "store", first, env)
        result["disk_mb"] = disk(backend, work, env, store.server)
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    saved = RESULTS / f"speed-{backend}-{n}.json"
    saved.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc(f"speed-{backend}-{n}", table(result))
    return result


def table(r: dict) -> str:
    lines = [
        f"### `{r['backend']}` at {r['records']:,} records",
        "",
        f"{r['date']}, {r['machine']}; mean {r['mean_words']} words a record.",
        "",
        "| recall, top 10 | in-process p50 | p95 | new process p50 | p95 | peak RSS |",
        "|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        inside, cli = r["in_process"][mode], r["cli"][mode]
        lines.append(
            f"| {mode} | {inside['p50_ms']} ms | {inside['p95_ms']} ms | {cli['p50_ms']} ms | "
            f"{cli['p95_ms']} ms | {cli['peak_rss_mb']} MB |"
        )
    ingest, embedded = r["ingest"], r["ingest_embedded"]
    lines += [""]
    if "traversal" in r:
        lines.append(
            f"- keyword recall whose hits lead on two hops (`depth=2`, ~6 linked records reached), "
            f"in-process: p50 {r['traversal']['p50_ms']} ms, p95 {r['traversal']['p95_ms']} ms"
        )
    lines += [
        f"- `remember --no-embed` from NDJSON: **{ingest['records_per_s']:,} records/s** "
        f"({ingest['processes']} process{'es' if ingest['processes'] > 1 else ''}; runs "
        + ", ".join(f"{s} s" for s in ingest["runs_s"])
        + ")",
        f"- `remember` with the local embedding model, {embedded['records']} more records: "
        f"{embedded['records_per_s']} records/s (the model's own speed, whatever the store size)",
        f"- first semantic recall (vectors indexed from the cache, graph built): {r['first_semantic_recall_s']} s",
        f"- `eidetic --help`: p50 {r['cli_help']['p50_ms']} ms",
        "- disk: " + ", ".join(f"{k} {v:,} MB" for k, v in r["disk_mb"].items()),
    ]
    if "hand_edit" in r:
        edit = r["hand_edit"]
        lines.append(
            f"- a hand edit is seen by recall after: p50 {edit['rename']['p50_ms']} ms (file replaced by "
            f"rename), {edit['in_place']['p50_ms']} ms (rewritten in place, no watcher), "
            f"{edit['in_place_watched']['p50_ms']} ms (in place, `eidetic watch` running)"
        )
    elif r["backend"] == "neo4j":
        lines.append(
            "- hand edits: a change made in Cypher outside eidetic is not in the change sequence: "
            "`eidetic index --rebuild` takes it in"
        )
    else:
        lines.append(
            "- hand edits: none to catch up with (the database is the store; every change goes through eidetic)"
        )
    return "\n".join(lines)


def load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def targets() -> list[tuple[str, str, float | None, str, bool | None]]:
    """Every speed target of the issues, against the saved results: (issue, target, measured,
    unit, met); ``measured`` is None where that benchmark has not been run."""

    def at(backend: str, n: int, *path: str) -> float | None:
        found = load(f"speed-{backend}-{n}.json")
        for key in path:
            if found is None:
                return None
            found = found.get(key)
        return found

    semantic, memory_recall, versus = load("semantic.json"), load("memory-recall-10000.json"), load("versus.json")
    ann_1m = next(
        (
            v
            for v in (semantic or {}).get("vector_index", [])
            if v["vectors"] == 1_000_000 and v["data"] == "embedding-like"
        ),
        None,
    )
    ratios = {}
    if versus and versus["sizes"]:
        largest = max(versus["sizes"], key=lambda s: s["records"])
        if largest["records"] >= 10_000:
            ratios = largest["ratios"]
    rows = [
        (
            "2",
            "files 100k: keyword recall p50 in-process",
            at("files", 100_000, "in_process", "keyword", "p50_ms"),
            "ms",
            "<=",
            10,
        ),
        (
            "2",
            "files 100k: exact recall p50 in-process",
            at("files", 100_000, "in_process", "exact", "p50_ms"),
            "ms",
            "<=",
            10,
        ),
        (
            "2",
            "files 100k: `recall --mode keyword` new process p50",
            at("files", 100_000, "cli", "keyword", "p50_ms"),
            "ms",
            "<=",
            300,
        ),
        (
            "2",
            "files 100k: `remember` from NDJSON",
            at("files", 100_000, "ingest", "records_per_s"),
            "records/s",
            ">=",
            5000,
        ),
        (
            "2",
            "files 100k: a hand edit (rename) seen by recall, p50",
            at("files", 100_000, "hand_edit", "rename", "p50_ms"),
            "ms",
            "<=",
            300,
        ),
        (
            "2",
            "files 100k: a hand edit in place, `eidetic watch` running, p50",
            at("files", 100_000, "hand_edit", "in_place_watched", "p50_ms"),
            "ms",
            "<=",
            300,
        ),
        (
            "4",
            "files 100k: hybrid recall p50 in-process",
            at("files", 100_000, "in_process", "hybrid", "p50_ms"),
            "ms",
            "<=",
            30,
        ),
        (
            "4",
            "files 100k: hybrid recall new process p50 (model load included)",
            at("files", 100_000, "cli", "hybrid", "p50_ms"),
            "ms",
            "<=",
            600,
        ),
        (
            "4",
            "1M vectors: top-10 search with the ANN index, p50",
            ann_1m["search_top100_ms"]["p50_ms"] if ann_1m else None,
            "ms",
            "<=",
            20,
        ),
        (
            "5",
            "10k memory files: `memory-recall` process p50",
            (memory_recall or {}).get("memory_recall_ms", {}).get("p50_ms"),
            "ms",
            "<=",
            300,
        ),
        (
            "6",
            "sqlite 1M: keyword recall p50 in-process",
            at("sqlite", 1_000_000, "in_process", "keyword", "p50_ms"),
            "ms",
            "<=",
            20,
        ),
        (
            "6",
            "sqlite 1M: hybrid recall p50 in-process",
            at("sqlite", 1_000_000, "in_process", "hybrid", "p50_ms"),
            "ms",
            "<=",
            100,
        ),
        (
            "6",
            "postgres 100k: keyword recall p50 in-process",
            at("postgres", 100_000, "in_process", "keyword", "p50_ms"),
            "ms",
            "<=",
            50,
        ),
        (
            "6",
            "postgres 100k: hybrid recall p50 in-process",
            at("postgres", 100_000, "in_process", "hybrid", "p50_ms"),
            "ms",
            "<=",
            50,
        ),
        (
            "7",
            "sqlite 1M: peak RSS of a hybrid recall process",
            at("sqlite", 1_000_000, "cli", "hybrid", "peak_rss_mb"),
            "MB",
            "<=",
            1536,
        ),
        (
            "7",
            "10k records: ingest vs eidetic-cli (ours --no-embed)",
            ratios.get("ingest_vs_no_embed"),
            "x faster",
            ">=",
            100,
        ),
        ("7", "10k records: keyword recall process vs eidetic-cli", ratios.get("keyword"), "x faster", ">=", 5),
        ("7", "10k records: hybrid recall process vs eidetic-cli", ratios.get("hybrid"), "x faster", ">=", 20),
        (
            "21",
            "neo4j 10k: keyword recall p50 in-process",
            at("neo4j", 10_000, "in_process", "keyword", "p50_ms"),
            "ms",
            "<=",
            50,
        ),
        (
            "21",
            "neo4j 10k: hybrid recall p50 in-process",
            at("neo4j", 10_000, "in_process", "hybrid", "p50_ms"),
            "ms",
            "<=",
            50,
        ),
        (
            "21",
            "neo4j 10k: recall with a depth-2 traversal p50",
            at("neo4j", 10_000, "traversal", "p50_ms"),
            "ms",
            "<=",
            50,
        ),
        (
            "21",
            "neo4j 10k: remember --no-embed",
            at("neo4j", 10_000, "ingest", "records_per_s"),
            "records/s",
            ">=",
            1000,
        ),
    ]
    out = []
    for issue, what, measured, unit, sense, limit in rows:
        met = None if measured is None else (measured <= limit if sense == "<=" else measured >= limit)
        out.append((issue, f"{what} {'≤' if sense == '<=' else '≥'} {limit:,} {unit}", measured, unit, met))
    return out


def report() -> None:
    import plot

    found = plot.points()
    plot.plot(found, HERE.parent / "docs" / "recall-latency.png")
    lines = [
        plot.table(found),
        "",
        "### Every speed target, from the saved results",
        "",
        "| issue | target | measured | |",
        "|---|---|---|---|",
    ]
    for issue, what, measured, unit, met in targets():
        shown = "not run" if measured is None else f"{measured:,} {unit}"
        lines.append(f"| {issue} | {what} | {shown} | {'' if met is None else 'met' if met else '**not met**'} |")
    body = "\n".join(lines)
    update_doc("speed-report", body)
    print(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for backend in NAMES:
        one = sub.add_parser(
            backend, help=f"measure the {backend} backend (meant for up to {LARGEST.get(backend, 100_000):,} records)"
        )
        one.add_argument("sizes", type=int, nargs="+")
        one.add_argument("--queries", type=int, default=200, help="in-process recalls per mode")
        one.add_argument("--processes", type=int, default=11, help="new recall processes per mode")
        one.add_argument("--ingest-runs", type=int, default=3, help="fresh-store ingests, median (up to 100k)")
        one.add_argument("--embedded", type=int, default=200, help="records remembered with the model")
    versus = sub.add_parser("versus", help="eidetic-cli 0.14.1 side by side (benchmarks/versus.py)")
    versus.add_argument("rest", nargs=argparse.REMAINDER, help="sizes, then any versus.py options")
    sub.add_parser("report", help="the plot and every speed target, from the saved results")
    args = parser.parse_args()
    if args.what in NAMES:  # measure eidetic as it is now, whatever is edited during the run
        source = snapshot(Path(tempfile.mkdtemp(prefix="eidetic-speed-source-")))
        sys.path.insert(0, str(source))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))
        for module in [name for name in sys.modules if name.partition(".")[0] == "eidetic"]:
            del sys.modules[module]  # the table of backends came from the working tree; the rest comes from the copy
    if args.what == "versus":
        import versus as side_by_side

        rest = args.rest
        count = next((i for i, a in enumerate(rest) if not a.isdigit()), len(rest))  # leading sizes
        side_by_side.main((["--sizes", *rest[:count]] if count else []) + rest[count:])
    elif args.what == "report":
        report()
    else:
        for n in args.sizes:
            measure(args.what, n, args)
        report()


if __name__ == "__main__":
    main()
