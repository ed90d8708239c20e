"""Exact search on the postgres backend: what its trigram filter costs and what it buys.

    python benchmarks/postgres_exact.py 100000 --old bfd6e90      # starts its own PostgreSQL

On one throwaway server (pgserver), with the version at ``--old`` (schema 4: no trigrams) and this
one taking turns, so both see the same load on this shared machine:

1. ingest: ``remember --no-embed`` of ``--ingest`` records into a fresh database, ``--runs``
   times each version, alternating (the median of each);
2. upgrade: the old version remembers ``n`` records; this version opens that store, which
   upgrades it to schema 5 (every row's trigrams computed, the GIN index built, vacuumed);
3. exact recall as ``speed.py`` measures it (top 10 in-process, its exact queries), by the old
   version before the upgrade and by this one after;
4. routes: on that store, the viewer benchmark's exact queries (two words in a row of a random
   record, ``serve_pages.py``) and the speed benchmark's (``corpus.exact_queries``), first page
   (50) each: the walk by length alone, the filter alone, and the route exact search picks,
   whose answers must be the walk's. The load average (1, 5, 15 minutes) is noted at the end.

Results: ``benchmarks/results/postgres-exact-N.json`` and the ``postgres-exact`` section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import export_tree  # noqa: E402
from corpus import exact_queries, records  # noqa: E402
from measure import backend_store, ingest_no_embed, machine, summary  # noqa: E402
from report import update_doc  # noqa: E402

PAGE = 50  # what a top-10 recall asks of a store first (``first_page``)


def database(server: str, name: str) -> str:
    """A fresh database on ``server``; its DSN."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return make_conninfo(server, dbname=name)


def ingest(server: str, src: Path, chunk: list[dict], work: Path, name: str) -> tuple[float, str]:
    """Seconds for ``src``'s ``remember --no-embed`` of ``chunk`` into a fresh database; its DSN."""
    dsn = database(server, name)
    env = {"EIDETIC_BACKEND": "postgres", "EIDETIC_PG_DSN": dsn, "HOME": str(work / "home")}
    env.update(EIDETIC_CACHE_DIR=str(work / "cache"), EIDETIC_STATE_DIR=str(work / "state"))
    started = time.perf_counter()
    ingest_no_embed(chunk, work, {**os.environ, **env, "PYTHONPATH": str(src)})
    return time.perf_counter() - started, dsn


def ingests(server: str, old: Path, n: int, runs: int, work: Path) -> dict:
    """Records/s of each version, alternating (the median of ``runs`` each), and the size of
    the database each made."""
    chunk = records(n, seed=7)
    seconds: dict[str, list[float]] = {"old": [], "new": []}
    made: dict[str, str] = {}
    for run in range(runs):
        for name, src in (("old", old), ("new", HERE.parent / "src")):
            spent, made[name] = ingest(server, src, chunk, work, f"ingest_{name}_{run}")
            seconds[name].append(spent)
            print(f"  ingest {name} {n:,}: {spent:.1f} s", flush=True)
    return {
        name: {
            "records_per_s": round(n / statistics.median(s)),
            "runs_s": [round(x, 1) for x in s],
            **sizes(made[name]),
        }
        for name, s in seconds.items()
    }


def sizes(dsn: str) -> dict:
    import psycopg

    with psycopg.connect(dsn) as conn:
        database_mb, trigram_index_mb = conn.execute(
            "SELECT pg_database_size(current_database()) / 1e6, "
            "coalesce(pg_relation_size(to_regclass('eidetic_docs_trigrams')), 0) / 1e6"
        ).fetchone()
    return {"database_mb": round(float(database_mb)), "trigram_index_mb": round(float(trigram_index_mb))}


def queries(chunk: list[dict]) -> dict[str, list[str]]:
    """The viewer benchmark's exact queries (as ``serve_pages.pages`` draws them) and the speed
    benchmark's."""
    rng = random.Random(5)
    viewer = [" ".join(chunk[rng.randrange(len(chunk))]["text"].split()[2:4]) for _ in range(50)]
    return {"viewer": viewer, "speed": exact_queries(chunk, 200, seed=23)}


def timed(store, query: str) -> dict[str, float]:
    """ms of the walk alone, the filter alone (the walk's for a query under 3 characters, which
    has no other route) and the chosen route for one first page; their answers must agree."""
    from eidetic.docsql.searches import DocSearches
    from eidetic.ranking.access import Access
    from eidetic.ranking.filters import Filters
    from eidetic.stores.postgres import exact, trigrams

    searches = store._searches  # the store's own, with the statistics it routes by
    access, filters = Access(), Filters()
    calls = {
        "walk": lambda: DocSearches(store._session).exact(query, False, access, filters, PAGE),
        "chosen": lambda: searches.exact(query, False, access, filters, PAGE),
    }
    grams = trigrams.of_query(query)
    if grams is not None:
        keys = exact.plan(grams, searches.stats.get())[0]
        check, needle = store._session.dialect.text_contains(query, False)
        narrow = (trigrams.CANDIDATES, [keys])
        admission = searches.admission(access, filters)
        calls["filter"] = lambda: searches._shortest(admission, check, needle, PAGE, 0, narrow)
    spent, answers = {}, []
    for route, call in calls.items():
        started = time.perf_counter()
        answers.append([doc for doc, *_ in call()])
        spent[route] = (time.perf_counter() - started) * 1000
    assert all(answer == answers[0] for answer in answers), query
    spent.setdefault("filter", spent["walk"])
    return spent


def routes(dsn: str, chunk: list[dict]) -> dict:
    """p50/p95 of the walk alone, the filter alone and the chosen route, per query set."""
    from eidetic.stores.postgres import PostgresStore

    store = PostgresStore(dsn)
    store.count()
    out = {}
    for name, batch in queries(chunk).items():
        spent = [timed(store, query) for query in batch]
        out[name] = {route: summary([one[route] for one in spent]) for route in ("walk", "filter", "chosen")}
        print(f"  {name}: {out[name]}", flush=True)
    store.close()
    return out


RECALLS = """
import json, sys
from measure import recall_latencies
from eidetic import Memory
queries = json.loads(sys.stdin.read())
memory = Memory.open(backend="postgres", dsn=sys.argv[1])
memory.recall(queries[0], mode="exact", top_k=10)  # connected, statistics read
print(json.dumps(recall_latencies(memory, "exact", queries)))
"""


def recalls(src: Path, dsn: str, batch: list[str], work: Path) -> dict:
    """p50/p95 of in-process top-10 exact recalls by the version at ``src`` (as ``speed.py``
    measures them: through ``Memory.recall``, usage recorded)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)]), "HOME": str(work / "home")}
    env.update(EIDETIC_CACHE_DIR=str(work / "cache"), EIDETIC_STATE_DIR=str(work / "state"))
    proc = subprocess.run(
        [sys.executable, "-c", RECALLS, dsn],
        input=json.dumps(batch),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def upgrade(dsn: str) -> float:
    """Seconds for this version to open the old version's store: the upgrade to schema 5."""
    from eidetic.stores.postgres import PostgresStore

    started = time.perf_counter()
    store = PostgresStore(dsn)
    store.count()
    store.close()
    return time.perf_counter() - started


def table(r: dict) -> str:
    old, new = r["ingest"]["old"], r["ingest"]["new"]
    lines = [
        f"### `postgres`, exact search at {r['records']:,} records (`benchmarks/postgres_exact.py`)",
        "",
        f"{r['date']}, {r['machine']}, against {r['old']} (schema 4); load average {r['load']}.",
        "",
        "| measure | before (walk only) | after (trigram filter) |",
        "|---|---|---|",
        f"| `remember --no-embed`, {r['ingest_records']:,} records (median of {len(old['runs_s'])}) | "
        f"{old['records_per_s']:,} records/s | {new['records_per_s']:,} records/s |",
        f"| database after that ingest | {old['database_mb']:,} MB | "
        f"{new['database_mb']:,} MB (trigram index {new['trigram_index_mb']} MB) |",
        f"| upgrade of a {r['records']:,}-record store to schema 5 (its first open) | | {r['upgrade_s']} s |",
        f"| exact recall, top 10 in-process (`speed.py`'s queries and measure), p50 / p95 | "
        f"{r['recall_before']['p50_ms']} / {r['recall_before']['p95_ms']} ms | "
        f"{r['recall_after']['p50_ms']} / {r['recall_after']['p95_ms']} ms |",
    ]
    for name, label in (("viewer", "viewer's queries"), ("speed", "speed benchmark's queries")):
        t = r["routes"][name]
        lines.append(
            f"| exact, {label}, first page, p50 / p95 | {t['walk']['p50_ms']} / {t['walk']['p95_ms']} ms | "
            f"{t['chosen']['p50_ms']} / {t['chosen']['p95_ms']} ms (filter alone: "
            f"{t['filter']['p50_ms']} / {t['filter']['p95_ms']} ms) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="records in the store whose upgrade and searches are timed")
    parser.add_argument("--old", required=True, help="the commit to compare with (schema 4)")
    parser.add_argument("--ingest", type=int, default=10_000, help="records per timed ingest (default 10,000)")
    parser.add_argument("--runs", type=int, default=3, help="timed ingests per version (default 3)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eidetic-pg-exact-"))
    with backend_store("postgres", work) as store:
        server = store.server
        old = export_tree(args.old, work / "old")
        result: dict = {"records": args.n, "old": args.old, "ingest_records": args.ingest, "machine": machine()}
        result["ingest"] = ingests(server, old, args.ingest, args.runs, work)
        chunk = records(args.n, seed=7)
        print(f"the old version remembers {args.n:,} records", flush=True)
        _, dsn = ingest(server, old, chunk, work, "store")
        speed = queries(chunk)["speed"]
        result["recall_before"] = recalls(old, dsn, speed, work)
        result["upgrade_s"] = round(upgrade(dsn), 1)
        result["recall_after"] = recalls(HERE.parent / "src", dsn, speed, work)
        result["routes"] = routes(dsn, chunk)
        result["load"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    result["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    print(table(result))
    saved = HERE / "results" / f"postgres-exact-{args.n}.json"
    saved.write_text(json.dumps(result, indent=2) + "\n")
    update_doc("postgres-exact", table(result))


if __name__ == "__main__":
    main()
