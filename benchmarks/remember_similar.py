"""What looking for near-duplicates costs a remember: records/s of two versions, side by side.

    python benchmarks/remember_similar.py sqlite --old main [--new HEAD] [--n 10000] [--batch 1000]

One store of ``--n`` records is built once by the old version (``remember --no-embed``; the
vectors of every text planted in the embedding cache, so no model runs and what is timed is the
write and its checks). Each run copies it afresh (folder and cache, database file, or a postgres
database made from it as a template) and one process of each version, taking turns on the
shared machine, times ``Memory.remember`` of the same ``--batch`` new records: once with
``embed=False`` (``--no-embed``: the text rule alone) and once with vectors (cached: the
near-duplicate search by meaning, without the model's own time, which is ~10 records/s either
way). Medians of ``--runs``; the results go to ``benchmarks/results/`` and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import export_tree  # noqa: E402
from corpus import records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402
from measure import backend_store, ingest_no_embed, machine, plant_vectors  # noqa: E402
from report import update_doc  # noqa: E402

COPIED = tuple(name for name in NAMES if name != "neo4j")  # every store but a graph database is copied afresh

WORKER = """
import json, sys, time
from eidetic import Memory
batch = json.load(open(sys.argv[1]))
with Memory.open() as memory:
    memory.recall("warm up", mode="approximate", record=False)  # indexes open, vectors synced, model loaded
    started = time.perf_counter()
    memory.remember(batch, embed=sys.argv[2] == "embed")
    print(time.perf_counter() - started)
"""


def fresh(base: dict, work: Path, name: str, dsn: str | None) -> dict:
    """An environment on a copy of the base store and cache."""
    env = dict(base, EIDETIC_CACHE_DIR=str(work / f"cache-{name}"))
    shutil.copytree(work / "cache", work / f"cache-{name}")
    if base.get("EIDETIC_BACKEND") == "sqlite":
        shutil.copyfile(work / "memory.sqlite", work / f"memory-{name}.sqlite")
        env["EIDETIC_SQLITE_PATH"] = str(work / f"memory-{name}.sqlite")
    elif dsn is not None:
        import psycopg
        from psycopg.conninfo import make_conninfo

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "base"')
        env["EIDETIC_PG_DSN"] = make_conninfo(dsn, dbname=name)
    else:
        shutil.copytree(work / "store", work / f"store-{name}")
        env["EIDETIC_DATA_DIR"] = str(work / f"store-{name}")
    return env


def timed(src: Path, env: dict, batch: Path, how: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(batch), how],
        env={**env, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix="eidetic-remember-similar-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("EIDETIC_")}
    env.update(HOME=str(work / "home"), EIDETIC_STATE_DIR=str(work / "state"), EIDETIC_DATA_DIR=str(work / "store"))
    server = ExitStack()  # a server the backend needs, stopped at the end
    store = server.enter_context(backend_store(args.backend, work))
    env.update(store.env)
    dsn = store.server  # a postgres server's: the base store is a database of its own, each copy's template
    if dsn is not None:
        import psycopg
        from psycopg.conninfo import make_conninfo

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "base"')
        env.update(EIDETIC_PG_DSN=make_conninfo(dsn, dbname="base"))
    try:
        trees = {name: export_tree(rev, work / name) for name, rev in (("old", args.old), ("new", args.new))}
        chunk = records(args.n + args.batch, seed=7)
        stored, new = chunk[: args.n], chunk[args.n :]
        ingest_no_embed(
            stored, work, {**env, "PYTHONPATH": str(trees["old"]), "EIDETIC_CACHE_DIR": str(work / "cache")}
        )
        plant_vectors(chunk, [work / "cache"])
        batch = work / "batch.json"
        batch.write_text(json.dumps(new))
        spent: dict[str, dict[str, list[float]]] = {how: {"old": [], "new": []} for how in ("no-embed", "embed")}
        for number in range(args.runs):
            for how in spent:
                for name in ("old", "new") if number % 2 == 0 else ("new", "old"):
                    copy = fresh(env, work, f"{name}{number}{how.replace('-', '')}", dsn)
                    spent[how][name].append(timed(trees[name], copy, batch, how))
                    print(how, name, round(spent[how][name][-1], 2), flush=True)
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    rates = {
        how: {name: round(args.batch / statistics.median(runs), 1) for name, runs in versions.items()}
        for how, versions in spent.items()
    }
    return {"backend": args.backend, "n": args.n, "batch": args.batch, "old": args.old, "new": args.new,
            "seconds": spent, "records_per_s": rates}  # fmt: skip


def load() -> str:
    """The 1-, 5- and 15-minute load averages: the machine is shared, so the numbers say how busy."""
    return " / ".join(f"{value:.1f}" for value in os.getloadavg())


def table(results: list[dict], date: str, where: str) -> str:
    lines = [
        f"Run {date} on {where}: `python benchmarks/remember_similar.py BACKEND --old OLD --new NEW` (vectors "
        "planted: the model's own time, ~10 records/s, is left out). Records/s, median of the runs; "
        "the load average when the runs ended was " + load() + ".",
        "",
        "| backend | store | batch | old → new | `remember --no-embed` records/s | `remember` (vectors cached) records/s |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        rate = r["records_per_s"]
        lines.append(
            f"| {r['backend']} | {r['n']:,} | {r['batch']:,} | {r['old']} → {r['new']} | "
            f"{rate['no-embed']['old']:,} → {rate['no-embed']['new']:,} | {rate['embed']['old']:,} → {rate['embed']['new']:,} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="+", choices=COPIED)
    parser.add_argument("--old", required=True, help="a git revision before the change")
    parser.add_argument("--new", default="HEAD")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results = []
    for backend in args.backends:
        args.backend = backend
        results.append(run(args))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "remember-similar.json").write_text(json.dumps(results, indent=2) + "\n")
    date = datetime.now(UTC).strftime("%Y-%m-%d")
    print(table(results, date, machine()))
    update_doc("remember-similar", table(results, date, machine()))


if __name__ == "__main__":
    main()
