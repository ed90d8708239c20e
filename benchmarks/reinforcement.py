"""What counts as a recall: retrieval quality when recalls reinforce the hits they return.

    python benchmarks/reinforcement.py [--data ../shared/data] [--modes keyword hybrid] [--work DIR]

A recall bumps the usage of the hits it counts as used, and usage lifts the freshness signal
that is blended into every later score. This replays LoCoMo's questions, in order, against each
conversation's store as an agent would ask them (top 5, as recall's default), twice over, with a
fresh usage state per policy, and measures each question's ranking (top 25) before its own
reinforcement is applied:

- ``none``: no recall counts (``--no-record``), the baseline;
- ``all``: every primary hit counts (eidetic before this policy);
- ``within F``: a primary hit counts when its score is at least F of the best hit's
  (``ranking.reinforce.used``; with F 0.5, what eidetic counts in exact and keyword recall);
- ``top 1``: only the best hit counts (what eidetic counts in approximate and hybrid recall);
- ``cosine >= C``: (approximate, hybrid) a hit counts when its cosine to the query is at least C;
- ``relevant``: only the hits that are evidence for the question count: what a reader who used
  exactly the right records would record, the best any rule could do.

Time is the end of each conversation plus a day, so ages and usage weigh as they would for an
agent using the memory then (quality.py judges at the present, where LoCoMo's 2023 dates make
every signal small). Writes ``benchmarks/results/reinforcement.json`` and a table in
docs/benchmarks.md. The data is read from ``../shared/data`` and never copied here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic import Hit, Memory  # noqa: E402
from eidetic.locations import plan_stores  # noqa: E402
from eidetic.ranking import reinforce  # noqa: E402
from eidetic.timeutil import format_ts, parse_ts  # noqa: E402
from eidetic.usage import UsageState  # noqa: E402
from quality import K, locomo_samples, mean, metrics  # noqa: E402
from report import update_doc  # noqa: E402

ASKED = 5  # the top k an agent asks for (recall's default): what a recall may reinforce
PASSES = 2
Policy = Callable[[list[Hit], set[str]], list[Hit]]  # (the hits asked for, the evidence) -> the hits that count


def _cosine_at_least(floor: float) -> Policy:
    def counted(hits: list[Hit], relevant: set[str]) -> list[Hit]:
        return [h for h in hits if ((h.explain or {}).get("cosine") or 0.0) >= floor]

    return counted


POLICIES: dict[str, Policy] = {
    "none": lambda hits, relevant: [],
    "all": lambda hits, relevant: hits,
    "within 0.5": lambda hits, relevant: [h for h in hits if (h.store, h.record.id) in reinforce.used(hits, 0.5)],
    "top 1": lambda hits, relevant: hits[:1],
    "cosine >= 0.4": _cosine_at_least(0.4),
    "cosine >= 0.5": _cosine_at_least(0.5),
    "relevant": lambda hits, relevant: [h for h in hits if h.record.id in relevant],
}
SEMANTIC_ONLY = {"cosine >= 0.4", "cosine >= 0.5"}


def replay(memory: Memory, queries: list[dict], mode: str, policy: Policy, now: datetime) -> list[list[dict]]:
    """Each pass's metrics per question, reinforcing the hits ``policy`` counts after each ranking."""
    stores = {store.key: store for store in memory.stores()}
    passes: list[list[dict]] = []
    for _ in range(PASSES):
        rows = []
        for query in queries:
            found = memory.recall(query["question"], mode=mode, top_k=K, record=False, depth=0, now=now, explain=True)
            relevant = set(query["relevant_ids"])
            rows.append(dict(metrics([hit.record.id for hit in found.items], relevant), category=query["category"]))
            for hit in policy(found.items[:ASKED], relevant):
                stores[hit.store].bump_usage({hit.record.id: 1.0}, format_ts(now))
        passes.append(rows)
    return passes


def summary(rows: list[dict]) -> dict:
    main = [{k: v for k, v in row.items() if k != "category"} for row in rows if row["category"] != 5]
    return mean(main)


def run(data: Path, work: Path, modes: list[str]) -> dict:
    turns, queries = locomo_samples(data)
    results: dict = {mode: {policy: [[] for _ in range(PASSES)] for policy in POLICIES} for mode in modes}
    for sample, records in turns.items():
        asked = [q for q in queries if q["sample_id"] == sample and q["relevant_ids"]]
        now = max(parse_ts(r["created"]) for r in records) + timedelta(days=1)  # type: ignore[type-var]
        folder = work / f"locomo-{sample}"
        for mode in modes:
            for name, policy in POLICIES.items():
                if name in SEMANTIC_ONLY and mode == "keyword":
                    continue
                usage = work / f"usage-{sample}-{mode}-{name.replace(' ', '-')}.sqlite"
                usage.unlink(missing_ok=True)
                with Memory(plan_stores([folder]), UsageState(usage)) as memory:
                    memory.remember(records)
                    for number, rows in enumerate(replay(memory, asked, mode, policy, now)):
                        results[mode][name][number] += rows
                print(f"{sample} {mode} {name}", file=sys.stderr, flush=True)
    return {
        mode: {name: [summary(rows) for rows in passes] for name, passes in by_policy.items() if passes[0]}
        for mode, by_policy in results.items()
    }


def table(result: dict) -> str:
    lines = [
        f"{result['date']}, {result['machine']}; embedder {result['embedder']}; run time {result['seconds']} s; "
        f"`{result['command']}`",
        "",
        "LoCoMo categories 1-4, each question asked top 5 and measured top 25, pass 1 then pass 2 "
        "(every question asked once before):",
        "",
        "| mode | policy | pass 1 R@10 | nDCG@10 | MRR | pass 2 R@10 | nDCG@10 | MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, by_policy in result["modes"].items():
        for policy, passes in by_policy.items():
            cells = [f"{p[k]:.4f}" for p in passes for k in ("recall@10", "ndcg@10", "mrr")]
            lines.append(f"| {mode} | {policy} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument(
        "--modes", nargs="+", default=["keyword", "hybrid"], choices=["keyword", "approximate", "hybrid"]
    )
    parser.add_argument("--work", type=Path, help="keep stores and caches here (reruns reuse vectors)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="eidetic-reinforcement-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EIDETIC_CACHE_DIR", str(work / "cache"))
    from eidetic.embed import default_embedder
    from eidetic.settings import Settings

    embedder, why = default_embedder(Settings.load())
    started = time.perf_counter()
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "embedder": embedder.name if embedder else f"none ({why})",
        "command": "python benchmarks/reinforcement.py --modes " + " ".join(args.modes),
        "modes": run(args.data, work, args.modes),
    }
    result["seconds"] = round(time.perf_counter() - started)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "reinforcement.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc("reinforcement", table(result))


if __name__ == "__main__":
    main()
