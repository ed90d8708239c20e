"""What judging a young store costs: approximate recall with the relevance floor on, in stores
of the first N turns of a LoCoMo conversation (the store sizes where standing out and words are
judged, ``ranking/relevance.py``), asked that conversation's questions.

    python benchmarks/young_floor_latency.py [--data ../shared/data] [--sizes 20 200] [--rounds 3]

Prints the median in-process latency per size, floor on and off, and the CPU time per recall
(every thread's: what the code costs, which a loaded machine changes less than wall time). To compare two versions of
eidetic, run this script with each on ``PYTHONPATH`` and alternate the runs, as the machine is
shared. The data is read from ``../shared/data`` (non-commercial licence: never copied here).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality import locomo_samples, open_store, prepared  # noqa: E402

CONVERSATION = "conv-26"  # the tuning half's first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work, embedder, why = prepared(None, "eidetic-young-latency-")
    if embedder is None:
        raise SystemExit(f"no embedder ({why}): approximate recall needs the model")
    turns, questions = locomo_samples(args.data)
    asked = [q["question"] for q in questions if q["sample_id"] == CONVERSATION]
    for size in args.sizes:
        with open_store(Path(tempfile.mkdtemp(dir=work))) as memory:
            memory.remember(turns[CONVERSATION][:size])
            for question in asked:  # warm: the model, the indexes, each question's vector (kept)
                memory.recall(question, mode="approximate", record=False)
            for floor in ("auto", "off"):
                times, cpu = [], time.process_time()
                for _ in range(args.rounds):
                    for question in asked:
                        started = time.perf_counter()
                        memory.recall(question, mode="approximate", relevance_floor=floor, record=False)
                        times.append(time.perf_counter() - started)
                per_recall = 1000 * (time.process_time() - cpu) / len(times)  # every thread's: steadier under load
                median = 1000 * statistics.median(times)
                print(
                    f"{size} turns, approximate, floor {floor}: median {median:.2f} ms, "
                    f"CPU {per_recall:.2f} ms per recall, over {len(times)} recalls"
                )


if __name__ == "__main__":
    main()
