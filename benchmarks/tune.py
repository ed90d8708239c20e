"""Choose the ranking defaults on the public data: keyword field weights (with and without the
conversation context field) and the hybrid alpha.

    python benchmarks/quality.py --work DIR        # builds the stores and caches vectors first
    python benchmarks/tune.py --work DIR

For each query the two signals are read once per weight setting (BM25 top 100 from the keyword
index, cosine top 100 from the vector index), then fused for every alpha in Python, so a grid
costs seconds, not hours. The freshness blend is left out here (LoCoMo turns all share a few
dates); ``quality.py`` confirms the chosen defaults through the public API. Writes
``benchmarks/results/tuning.json`` and a table in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality import metrics, open_store  # noqa: E402
from report import update_doc  # noqa: E402

ALPHAS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
WEIGHTS = {  # name, description, text (a thread member's own text), context (text + neighbours')
    "default: name 1, context 2": (1.0, 1.0, 1.0, 2.0),
    "context 1": (1.0, 1.0, 1.0, 1.0),
    "context 3": (1.0, 1.0, 1.0, 3.0),
    "name 2, context 2": (2.0, 2.0, 1.0, 2.0),
}

POOL = 100


def signals(memory, query: str, weights: tuple[float, ...]) -> tuple[dict, dict, dict]:
    """(keyword, semantic, doc -> id) for one query under one weight setting."""
    from eidetic.embed import default_embedder
    from eidetic.index import text_index
    from eidetic.index.analyzer import query_terms
    from eidetic.memory.embedding import query_vector as _query_vector
    from eidetic.ranking import bm25
    from eidetic.ranking.access import Access
    from eidetic.ranking.filters import Filters
    from eidetic.records import DEFAULT_SCOPE
    from eidetic.settings import Settings

    embedder, _ = default_embedder(Settings.load())
    store = memory.stores()[0]
    access, flt = Access(DEFAULT_SCOPE), Filters.build(None, None, None, None, None)
    text_index.FIELDS = bm25.FIELDS = tuple(zip(("name", "description", "text", "context"), weights))
    keyword = dict(store.keyword(query_terms(query), access, flt, POOL))
    q = _query_vector(embedder, query)
    store.sync_vectors(embedder.name, access, lambda rows: memory._vectors(store, embedder, rows))
    semantic = store.nearest(embedder.name, q, access, flt, POOL)
    semantic.update(store.cosines(embedder.name, q, access, [d for d in keyword if d not in semantic]))
    ids = {doc: facts.id for doc, facts in store.ranking_facts(list(set(keyword) | set(semantic))).items()}
    return keyword, semantic, ids


def ranking(keyword: dict, semantic: dict, ids: dict, alpha: float) -> list[str]:
    from eidetic.ranking.fusion import fuse

    fused = fuse(keyword, semantic, alpha)
    kept = [(doc, raw) for doc, raw in fused.items() if raw > 0 or doc in keyword]
    kept.sort(key=lambda item: (-item[1], ids[item[0]]))
    return [ids[doc] for doc, _ in kept[:25]]


def evaluate(cases: list[tuple], names: list[str]) -> dict:
    """cases: (memory, query, relevant ids, group). -> weights -> alpha -> group -> mean metrics."""
    out: dict = {}
    for name in names:
        per_alpha: dict = {a: defaultdict(list) for a in ALPHAS}
        for memory, query, relevant, group in cases:
            keyword, semantic, ids = signals(memory, query, WEIGHTS[name])
            for alpha in ALPHAS:
                per_alpha[alpha][group].append(metrics(ranking(keyword, semantic, ids, alpha), relevant))
        out[name] = {
            str(a): {
                g: {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} for g, rows in groups.items()
            }
            for a, groups in per_alpha.items()
        }
        print(
            name,
            {
                a: {g: v.get("ndcg@10" if g.startswith("scifact") else "recall@10") for g, v in gs.items()}
                for a, gs in out[name].items()
            },
            flush=True,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--weights", nargs="+", default=list(WEIGHTS), choices=list(WEIGHTS))
    parser.add_argument("--datasets", nargs="+", default=["scifact", "locomo"], choices=["scifact", "locomo"])
    args = parser.parse_args()
    import os

    os.environ.setdefault("EIDETIC_CACHE_DIR", str(args.work / "cache"))
    cases = []
    opened = []
    queries = [json.loads(line) for line in (args.data / "locomo" / "queries_public.jsonl").open()]
    for sample in sorted({q["sample_id"] for q in queries}):
        folder = args.work / f"locomo-{sample}"
        if "locomo" not in args.datasets or not folder.exists():
            continue
        memory = open_store(folder)
        memory.refresh_index()  # the signals below read the index directly: bring it up to date
        opened.append(memory)
        cases += [
            (memory, q["question"], set(q["relevant_ids"]), "locomo 1-4")
            for q in queries
            if q["sample_id"] == sample and q["relevant_ids"] and q["category"] != 5
        ]
    root = args.data / "beir-scifact"
    if "scifact" in args.datasets and (args.work / "scifact").exists():
        memory = open_store(args.work / "scifact")
        memory.refresh_index()
        opened.append(memory)
        for split, qfile, qrels in (
            ("scifact test", "queries_test_public.jsonl", "test_public.tsv"),
            ("scifact train", "queries_train.jsonl", "train.tsv"),
        ):
            relevant: dict = defaultdict(set)
            for line in (root / "qrels" / qrels).read_text().splitlines()[1:]:
                qid, did, score = line.split("\t")
                if int(score) > 0:
                    relevant[qid].add(did)
            cases += [
                (memory, q["text"], relevant[q["_id"]], split)
                for q in (json.loads(line) for line in (root / qfile).open())
                if relevant.get(q["_id"])
            ]
    result = evaluate(cases, args.weights)
    for memory in opened:
        memory.close()
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "tuning.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc("tuning", table(result))


def table(result: dict) -> str:
    groups = sorted({g for by_alpha in result.values() for gs in by_alpha.values() for g in gs})
    metric = {g: "nDCG@10" if g.startswith("scifact") else "R@10" for g in groups}
    lines = [
        "Signals fused without the freshness blend; keyword = alpha 0, semantic alone = alpha 1.",
        "",
        "| weights (name, description, text, context) | alpha | "
        + " | ".join(f"{g} {metric[g]}" for g in groups)
        + " |",
        "|---|---|" + "---|" * len(groups),
    ]
    for name, by_alpha in result.items():
        for alpha, gs in by_alpha.items():
            cells = [
                f"{gs[g]['ndcg@10' if metric[g] == 'nDCG@10' else 'recall@10']:.3f}" if g in gs else "-" for g in groups
            ]
            lines.append(f"| {name} {WEIGHTS[name]} | {alpha} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
