"""The words a person reads beside a hit's relevance (``eidetic.relevance_text``), measured on
public data through the public Python API (``eidetic.Memory``):

    python benchmarks/relevance_words.py [--data ../shared/data] [--work DIR]

The recalls are those of ``relevance_floor.py`` on the LoCoMo conversation stores (made once and
kept in ``--work``; that script's ``--work`` serves too): LoCoMo questions of categories 1-4 on
their own conversation (matching), SciFact claims on each conversation (unrelated). Each hit
gets its word as a recall gives it (``ranking.relevance`` judges, ``relevance_text.word`` names).

``STRONG`` (the relevance from which a relevant hit reads "strong") is chosen on the tuning half
(conv-26, conv-30, conv-41 with SciFact's train claims) as the lowest value at which, in every
mode, at most ``STRONG_BUDGET`` of the unrelated queries show a strong hit; the figures are
reported on the held-out half (conv-42, conv-43, conv-44 with SciFact's test claims): per word,
how many hits carry it and how many of those are a question's evidence, and how often an
unrelated query shows each word at its best hit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic import relevance_text  # noqa: E402
from eidetic.ranking import relevance  # noqa: E402
from quality import locomo_samples, open_store, prepared, scifact_queries  # noqa: E402
from relevance_floor import HELD_OUT, MODES, TUNING, Run, _store_runs  # noqa: E402
from report import update_doc  # noqa: E402

STRONG_BUDGET = 0.01  # at most 1 % of unrelated queries may show a "strong" hit (tuning half)
GRID = [round(1.0 + 0.05 * step, 2) for step in range(61)]  # 1.0 .. 4.0


def collect(data: Path, work: Path, model: str) -> tuple[list[Run], int]:
    """The LoCoMo stores' recalls, as ``relevance_floor.py`` makes them."""
    turns, questions = locomo_samples(data)
    claims = {split: scifact_queries(data, split)[0] for split in ("train", "test")}
    runs, seconds = [], 0
    for half, convs, split in (("tuning", TUNING, "train"), ("held-out", HELD_OUT, "test")):
        for conv in convs:
            asked = [
                ("locomo", q["qid"], q["question"], q["relevant_ids"])
                for q in questions
                if q["sample_id"] == conv and q["category"] != 5 and q["relevant_ids"]
            ]
            asked += [("scifact-on-locomo", f"{conv}/{c['_id']}", c["text"], []) for c in claims[split]]
            made, took = _store_runs(work, f"locomo-{conv}", partial(list, turns[conv]), asked, half)
            runs += made
            seconds += took
    return runs, seconds


def values(run: Run, model: str) -> list[float | None]:
    """Each hit's relevance, as a recall computes it (the evidence is per unit of idf mass)."""
    mode = run["mode"]
    calibration = relevance.Calibration.of(mode, None if mode == "keyword" else model)
    semantic = mode != "keyword"
    return [relevance.relevance(cosine, bm25, 1.0, calibration, semantic) for _, cosine, bm25 in run["hits"]]


def words(run: Run, model: str, strong: float) -> list[str]:
    """Each hit's word, judged as a recall judges it."""
    mode = run["mode"]
    calibration = relevance.Calibration.of(mode, None if mode == "keyword" else model)
    values_ = values(run, model)
    flags = relevance.kept(values_, relevance.AUTO, calibration.share)
    said = []
    for value, stays in zip(values_, flags):
        word = relevance_text.word(value, stays)
        if word in ("strong", "good") and value is not None:  # the same bands, with this STRONG
            word = "strong" if value >= strong else "good"
        said.append(word)
    return said


def strong_rate(runs: list[Run], model: str, strong: float, mode: str, half: str) -> float:
    unrelated = [r for r in runs if r["mode"] == mode and r["half"] == half and r["kind"] == "scifact-on-locomo"]
    return sum("strong" in words(r, model, strong) for r in unrelated) / max(1, len(unrelated))


def choose(runs: list[Run], model: str) -> float:
    for strong in GRID:
        if all(strong_rate(runs, model, strong, mode, "tuning") <= STRONG_BUDGET for mode in MODES):
            return strong
    return GRID[-1]


def figures(runs: list[Run], model: str, strong: float, half: str) -> dict:
    """Per mode and word: hits of matching questions (how many, how many are evidence) and the
    share of unrelated queries whose best hit reads that word."""
    out: dict = {}
    for mode in MODES:
        row: dict = {word: {"hits": 0, "evidence": 0, "unrelated_best": 0} for word in relevance_text.WORDS}
        mine = [r for r in runs if r["mode"] == mode and r["half"] == half]
        unrelated = [r for r in mine if r["kind"] == "scifact-on-locomo"]
        for r in mine:
            said = words(r, model, strong)
            if r["kind"] == "locomo":
                gold = set(r["relevant"])
                for (rid, _, _), word in zip(r["hits"], said):
                    row[word]["hits"] += 1
                    row[word]["evidence"] += rid in gold
            elif said:
                row[said[0]]["unrelated_best"] += 1
        for word in relevance_text.WORDS:
            row[word]["unrelated_best"] = round(row[word]["unrelated_best"] / max(1, len(unrelated)), 4)
        for kind in ("locomo", "scifact-on-locomo"):  # the best hit's relevance: the same scale for both
            best = [max(v for v in values(r, model) if v is not None) for r in mine if r["kind"] == kind and r["hits"]]
            row[f"best {kind}"] = round(float(statistics.median(best)), 3) if best else None
        out[mode] = row
    return out


def cost(data: Path, work: Path, conv: str = HELD_OUT[0]) -> dict:
    """What judging adds to a recall as ``eidetic recall`` makes it (top 5, the floor off): each
    question of ``conv`` recalled without and with ``judge_relevance``, alternating which goes
    first; the median milliseconds of each and their ratio, per mode."""
    _, questions = locomo_samples(data)
    asked = [q["question"] for q in questions if q["sample_id"] == conv]
    out = {}
    with open_store(work / f"locomo-{conv}") as memory:
        for mode in ("keyword", "hybrid"):
            memory.recall(asked[0], mode=mode, record=False)  # the index and the model warm
            took: dict[bool, list[float]] = {False: [], True: []}
            for n, text in enumerate(asked):
                for judge in (False, True) if n % 2 else (True, False):
                    started = time.perf_counter()
                    memory.recall(text, mode=mode, record=False, depth=0, judge_relevance=judge)
                    took[judge].append(1000 * (time.perf_counter() - started))
            off, on = statistics.median(took[False]), statistics.median(took[True])
            out[mode] = {
                "queries": len(asked),
                "off_ms": round(off, 2),
                "on_ms": round(on, 2),
                "ratio": round(on / off, 3),
            }
    return out


def table(result: dict) -> str:
    lines = [
        f"{result['date']}, {result['machine']}; embedder {result['embedder']}; "
        "`python benchmarks/relevance_words.py --work /tmp/rs-words` (the recalls of `relevance_floor.py`, "
        f"made once: {result['recall_seconds']} s; this run {result['seconds']} s).",
        "",
        f"`STRONG` chosen on the tuning half (at most {100 * STRONG_BUDGET:g} % of unrelated queries with a "
        f"strong hit in every mode): {result['chosen']}; `relevance_text.py` ships {result['shipped']}, "
        "measured below. Matching: LoCoMo questions on their conversation, each hit of the top 10 by its "
        "word, and the share of those hits that are the question's evidence. Unrelated: SciFact claims "
        "on a conversation, the share whose best hit reads each word.",
        "",
        "| half | mode | strong: hits, evidence | good | weak | low | unrelated best hit: strong, good, weak, low "
        "| best hit's relevance, median: matching, unrelated |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for half in ("tuning", "held-out"):
        for mode, row in result[half].items():
            cells = []
            for word in relevance_text.WORDS:
                hits, evidence = row[word]["hits"], row[word]["evidence"]
                cells.append(f"{hits}, {100 * evidence / hits:.1f} %" if hits else "0")
            unrelated = ", ".join(f"{100 * row[w]['unrelated_best']:.1f} %" for w in relevance_text.WORDS)
            best = f"{row['best locomo']}, {row['best scifact-on-locomo']}"
            lines.append(f"| {half} | {mode} | " + " | ".join(cells) + f" | {unrelated} | {best} |")
    lines += [
        "",
        f"What judging costs a recall (top 5, floor off; {HELD_OUT[0]}'s questions, each without and with "
        "`judge_relevance`, alternating), median milliseconds: "
        + "; ".join(
            f"{mode} {c['off_ms']} -> {c['on_ms']} (x{c['ratio']}, {c['queries']} queries)"
            for mode, c in result["cost"].items()
        )
        + ".",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, help="keep stores and signals here (a rerun reuses them)")
    args = parser.parse_args()
    started = time.perf_counter()
    work, embedder, why = prepared(args.work, "eidetic-words-")
    if embedder is None:
        raise SystemExit(f"no embedder ({why}): the words are measured for a model")
    runs, collected = collect(args.data, work, embedder.name)
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "embedder": embedder.name,
        "chosen": choose(runs, embedder.name),
        "shipped": relevance_text.STRONG,
        "tuning": figures(runs, embedder.name, relevance_text.STRONG, "tuning"),
        "held-out": figures(runs, embedder.name, relevance_text.STRONG, "held-out"),
        "cost": cost(args.data, work),
        "seconds": round(time.perf_counter() - started),
        "recall_seconds": collected,
    }
    print("STRONG chosen on the tuning half:", result["chosen"], "shipped:", result["shipped"])
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "relevance_words.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    update_doc("relevance-words", table(result))


if __name__ == "__main__":
    main()
