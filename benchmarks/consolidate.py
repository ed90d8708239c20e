"""Time of ``eidetic consolidate`` at one store size, and how many planted near-duplicates it finds.

    python benchmarks/consolidate.py sqlite 100000
    python benchmarks/consolidate.py files 100000
    python benchmarks/consolidate.py postgres 100000     # starts its own PostgreSQL
    python benchmarks/consolidate.py neo4j 10000         # starts its own graph server

The store is built as ``serve_pages.py`` builds it (``remember --no-embed``, vectors planted in
the embedding cache under the real model's name, so no model runs), with ``--clusters``
near-duplicate clusters of 2-4 records planted in it: copies of a record with a word added,
whose vectors are the original's plus a little noise (cosine ~0.97). The other vectors are
``semantic.isotropic``'s (2,000 centres, neighbours at cosine ~0.55): MiniLM-like sentences do not
sit at 0.9 of each other unless they say the same thing. Timed in-process, as ``Memory.consolidate``:
the first dry run (vectors indexed from the cache, the HNSW graph built, as a first semantic
recall would), then ``--runs`` dry runs (their median), then one ``--apply``. Results go to
``benchmarks/results/consolidate-BACKEND-N.json`` and docs/benchmarks.md ("Consolidate").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402
from measure import Store, backend_store, ingest_no_embed, machine, use_store  # noqa: E402

ADDED = ("again", "too", "as well")  # what each copy of a planted cluster adds to the original's text


def build(store: Store, n: int, clusters: int, work: Path) -> set[frozenset[str]]:
    """A store of ``n`` records at ``work`` (``clusters`` of them near-duplicate clusters), with
    every text's vector in the cache; returns the planted clusters' ids."""
    import numpy as np

    from eidetic.embed import local
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash
    from semantic import isotropic

    use_store(store, work)
    rng = np.random.default_rng(3)
    sizes = rng.integers(2, 5, clusters)
    chunk = records(n - int(sizes.sum() - clusters), seed=7)
    vectors = list(isotropic(len(chunk), seed=99))
    planted: set[frozenset[str]] = set()
    for number, (origin, size) in enumerate(zip(rng.choice(len(chunk), clusters, replace=False), sizes)):
        ids = [chunk[origin]["id"]]
        for copy in range(size - 1):
            # a word, not a number: copies that differ in a number are not near-duplicates (ranking.particulars)
            twin = dict(chunk[origin], id=f"dup-{number}-{copy}", text=chunk[origin]["text"] + " " + ADDED[copy])
            noisy = vectors[origin] + rng.standard_normal(len(vectors[origin])).astype(np.float32) * 0.012
            chunk.append(twin)
            vectors.append(noisy / np.linalg.norm(noisy))
            ids.append(twin["id"])
        planted.add(frozenset(ids))
    cache = VectorCache(work / "cache" / "vectors.sqlite")
    cache.put(local.MODEL_NAME, ((text_hash(r["text"]), v) for r, v in zip(chunk, vectors)))
    cache.close()
    for start in range(0, len(chunk), 20_000):
        ingest_no_embed(chunk[start : start + 20_000], work, {**os.environ, "PYTHONPATH": str(REPO / "src")})
    return planted


def measure(planted: set[frozenset[str]], runs: int) -> dict:
    from eidetic import Memory

    def timed(apply: bool) -> tuple[float, dict]:
        with Memory.open() as memory:
            started = time.perf_counter()
            report = memory.consolidate(apply=apply).to_dict()
            return time.perf_counter() - started, report

    first, report = timed(False)
    dry = [timed(False)[0] for _ in range(runs)]
    found = {frozenset([c["survivor"]["id"], *(m["id"] for m in c["members"])]) for c in report["items"]}
    applied, done = timed(True)
    return {
        "scanned": report["scanned"],
        "without_vectors": report["without_vectors"],
        "planted_clusters": len(planted),
        "clusters_found": len(found),
        "planted_found_whole": len(planted & found),
        "first_dry_run_s": round(first, 2),
        "dry_run_median_s": round(statistics.median(dry), 2),
        "dry_runs": len(dry),
        "apply_s": round(applied, 2),
        "superseded": done["superseded"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backend", choices=NAMES)
    parser.add_argument("n", type=int)
    parser.add_argument("--clusters", type=int, default=200, help="near-duplicate clusters planted (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="dry runs after the first (default 3)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eidetic-consolidate-"))
    server = ExitStack()  # a server the backend needs, stopped at the end
    try:
        store = server.enter_context(backend_store(args.backend, work))
        print(f"building a {args.backend} store of {args.n:,} records", flush=True)
        started = time.perf_counter()
        planted = build(store, args.n, args.clusters, work)
        print(f"built in {time.perf_counter() - started:.0f} s; consolidating", flush=True)
        result = {
            "backend": args.backend,
            "records": args.n,
            "machine": machine(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            **measure(planted, args.runs),
        }
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    saved = HERE / "results" / f"consolidate-{args.backend}-{args.n}.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
