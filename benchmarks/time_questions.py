"""Questions that name a time, on the public LoCoMo conversations: recall@10 with the time
words blended (the default), as a filter, and ignored.

    python benchmarks/time_questions.py [--work DIR]     # DIR: reuse quality.py's stores

The test set is every LoCoMo question of categories 1-4 in which eidetic reads a time ("in
January 2022", "on October 24, 2023", "in May"), asked at the end of its conversation as
``quality.py`` asks it; its evidence turns are the relevant records (dated by their session).
Writes a table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic.timewords import window_in  # noqa: E402
from quality import TUNING_CONVERSATIONS, locomo_samples, mean, metrics, open_store, standard_error  # noqa: E402
from report import update_doc  # noqa: E402

MODES = ("blend", "filter", "off")


def run(data: Path, work: Path) -> dict:
    turns, queries = locomo_samples(data)
    rows: dict[str, dict[str, list]] = {m: {"tuning": [], "held_out": []} for m in MODES}
    for sample, records in turns.items():
        asked = max(datetime.fromisoformat(r["created"]) for r in records)
        timed = [
            q
            for q in queries
            if q["sample_id"] == sample and q["relevant_ids"] and q["category"] != 5 and window_in(q["question"], asked)
        ]
        part = "tuning" if sample in TUNING_CONVERSATIONS else "held_out"
        with open_store(work / f"locomo-{sample}") as memory:
            memory.remember(records)
            for query in timed:
                for mode in MODES:
                    result = memory.recall(
                        query["question"], mode="hybrid", top_k=10, record=False, depth=0, now=asked, time_words=mode
                    )
                    ranked = [hit.record.id for hit in result.items]
                    rows[mode][part].append(metrics(ranked, set(query["relevant_ids"])))
    return rows


def table(rows: dict) -> str:
    lines = [
        "| time words | tuning R@10 | held-out R@10 | all R@10 | all R@5 | questions |",
        "|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        both = rows[mode]["tuning"] + rows[mode]["held_out"]
        cells = [
            f"{mean(rows[mode][p]).get('recall@10', 0):.3f} ± {standard_error([r['recall@10'] for r in rows[mode][p]]):.3f}"
            for p in ("tuning", "held_out")
        ]
        cells += [f"{mean(both)['recall@10']:.3f}", f"{mean(both)['recall@5']:.3f}", str(len(both))]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, help="stores and caches (reruns reuse vectors)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="eidetic-time-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("EIDETIC_CACHE_DIR", str(work / "cache"))
    text = table(run(args.data, work))
    print(text)
    update_doc("time-questions", f"{datetime.now():%Y-%m-%d}, hybrid, product defaults otherwise\n\n{text}")


if __name__ == "__main__":
    main()
