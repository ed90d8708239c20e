"""How a thread member's context could be scored at query time: a design measurement on LoCoMo.

    python benchmarks/context_models.py [--data ../shared/data]

Today each thread member's keyword ``context`` field is indexed with its window's words, from
its own store and visibility partition only (``ranking/threads.py``). For context over the union
of what a caller may see (docs/architecture.md, "One score scale over every store"), the window
must be summed at query time, and the context field's statistics must then be sums over stores
too. The exact document frequency of a term in windows is not a sum of per-store counts; these
models check what scoring from sums costs, in pure BM25 over each conversation held in memory
(no freshness, no time prior: the figures sit below ``quality.py``'s, and only the differences
between models count):

- ``indexed``: today's model, the context field's statistics exact;
- ``summed DF AVG``: the same context term counts (own words plus the window's), scored with a
  document frequency of ``min(N, DF x own-text df)`` and an average length of ``AVG x`` the
  own-text average: both sums over stores;
- ``spread BETA OWN``: no context field; a record scores ``OWN x`` its own BM25 plus ``BETA x``
  its window's own scores.

Recall@10 on questions of categories 1-4, per half (tuning / held-out).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic.index.analyzer import analyze, query_terms  # noqa: E402
from eidetic.ranking.bm25 import K1, B, idf  # noqa: E402
from eidetic.ranking.threads import AFTER, BEFORE  # noqa: E402
from eidetic.timewords import read_question  # noqa: E402
from quality import TUNING_CONVERSATIONS, locomo_samples, metrics  # noqa: E402

MODELS = {
    "indexed": ("indexed", 0.0, 0.0),
    "summed 4 4": ("summed", 4.0, 4.0),
    "summed 2 4": ("summed", 2.0, 4.0),
    "summed 3 3.5": ("summed", 3.0, 3.5),
    "spread 1 3": ("spread", 1.0, 3.0),
    "spread 1 2": ("spread", 1.0, 2.0),
}


def part(tf: int, length: int, average: float, weight: float) -> float:
    return weight * (K1 + 1) * tf / (tf + K1 * (1 - B + B * length / average)) if tf else 0.0


def conversation_scores(records: list[dict], terms: list[str], model: tuple[str, float, float]) -> list[float]:
    kind, a, b = model
    own = [Counter(analyze(r["text"])) for r in records]
    n = len(records)
    window = [
        [j for j in [*range(i - 1, i - BEFORE - 1, -1), *range(i + 1, i + AFTER + 1)] if 0 <= j < n] for i in range(n)
    ]
    context = [own[i] + sum((own[j] for j in window[i]), Counter()) for i in range(n)]
    own_len, context_len = [sum(c.values()) for c in own], [sum(c.values()) for c in context]
    own_avg, context_avg = sum(own_len) / n, sum(context_len) / n
    own_df, context_df = Counter(t for c in own for t in c), Counter(t for c in context for t in c)

    def alone(i: int) -> float:
        return sum(part(own[i].get(t, 0), own_len[i], own_avg, idf(n, own_df[t])) for t in terms)

    if kind == "spread":
        scores = [alone(i) for i in range(n)]
        return [b * scores[i] + a * sum(scores[j] for j in window[i]) for i in range(n)]
    if kind == "summed":
        context_avg = b * own_avg
        context_df = Counter({t: min(n, int(a * own_df[t])) for t in terms})
    return [
        alone(i)
        + sum(part(context[i].get(t, 0), context_len[i], context_avg, 2.0 * idf(n, context_df[t])) for t in terms)
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    args = parser.parse_args()
    turns, queries = locomo_samples(args.data)
    print("| model | tuning R@10 | held-out R@10 |\n|---|---|---|")
    for name, model in MODELS.items():
        halves: dict[str, list[float]] = defaultdict(list)
        for sample, unordered in turns.items():
            records = sorted(unordered, key=lambda r: (r["created"], r["id"]))
            asked = max(datetime.fromisoformat(r["created"]) for r in records)
            half = "tuning" if sample in TUNING_CONVERSATIONS else "held-out"
            for query in queries:
                if query["sample_id"] != sample or not query["relevant_ids"] or query["category"] == 5:
                    continue
                terms = query_terms(read_question(query["question"], asked).words)
                scores = conversation_scores(records, terms, model)
                ranked = sorted(range(len(records)), key=lambda i: (-scores[i], records[i]["id"]))[:25]
                row = metrics([records[i]["id"] for i in ranked], set(query["relevant_ids"]))
                halves[half].append(row["recall@10"])
        tuning, held = (sum(halves[h]) / len(halves[h]) for h in ("tuning", "held-out"))
        print(f"| {name} | {tuning:.3f} | {held:.3f} |", flush=True)


if __name__ == "__main__":
    main()
