"""Speed of semantic recall: embedding throughput, the vector index (exact and HNSW) at up to
1M vectors with its recall@10 against exact search, and hybrid recall on a 100k-record files
store, in-process and as a new CLI process (model load included).

    python benchmarks/semantic.py [--records 100000] [--ann-sizes 100000 1000000]

The 100k store's record vectors are synthetic (clustered unit vectors, written into the
embedding cache under the real model's name): embedding 100k texts with the NumPy model takes
about an hour on this machine, and search latency depends on the number and dimension of the
vectors, not on where they came from. Queries are embedded by the real model, inside the
measured time. Embedding throughput is measured separately on real texts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from measure import isolated_env, machine, recall_latencies, run_cli, summary  # noqa: E402
from report import update_doc  # noqa: E402

DIM = 384


def clustered(n: int, seed: int) -> np.ndarray:  # noqa: F821
    """Unit vectors shaped like sentence embeddings: 2,000 topics of log-normal sizes, each a
    small region of low intrinsic dimension (a random 16-d subspace around a centre, plus a
    little isotropic noise). Nearest neighbours sit at cosine ~0.6-0.9, as with MiniLM."""
    import numpy as np

    rng = np.random.default_rng(seed)
    topics, sub = 2000, 16
    centres = rng.standard_normal((topics, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    bases = np.linalg.qr(rng.standard_normal((topics, DIM, sub)).astype(np.float32))[0]
    scale = np.exp(rng.uniform(np.log(0.6), np.log(1.6), topics)).astype(np.float32)
    weights = rng.lognormal(0, 1.0, topics)
    weights /= weights.sum()
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 50_000):
        count = min(50_000, n - start)
        topic = rng.choice(topics, count, p=weights)
        z = rng.standard_normal((count, sub)).astype(np.float32) * (0.06 * scale[topic])[:, None]
        block = (
            centres[topic]
            + np.einsum("nij,nj->ni", bases[topic], z)
            + rng.standard_normal((count, DIM)).astype(np.float32) * (0.02 * scale[topic])[:, None]
        )
        out[start : start + count] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def isotropic(n: int, seed: int) -> np.ndarray:  # noqa: F821
    """The hard case for a graph index: 2,000 centres with isotropic noise in all 384 dimensions
    (neighbours at cosine ~0.55, all nearly equidistant)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        count = min(100_000, n - start)
        block = centres[rng.integers(0, 2000, count)] + 0.9 * rng.standard_normal((count, DIM)).astype(np.float32)
        out[start : start + count] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def embedding_throughput(corpus: list[dict]) -> dict:
    from eidetic.embed import local

    model = local.load()
    model.embed(["warm up"])
    out = {}
    for label, texts in (
        ("short notes (20-60 words)", [r["text"] for r in corpus if len(r["text"].split()) <= 60][:256]),
        ("doc chunks (60-300 words)", [r["text"] for r in corpus if len(r["text"].split()) > 60][:96]),
    ):
        started = time.perf_counter()
        model.embed(texts)
        seconds = time.perf_counter() - started
        out[label] = {"texts": len(texts), "per_s": round(len(texts) / seconds, 1)}
        print(f"  embedding {label}: {out[label]}", flush=True)
    queries = keyword_queries(corpus, 50, seed=3)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        model.embed([query])
        latencies.append((time.perf_counter() - started) * 1000)
    out["one query"] = summary(latencies)
    return out


def ann(n: int, work: Path, data: str = "embedding-like", queries: int = 200) -> dict:
    """Build a vector index of n vectors; exact vs HNSW latency and recall@10."""
    import numpy as np

    from eidetic.index.vector_index import ANN_EXPANSION_SEARCH, VectorIndex
    from eidetic.settings import Settings

    generated = (clustered if data == "embedding-like" else isotropic)(n + queries, seed=n)
    vectors, qs = generated[:n], generated[n:]  # queries: held-out points, like new sentences
    folder = work / f"ann-{n}"
    shutil.rmtree(folder, ignore_errors=True)
    index = VectorIndex(folder, ann_threshold=Settings.load().ann_threshold)
    started = time.perf_counter()
    for start in range(0, n, 100_000):
        stop = min(start + 100_000, n)
        index.append(list(range(start + 1, stop + 1)), vectors[start:stop], stop)
    built = index.build_graph()
    if built is not None:
        index.install_graph(built)
    build = time.perf_counter() - started
    del vectors, generated
    graph = index.state()["ann_rows"] > 0
    fresh = VectorIndex(folder, ann_threshold=Settings.load().ann_threshold)  # as a new process opens it: memory-mapped
    matrix = np.asarray(fresh.matrix())
    exact_ms, truths = [], []
    for q in qs:
        started = time.perf_counter()
        scores = matrix @ q
        top = np.argpartition(-scores, 10)[:10]
        exact_ms.append((time.perf_counter() - started) * 1000)
        truths.append({int(i) + 1 for i in top})
    by_ef = {}
    for ef in (256, 512) if graph else (None,):
        if ef is not None:
            fresh._graph(fresh.state()).expansion_search = ef
        graph_ms, hits = [], 0
        for q, truth in zip(qs, truths):
            started = time.perf_counter()
            page = next(fresh.ranked(q, 100))  # what recall asks for a top-10
            graph_ms.append((time.perf_counter() - started) * 1000)
            hits += len(truth & {doc for doc, _ in sorted(page, key=lambda item: -item[1])[:10]})
        by_ef[str(ef)] = {"search_top100_ms": summary(graph_ms), "recall_at_10": round(hits / (10 * len(qs)), 4)}
    chosen = by_ef[str(ANN_EXPANSION_SEARCH) if graph else "None"]
    result = {
        "vectors": n,
        "data": data,
        "index": "HNSW (usearch i8, M 16, ef 256) + exact re-score" if graph else "exact",
        "threshold": Settings.load().ann_threshold,
        "build_s": round(build, 1),
        "search_top100_ms": chosen["search_top100_ms"],
        "numpy_exact_top10_ms": summary(exact_ms),
        "recall_at_10": chosen["recall_at_10"],
        "by_expansion_search": by_ef,
        "disk_mb": round(sum(p.stat().st_size for p in folder.iterdir()) / 1e6, 1),
    }
    print(f"  vector index {n} ({data}): {result}", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    return result


def hybrid_store(n: int, work: Path, env: dict, queries: int, processes: int) -> dict:

    from eidetic import Memory
    from eidetic.embed import local
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash

    corpus = records(n)
    ndjson = work / "records.ndjson"
    ndjson.write_text("".join(json.dumps(r) + "\n" for r in corpus))
    with ndjson.open() as stdin:
        run_cli(["remember", "--json", "--no-embed"], env, stdin=stdin)
    vectors = clustered(n, seed=99)
    cache = VectorCache(Path(env["EIDETIC_CACHE_DIR"]) / "vectors.sqlite")
    for start in range(0, n, 10_000):
        cache.put(
            local.MODEL_NAME,
            (
                (text_hash(r["text"]), v)
                for r, v in zip(corpus[start : start + 10_000], vectors[start : start + 10_000])
            ),
        )
    cache.close()
    del vectors
    qs = keyword_queries(corpus, queries, seed=21)
    out: dict = {"records": n}
    with Memory.open() as memory:
        started = time.perf_counter()
        memory.recall("warm up", mode="hybrid")  # first sync of the vector index: builds the graph
        out["first_semantic_recall_s"] = round(time.perf_counter() - started, 1)
        for mode in ("hybrid", "approximate"):
            out[f"{mode}_in_process"] = recall_latencies(memory, mode, qs)
            print(f"  {mode} in-process at {n}: {out[f'{mode}_in_process']}", flush=True)
    walls = [run_cli(["recall", q, "--mode", "hybrid", "--json"], env)[0] * 1000 for q in qs[:processes]]
    out["hybrid_cli_process"] = summary(walls)
    print(f"  hybrid as a new process: {out['hybrid_cli_process']}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000, help="files store for hybrid recall")
    parser.add_argument("--ann-sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--processes", type=int, default=11)
    parser.add_argument("--ann-data", nargs="+", default=["embedding-like"], choices=["embedding-like", "isotropic"])
    parser.add_argument(
        "--parts",
        nargs="+",
        default=["embedding", "ann", "hybrid"],
        choices=["embedding", "ann", "hybrid"],
        help="run only these (the others keep their last results)",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eidetic-semantic-"))
    env = isolated_env(work)
    saved = args.out / "semantic.json"
    result: dict = json.loads(saved.read_text()) if saved.exists() else {}
    result.update({"machine": machine(), "date": datetime.now(UTC).strftime("%Y-%m-%d")})
    if "embedding" in args.parts:
        print("embedding throughput ...", flush=True)
        result["embedding"] = embedding_throughput(records(2000, seed=5))
    if "ann" in args.parts:
        result["vector_index"] = [ann(n, work, data) for data in args.ann_data for n in args.ann_sizes]
    if "hybrid" in args.parts:
        print(f"hybrid recall on a {args.records}-record files store ...", flush=True)
        result["hybrid"] = hybrid_store(args.records, work, env, args.queries, args.processes)
    shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "semantic.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc("semantic-speed", table(result))


def table(r: dict) -> str:
    lines = [f"Semantic recall, {r['date']}, {r['machine']}", "", "| measure | result |", "|---|---|"]
    for label, value in r["embedding"].items():
        if label == "one query":
            lines.append(f"| embed one query (local NumPy model, 1 BLAS thread) | p50 {value['p50_ms']} ms |")
        else:
            lines.append(f"| embedding throughput, {label} | {value['per_s']} texts/s ({value['texts']} texts) |")
    for v in r["vector_index"]:
        lines.append(
            f"| {v['vectors']:,} {v.get('data', 'isotropic')} vectors: {v['index']}, top-100 candidates re-scored | p50 {v['search_top100_ms']['p50_ms']} ms, "
            f"p95 {v['search_top100_ms']['p95_ms']} ms; recall@10 vs exact {v['recall_at_10']}; "
            f"build {v['build_s']} s; {v['disk_mb']} MB |"
        )
        lines.append(
            f"| {v['vectors']:,} {v.get('data', 'isotropic')} vectors: NumPy exact top-10 (the alternative) | p50 {v['numpy_exact_top10_ms']['p50_ms']} ms |"
        )
    h = r["hybrid"]
    lines += [
        f"| hybrid recall, {h['records']:,}-record files store, in-process, top-10 (query embedding included) | "
        f"p50 {h['hybrid_in_process']['p50_ms']} ms, p95 {h['hybrid_in_process']['p95_ms']} ms |",
        f"| approximate recall, same store, in-process | p50 {h['approximate_in_process']['p50_ms']} ms, "
        f"p95 {h['approximate_in_process']['p95_ms']} ms |",
        f"| `eidetic recall --mode hybrid` new process (model load included) | p50 {h['hybrid_cli_process']['p50_ms']} ms, "
        f"p95 {h['hybrid_cli_process']['p95_ms']} ms |",
        f"| first semantic recall after ingest (vector index and graph built from the cache) | {h['first_semantic_recall_s']} s |",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
