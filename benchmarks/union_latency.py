"""Keyword and hybrid recall latency over a store half public, half private to the caller: the
case where BM25 statistics are summed over partitions (``ranking.bm25``), and with ``--turns N``
every record a turn of a conversation of N turns whose public and private turns alternate: the
case where conversation context is read over partitions (``ranking.windows``).

    python benchmarks/union_latency.py WORK --size 20000 --queries 100 --rounds 3 [--turns 50]

The first run fills ``WORK`` (a files store, one ``remember --no-embed`` process, timed, with
planted vectors as in ``speed.py``); later runs reuse it. Prints the median in-process top-10 latency per mode and
round. To compare two versions of eidetic, run this script with each on ``PYTHONPATH`` (each
with its own ``WORK``: the keyword index layout may differ) and alternate the runs, as the
machine is shared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from measure import ingest_no_embed, isolated_env, plant_vectors  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path)
    parser.add_argument("--size", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=0, help="records per conversation (0: none in one)")
    args = parser.parse_args()
    corpus = records(args.size)
    for i, record in enumerate(corpus):  # every other record private to the asking scope
        if i % 2:
            record["scope"] = {"name": "me", "visibility": "private"}
        if args.turns:
            record["metadata"] = {**record["metadata"], "thread": f"chat-{i // args.turns}"}
    env = isolated_env(args.work)
    if not (args.work / "store").exists():
        args.work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        ingest_no_embed(corpus, args.work, env)
        print(json.dumps({"remember_records_per_s": round(args.size / (time.perf_counter() - started))}))
        plant_vectors(corpus, [args.work / "cache"])
    from eidetic import Memory

    queries = keyword_queries(corpus, args.queries, seed=21)
    with Memory.open() as memory:
        for mode in ("keyword", "hybrid"):  # warm: indexes synced, vectors indexed, model loaded
            memory.recall(queries[0], mode=mode, scope="me", visibility="private", record=False)
        for round_ in range(args.rounds):
            for mode in ("keyword", "hybrid"):
                times = []
                for query in queries:
                    started = time.perf_counter()
                    memory.recall(query, mode=mode, top_k=10, scope="me", visibility="private", record=False)
                    times.append((time.perf_counter() - started) * 1000)
                print(json.dumps({"round": round_, "mode": mode, "p50_ms": round(statistics.median(times), 2)}))


if __name__ == "__main__":
    main()
