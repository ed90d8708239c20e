"""Retrieval quality on public data, through the public Python API (``eidetic.Memory``).

    python benchmarks/quality.py [--data ../shared/data] [--modes keyword hybrid ...]

LoCoMo: one store per conversation; each turn is a record "speaker: text" (plus the shared
image's caption), dated by its session; questions of categories 1-4 are the queries and their
evidence turns the relevant records; category 5 (adversarial) is reported apart.
BEIR SciFact: one store of the 5,183 abstracts (title as name, abstract as text); the public
test queries and the train queries.
For every mode: recall@5/10/25, nDCG@10, MRR (first relevant rank within 25). Writes
``benchmarks/results/quality.json`` and a table in ``docs/benchmarks.md``.

``--layout`` places the same records as people keep them: ``single`` (one store, every record
public: the figures above it), ``shared`` (one store, half the records, chosen by a hash of the
id, private to the asking scope) and ``split`` (the layout of docs/guide.md, "Where records live": the public half in a
repository store, the private half in the home store). The caller asks as that scope, privately,
so it sees every record in every layout: a ranking that holds wherever records live gives the
three layouts the same figures. ``--layout all`` runs the three and writes the comparison. The data is read
from ``../shared/data`` (non-commercial licences: it is never copied into this repository).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic import Memory  # noqa: E402
from eidetic.embed import Embedder  # noqa: E402
from eidetic.locations import StorePlan, plan_stores  # noqa: E402
from eidetic.usage import UsageState  # noqa: E402
from report import update_doc  # noqa: E402

K = 25
ALL_MODES = ("exact", "keyword", "approximate", "hybrid")


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    out = {f"recall@{k}": len(set(ranked[:k]) & relevant) / len(relevant) for k in (5, 10, 25)}
    dcg = sum(1 / math.log2(i + 2) for i, rid in enumerate(ranked[:10]) if rid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    out["ndcg@10"] = dcg / ideal
    out["mrr"] = next((1 / (i + 1) for i, rid in enumerate(ranked[:K]) if rid in relevant), 0.0)
    return out


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]} if rows else {}


def standard_error(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    average = sum(values) / len(values)
    return round(math.sqrt(sum((v - average) ** 2 for v in values) / (len(values) - 1) / len(values)), 4)


# Defaults are chosen on the first three public conversations and reported on the other three.
TUNING_CONVERSATIONS = ("conv-26", "conv-30", "conv-41")


LAYOUTS = ("single", "shared", "split")
CALLER = "bench"  # the scope that asks, privately, in the shared and split layouts


def open_store(folder: Path, layout: str = "single") -> Memory:
    """One store at ``folder``; for ``split``, a repository store and a home store under it."""
    usage = UsageState(folder.parent / f"{folder.name}-usage.sqlite")
    if layout == "split":
        home, repo = folder / "home", folder / "repo"
        return Memory(StorePlan((home, repo), False, home, repo), usage)
    return Memory(plan_stores([folder]), usage)


def _folder(name: str, layout: str) -> str:
    """A layout's store folder in the work folder (``single`` keeps the name other scripts reuse)."""
    return name if layout == "single" else f"{layout}-{name}"


def placed(records: list[dict], layout: str) -> list[dict]:
    """The records as ``layout`` keeps them: half of them (by a hash of the id, the same half in
    every run) private to ``CALLER`` outside ``single``."""
    if layout == "single":
        return records
    return [
        dict(r, scope={"name": CALLER, "visibility": "private"})
        if hashlib.sha256(r["id"].encode()).digest()[0] % 2
        else r
        for r in records
    ]


def ranked_ids(
    memory: Memory, query: str, mode: str, alpha: float, now: datetime | None = None, layout: str = "single"
) -> list[str]:
    asking = {} if layout == "single" else {"scope": CALLER, "visibility": "private"}
    result = memory.recall(query, mode=mode, top_k=K, alpha=alpha, record=False, depth=0, now=now, **asking)
    return [hit.record.id for hit in result.items]


def locomo_samples(data: Path) -> tuple[dict[str, list[dict]], list[dict]]:
    """LoCoMo's turns as records per conversation, and its queries."""
    turns: dict[str, list[dict]] = defaultdict(list)
    for line in (data / "locomo" / "turns_public.jsonl").open():
        turn = json.loads(line)
        when = datetime.strptime(turn["session_date_time"], "%I:%M %p on %d %B, %Y")
        text = f"{turn['speaker']}: {turn['text']}"
        if turn.get("blip_caption"):
            text += f" [image: {turn['blip_caption']}]"
        turns[turn["sample_id"]].append(
            {
                "id": turn["id"],
                "text": text,
                "type": "turn",
                "created": when.replace(tzinfo=UTC).isoformat(),
                "metadata": {
                    "source": "locomo",
                    "thread": turn["sample_id"],
                    "session": turn["session"],
                    "speaker": turn["speaker"],
                },
            }
        )
    return turns, [json.loads(line) for line in (data / "locomo" / "queries_public.jsonl").open()]


def locomo(data: Path, work: Path, modes: list[str], alpha: float, layout: str = "single") -> dict:
    turns, queries = locomo_samples(data)
    scores: dict[str, dict[str, list]] = {mode: defaultdict(list) for mode in modes}
    parts: dict[str, dict[str, list]] = {mode: defaultdict(list) for mode in modes}  # tuning / held-out, 1-4
    for sample, records in turns.items():
        # The questions are asked once the conversation is over: "in May" means its last May.
        asked = max(datetime.fromisoformat(r["created"]) for r in records)
        part = "tuning" if sample in TUNING_CONVERSATIONS else "held_out"
        with open_store(work / _folder(f"locomo-{sample}", layout), layout) as memory:
            memory.remember(placed(records, layout))  # (identical turns are reported as duplicates, not stored)
            for query in (q for q in queries if q["sample_id"] == sample and q["relevant_ids"]):
                for mode in modes:
                    ranked = ranked_ids(memory, query["question"], mode, alpha, asked, layout)
                    row = metrics(ranked, set(query["relevant_ids"]))
                    scores[mode][query["category"]].append(row)
                    if query["category"] != 5:
                        parts[mode][part].append(row)
    out = {}
    for mode in modes:
        per_category = {str(c): mean(rows) for c, rows in sorted(scores[mode].items())}
        main = [row for c, rows in scores[mode].items() if c != 5 for row in rows]
        out[mode] = {
            "categories_1_4": mean(main),
            "categories_1_4_se": {k: standard_error([r[k] for r in main]) for k in ("recall@5", "recall@10")},
            "per_category": per_category,
            "parts": {
                name: dict(mean(rows), se_recall10=standard_error([r["recall@10"] for r in rows]), queries=len(rows))
                for name, rows in parts[mode].items()
            },
            "queries_1_4": len(main),
            "queries_5": len(scores[mode].get(5, [])),
        }
    return out


SCIFACT_SPLITS = {
    "test": ("queries_test_public.jsonl", "test_public.tsv"),
    "train": ("queries_train.jsonl", "train.tsv"),
}


def scifact_records(data: Path) -> list[dict]:
    """SciFact's abstracts as records: the title as name, the abstract as text."""
    with gzip.open(data / "beir-scifact" / "corpus.jsonl.gz", "rt") as handle:
        docs = [json.loads(line) for line in handle]
    return [
        {
            "id": d["_id"],
            "name": d["title"] or None,
            "text": d["text"] or d["title"],
            "type": "abstract",
            "created": "date-unknown",
        }
        for d in docs
        if d["text"] or d["title"]
    ]


def scifact_queries(data: Path, split: str) -> tuple[list[dict], dict[str, set[str]]]:
    """One split's claims (``_id``, ``text``) and, per claim, the abstracts cited as its evidence."""
    root = data / "beir-scifact"
    qfile, qrels = SCIFACT_SPLITS[split]
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (root / "qrels" / qrels).read_text().splitlines()[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            relevant[qid].add(did)
    return [json.loads(line) for line in (root / qfile).open()], relevant


def scifact(data: Path, work: Path, modes: list[str], alpha: float, layout: str = "single") -> dict:
    out: dict = {mode: {} for mode in modes}
    with open_store(work / _folder("scifact", layout), layout) as memory:
        memory.remember(placed(scifact_records(data), layout))
        for split in SCIFACT_SPLITS:
            queries, relevant = scifact_queries(data, split)
            for mode in modes:
                rows = [
                    metrics(ranked_ids(memory, q["text"], mode, alpha, layout=layout), relevant[q["_id"]])
                    for q in queries
                    if relevant.get(q["_id"])
                ]
                se = standard_error([r["ndcg@10"] for r in rows])
                out[mode][split] = dict(mean(rows), se_ndcg10=se, queries=len(rows))
    return out


def table(result: dict) -> str:
    lines = [
        f"{result['date']}, alpha {result['alpha']}, {result['machine']}; "
        f"embedder {result['embedder']}; run time {result['seconds']} s",
        "",
        "| mode | SciFact test nDCG@10 | SciFact train nDCG@10 | LoCoMo 1-4 R@5 | R@10 | R@25 | nDCG@10 | MRR |"
        " LoCoMo cat. 5 R@10 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in result["modes"]:
        sf = result["scifact"][mode] if result["scifact"] else None
        lc = result["locomo"][mode] if result["locomo"] else None
        cells = [f"{sf['test']['ndcg@10']:.3f}", f"{sf['train']['ndcg@10']:.3f}"] if sf else ["not run", "not run"]
        if lc:
            main, five = lc["categories_1_4"], lc["per_category"].get("5", {})
            cells += [f"{main[k]:.3f}" for k in ("recall@5", "recall@10", "recall@25", "ndcg@10", "mrr")]
            cells.append(f"{five.get('recall@10', 0):.3f}")
        else:
            cells += ["not run"] * 6
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "LoCoMo recall@10 by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial):",
        "",
        "| mode | 1 | 2 | 3 | 4 | 5 |",
        "|---|---|---|---|---|---|",
    ]
    for mode in result["modes"] if result["locomo"] else []:
        per = result["locomo"][mode]["per_category"]
        lines.append(
            f"| {mode} | " + " | ".join(f"{per.get(str(c), {}).get('recall@10', 0):.3f}" for c in range(1, 6)) + " |"
        )
    return "\n".join(lines + _parts_table(result))


def _parts_table(result: dict) -> list[str]:
    """Where defaults were chosen and where they are only reported, with standard errors."""
    lines = [
        "",
        "Tuning part (LoCoMo conversations 26, 30, 41; SciFact train) against the held-out part (LoCoMo 42,"
        " 43, 44; SciFact test), ± one standard error:",
        "",
        "| mode | LoCoMo tuning R@10 | LoCoMo held-out R@10 | SciFact train nDCG@10 | SciFact test nDCG@10 |",
        "|---|---|---|---|---|",
    ]
    for mode in result["modes"]:
        cells = []
        parts = result["locomo"][mode]["parts"] if result["locomo"] else {}
        for name in ("tuning", "held_out"):
            part = parts.get(name)
            cells.append(f"{part['recall@10']:.3f} ± {part['se_recall10']:.3f}" if part else "not run")
        sf = result["scifact"][mode] if result["scifact"] else {}
        for split in ("train", "test"):
            cells.append(f"{sf[split]['ndcg@10']:.3f} ± {sf[split]['se_ndcg10']:.3f}" if sf else "not run")
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return lines


def prepared(work: Path | None, prefix: str) -> tuple[Path, Embedder | None, str | None]:
    """The work folder (a new temporary one unless given; the embedding cache in it unless
    ``EIDETIC_CACHE_DIR`` names one) and the embedder, or why there is none."""
    work = work or Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EIDETIC_CACHE_DIR", str(work / "cache"))
    from eidetic.embed import default_embedder
    from eidetic.settings import Settings

    embedder, why = default_embedder(Settings.load())
    return work, embedder, why


def layouts_table(results: dict[str, dict]) -> str:
    """The same records in each layout, per mode, on the tuning and held-out parts."""
    first = next(iter(results.values()))
    lines = [
        f"{first['date']}, alpha {first['alpha']}, {first['machine']}; embedder {first['embedder']}",
        "",
        "| mode | layout | LoCoMo tuning R@10 | LoCoMo held-out R@10 | SciFact train nDCG@10 | SciFact test nDCG@10 |",
        "|---|---|---|---|---|---|",
    ]
    for mode in first["modes"]:
        for layout, result in results.items():
            parts = result["locomo"][mode]["parts"] if result["locomo"] else {}
            sf = result["scifact"][mode] if result["scifact"] else {}
            cells = [
                f"{parts[name]['recall@10']:.3f}" if name in parts else "not run" for name in ("tuning", "held_out")
            ]
            cells += [f"{sf[split]['ndcg@10']:.3f}" if sf else "not run" for split in ("train", "test")]
            lines.append(f"| {mode} | {layout} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--modes", nargs="+", default=list(ALL_MODES), choices=ALL_MODES)
    parser.add_argument("--alpha", type=float, default=0.5)
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=["scifact", "locomo"],
        choices=["scifact", "locomo"],
        help="SciFact embeds 5,183 abstracts: ~25 min on one core with the NumPy model",
    )
    parser.add_argument("--layout", default="single", choices=[*LAYOUTS, "all"], help="where the records live")
    parser.add_argument("--work", type=Path, help="keep stores and caches here (reruns reuse vectors)")
    args = parser.parse_args()
    work, embedder, why = prepared(args.work, "eidetic-quality-")
    results: dict[str, dict] = {}
    for layout in LAYOUTS if args.layout == "all" else (args.layout,):
        started = time.perf_counter()
        result = results[layout] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "alpha": args.alpha,
            "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
            "embedder": embedder.name if embedder else f"none ({why})",
            "layout": layout,
            "modes": args.modes,
            "scifact": scifact(args.data, work, args.modes, args.alpha, layout) if "scifact" in args.datasets else None,
            "locomo": locomo(args.data, work, args.modes, args.alpha, layout) if "locomo" in args.datasets else None,
        }
        result["seconds"] = round(time.perf_counter() - started)
    (HERE / "results").mkdir(exist_ok=True)
    if args.layout == "all":
        (HERE / "results" / "quality-layouts.json").write_text(json.dumps(results, indent=2) + "\n")
        print(layouts_table(results))
        update_doc("quality-layouts", layouts_table(results))
    elif args.layout == "single":
        result = results["single"]
        (HERE / "results" / "quality.json").write_text(json.dumps(result, indent=2) + "\n")
        print(table(result))
        update_doc("quality", table(result))
    else:
        print(layouts_table(results))


if __name__ == "__main__":
    main()
