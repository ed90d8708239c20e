"""The relevance floor ("nothing relevant" is an answer), calibrated and measured on public data
through the public Python API (``eidetic.Memory``), with the loaders of ``quality.py``.

    python benchmarks/relevance_floor.py [--data ../shared/data] [--work DIR]

Matching queries: LoCoMo questions of categories 1-4 on their own conversation's store, SciFact
claims on the SciFact store (recall@10 with the floor off and on). Unrelated queries: SciFact
claims on each LoCoMo conversation's store, LoCoMo questions (every category) on the SciFact
store (how often the floor leaves nothing). Each recall is made once, with the floor at 0 and
``explain``, which gives every hit's raw evidence (cosine; BM25 over the query's idf mass); the
floor is then applied to it by ``eidetic.ranking.relevance`` itself.

Honest tuning: the constants are chosen on one half (LoCoMo conversations conv-26, conv-30,
conv-41 and SciFact's train claims) and reported on the other (conv-42, conv-43, conv-44 and
SciFact's public test claims), with standard errors (unrelated queries: clustered by query, as
one claim meets three stores). The rule: on the tuning half, no mode's recall@10 may drop by
more than ``BUDGET`` on either dataset; among the floors that keep to it, the highest share of
unrelated queries answered with nothing (the worse direction first, then the other). The script
prints the constants it chose and evaluates what ``ranking/relevance.py`` ships; put the printed
constants there when they differ. Signals are kept in ``--work`` (a rerun with other rules reads
them); ``EIDETIC_CACHE_DIR`` shares the embedding cache (SciFact: ~25 min on one core otherwise).
The data is read from ``../shared/data`` (non-commercial licences: never copied here).

Young stores (``relevance.YOUNG_SLOPES``): seeded random slices of 5, 20, 100 and 200 records of
each half, a window of consecutive turns of one conversation or a draw of abstracts that holds
the evidence of a few claims (a quarter of the slice) and random others. Matching queries are
those whose evidence lies wholly in the slice; unrelated ones a seeded sample of the other
dataset's queries of the same half. Every store is judged as a recall judges a store of its size
(``Calibration.at``; the large stores, 369 records and more, as before). The rule: each mode's
slope is the largest that leaves unrelated queries empty, on the tuning half's slices of each
size and both ways, at least as often as the large stores of the tuning half do in the
direction they do best (or as that size does with no slope, where that is less): keyword
recall's 9 % for chat questions on SciFact is a failure of words alone, not a rate to aim for.
Standing out (``relevance.STANDOUT_FLOORS``, approximate mode): each young store's recall also
keeps the store's reference cosine for the query (``relevance.reference``, read from
``--explain``), and each hit's words (``relevance.YOUNG_WORD_FLOORS``: BM25 over the query's idf
mass, which ``--explain`` gives an approximate hit in a young store). At the slope chosen alone
(the young line comes first: the best of fewer chances sits lower), the standout floor and the
words floor of approximate mode are chosen together on the tuning half's slices (no words floor
is one choice): among the pairs that leave unrelated queries empty, at each size and each
way, as often as the large stores of the tuning half do that way (or as that size does with no
slope, where that is less), and leave questions about another conversation (asked of each
conversation slice: unrelated, but in the store's own register) empty as often as the slope
alone does, the one that keeps the most of the matching queries' recall@10. The young table's
"before" is the young floors as shipped before standing out and the best's share.

``--young-only`` makes the conversations' and the slices' recalls only and takes the SciFact
store's figures from the last full run (``benchmarks/results/``): a store of ``YOUNG`` records or
more is judged as before.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic.ranking import relevance  # noqa: E402
from quality import locomo_samples, open_store, prepared, scifact_queries, scifact_records  # noqa: E402
from report import update_doc  # noqa: E402

K = 10
MODES = ("keyword", "approximate", "hybrid")
TUNING = ("conv-26", "conv-30", "conv-41")  # LoCoMo's first public half; SciFact: train claims
HELD_OUT = ("conv-42", "conv-43", "conv-44")  # the second half; SciFact: public test claims
BUDGET = 0.01  # largest recall@10 drop allowed while tuning: half the 0.02 the floor may cost
COSINES = [round(float(c), 3) for c in np.arange(0.20, 0.601, 0.01)]
KEYWORDS = [round(float(k), 3) for k in np.arange(0.10, 4.001, 0.05)]
SHARES = [round(float(share), 2) for share in np.arange(0.5, 1.001, 0.05)]  # of the line, for each hit
SIZES = (5, 20, 100, 200)  # young stores: records in a slice
SLICES = 8  # slices of each size, per dataset and half
UNRELATED_PER_SLICE = 40  # the other dataset's queries asked of each slice
SLOPES = [round(float(slope), 4) for slope in np.arange(0.0, 0.1001, 0.0025)]
STANDOUTS = [round(float(g), 3) for g in np.arange(0.60, 0.149, -0.01)]  # highest first: approximate's, with its slope
WORDS = [round(float(k), 3) for k in np.arange(4.0, 0.249, -0.05)]  # highest first: a young store's words floor
SEED = 30

Run = dict  # {"kind", "half", "key", "cluster", "mode", "relevant", "hits": [[id, cosine, words]], "reference"}


def evidence(memory, text: str, mode: str) -> tuple[list[list], float | None]:
    """The top k's (id, raw cosine, BM25 over the query's idf mass): every hit, floor at 0; and
    the store's reference cosine for the query where a young store judges standing out."""
    result = memory.recall(text, mode=mode, top_k=K, relevance_floor=0, explain=True, depth=0, record=False)
    rows = []
    for hit in result.items:
        e = hit.explain
        bm25 = e["raw_score"] if e["engine"] == "keyword" else e.get("bm25")
        words = bm25 / e["query_idf"] if bm25 and e["query_idf"] else 0.0
        rows.append([hit.record.id, e.get("cosine"), words])
    return rows, result.items[0].explain.get("cosine_reference") if result.items else None


def collect(data: Path, work: Path, scifact_store: bool = True) -> tuple[list[Run], int]:
    """Every recall, made once per store and kept in ``work`` (a rerun reads it), each run marked
    with its store's size, and the seconds they took when they were made. ``scifact_store``
    False: the conversations' stores only."""
    turns, questions = locomo_samples(data)
    claims = {split: scifact_queries(data, split)[0] for split in ("train", "test")}
    half = {conv: "tuning" for conv in TUNING} | {conv: "held-out" for conv in HELD_OUT}
    split_of = {"tuning": "train", "held-out": "test"}
    made = []
    for conv, name in half.items():
        asked = [
            ("locomo", q["qid"], q["question"], q["relevant_ids"])
            for q in questions
            if q["sample_id"] == conv and q["category"] != 5 and q["relevant_ids"]
        ]
        asked += [("scifact-on-locomo", f"{conv}/{c['_id']}", c["text"], []) for c in claims[split_of[name]]]
        made.append(_sized(_store_runs(work, f"locomo-{conv}", partial(list, turns[conv]), asked, name), turns[conv]))
    corpus = scifact_records(data) if scifact_store else []
    for name, split in split_of.items() if scifact_store else ():
        relevant = scifact_queries(data, split)[1]
        asked = [
            ("scifact", q["_id"], q["text"], sorted(relevant[q["_id"]]))
            for q in claims[split]
            if relevant.get(q["_id"])
        ]
        asked += [
            ("locomo-on-scifact", q["qid"], q["question"], []) for q in questions if half.get(q["sample_id"]) == name
        ]
        made.append(
            _sized(_store_runs(work, "scifact", partial(list, corpus), asked, name, f"scifact-{split}"), corpus)
        )
    return [run for runs, _ in made for run in runs], sum(seconds for _, seconds in made)


def _sized(made: tuple[list[Run], int], records: list[dict]) -> tuple[list[Run], int]:
    """Runs marked with their store's size (identical texts are stored once)."""
    size = len({record["text"] for record in records})
    return [run | {"records": size} for run in made[0]], made[1]


def _store_runs(
    work: Path,
    store: str,
    records: Callable[[], list[dict]],
    queries: list[tuple[str, str, str, list[str]]],
    half: str,
    label: str | None = None,
) -> tuple[list[Run], int]:
    work.mkdir(parents=True, exist_ok=True)
    saved = work / f"signals-{label or store}.json"
    if saved.exists():
        kept = json.loads(saved.read_text())
        return kept["runs"], kept["seconds"]
    started, runs = time.perf_counter(), []
    with open_store(work / store) as memory:
        memory.remember(records())
        for kind, key, text, relevant in queries:
            for mode in MODES:
                hits, reference = evidence(memory, text, mode)
                runs.append(
                    {"kind": kind, "half": half, "key": key, "cluster": text, "mode": mode, "relevant": relevant}
                    | {"hits": hits, "reference": reference}
                )
    seconds = round(time.perf_counter() - started)
    saved.write_text(json.dumps({"seconds": seconds, "runs": runs}))
    print(f"{label or store}: {len(runs)} recalls in {seconds} s", file=sys.stderr)
    return runs, seconds


def collect_young(data: Path, work: Path) -> tuple[list[Run], int]:
    """Every recall on the young stores (module docstring), each run marked with its store's
    size, and the seconds they took when they were made."""
    turns, questions = locomo_samples(data)
    records = {r["id"]: r for r in scifact_records(data)}
    made = []
    for half, convs, split in (("tuning", TUNING, "train"), ("held-out", HELD_OUT, "test")):
        claims, relevant = scifact_queries(data, split)
        cited = [(c, sorted(relevant[c["_id"]])) for c in claims if relevant.get(c["_id"])]
        chat = [q for q in questions if q["sample_id"] in convs]
        for size in SIZES:
            rng = random.Random(f"{SEED}-{half}-{size}")
            for i in range(SLICES):
                conv = rng.choice(convs)
                start = rng.randrange(len(turns[conv]) - size + 1)
                window = turns[conv][start : start + size]
                held = {r["id"] for r in window}
                asked = [
                    ("locomo", q["qid"], q["question"], q["relevant_ids"])
                    for q in chat
                    if q["sample_id"] == conv and q["category"] != 5 and q["relevant_ids"]
                    if set(q["relevant_ids"]) <= held
                ]
                asked += [
                    ("scifact-on-locomo", c["_id"], c["text"], []) for c in rng.sample(claims, UNRELATED_PER_SLICE)
                ]
                label = f"young-locomo-{half}-{size}-{i}"
                elsewhere = [q for q in chat if q["sample_id"] != conv]  # its own draw: the slices stay as they were
                asked += [
                    (ELSEWHERE, q["qid"], q["question"], [])
                    for q in random.Random(f"{SEED}-{label}").sample(elsewhere, UNRELATED_PER_SLICE)
                ]
                made.append(_young(work, label, window, asked, half))
                slice_ids = _abstracts(rng, cited, list(records), size)
                asked = [("scifact", c["_id"], c["text"], docs) for c, docs in cited if set(docs) <= slice_ids]
                asked += [
                    ("locomo-on-scifact", q["qid"], q["question"], []) for q in rng.sample(chat, UNRELATED_PER_SLICE)
                ]
                label = f"young-scifact-{half}-{size}-{i}"
                made.append(_young(work, label, [records[rid] for rid in sorted(slice_ids)], asked, half))
    return [run for runs, _ in made for run in runs], sum(seconds for _, seconds in made)


def _abstracts(rng: random.Random, cited: list[tuple[dict, list[str]]], every: list[str], size: int) -> set[str]:
    """A slice of ``size`` abstracts: the evidence of claims drawn at random, up to a quarter of
    it (at least one claim's), then abstracts drawn at random."""
    chosen: set[str] = set()
    for _, docs in rng.sample(cited, len(cited)):
        if len(chosen | set(docs)) <= max(size // 4, len(docs) if not chosen else 0):
            chosen |= set(docs)
        if len(chosen) >= size // 4 and chosen:
            break
    while len(chosen) < size:
        chosen.add(rng.choice(every))
    return chosen


def _young(work: Path, label: str, records: list[dict], asked: list, half: str) -> tuple[list[Run], int]:
    runs, seconds = _sized(_store_runs(work / "young", label, partial(list, records), asked, half), records)
    return [run | {"slice": len(records)} for run in runs], seconds


Floors = dict[str, relevance.Calibration]  # mode -> its floors


def _kept(run: Run, floors: Floors, previous: bool = False) -> list[bool]:
    """Which of a run's hits the floor keeps, judged as a recall judges them (``previous``: as
    it did before a young store judged the other hits by the best's share too)."""
    calibration, semantic = floors[run["mode"]], run["mode"] != "keyword"
    if "records" in run:  # its floors as a store of its size draws them (young: lower)
        calibration = calibration.at(run["records"])
    if previous:
        calibration = replace(calibration, of_best=None)
    reference = run.get("reference")
    values = [
        relevance.relevance(cosine, words, 1.0, calibration, semantic, reference) for _, cosine, words in run["hits"]
    ]
    return relevance.kept(values, relevance.AUTO, calibration.share, calibration.of_best)


def mean_se(values: list[float], clusters: list[str] | None = None) -> tuple[float, float]:
    """The mean and its standard error; with ``clusters``, over the clusters' means (a claim
    asked of three stores is one observation, not three)."""
    if clusters is not None:
        grouped: dict[str, list[float]] = defaultdict(list)
        for value, cluster in zip(values, clusters):
            grouped[cluster].append(value)
        values = [sum(group) / len(group) for group in grouped.values()]
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    average = sum(values) / n
    spread = math.sqrt(sum((v - average) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return average, spread / math.sqrt(n)


def figures(runs: list[Run], half: str, floors: Floors, previous: bool = False) -> dict:
    """Per mode: how often unrelated queries come back empty (both ways), recall@10 with the
    floor off and on, and how many of the top 10 a matching query keeps."""
    out: dict = {}
    for mode in MODES:
        mine = [r for r in runs if r["half"] == half and r["mode"] == mode]
        row: dict = {}
        for kind in (*UNRELATED, ELSEWHERE):
            unrelated = [r for r in mine if r["kind"] == kind]
            empty = [float(not any(_kept(r, floors, previous))) for r in unrelated]
            row[f"empty {kind}"] = mean_se(empty, [r["cluster"] for r in unrelated]) + (len(unrelated),)
        for kind in ("locomo", "scifact"):
            matching = [r for r in mine if r["kind"] == kind]
            off, on, kept, lost = [], [], [], []
            for r in matching:
                flags, relevant = _kept(r, floors, previous), set(r["relevant"])
                found = [hit[0] in relevant for hit in r["hits"]]
                off.append(sum(found) / len(relevant))
                on.append(sum(f and k for f, k in zip(found, flags)) / len(relevant))
                kept.append(float(sum(flags)))
                lost.append(float(not any(flags)))
            row[f"recall {kind}"] = (mean_se(off)[0], mean_se(on)[0]) + mean_se([a - b for a, b in zip(off, on)])
            row[f"kept {kind}"] = (mean_se(kept)[0], mean_se(lost)[0], len(matching))
        out[mode] = row
    return out


def _matrices(runs: list[Run], half: str, mode: str, kind: str) -> tuple[np.ndarray, ...]:
    """A kind of run as arrays: cosines, words, relevant (n x K), relevant counts (NaN: no hit)."""
    mine = [r for r in runs if r["half"] == half and r["mode"] == mode and r["kind"] == kind]
    cos, words, rel = (np.full((len(mine), K), np.nan) for _ in range(3))
    for i, r in enumerate(mine):
        for j, (rid, cosine, evidence_words) in enumerate(r["hits"]):
            cos[i, j] = np.nan if cosine is None else cosine
            words[i, j] = evidence_words
            rel[i, j] = rid in set(r["relevant"])
    return cos, words, rel == 1, np.array([max(1, len(r["relevant"])) for r in mine], dtype=float)


def choose(runs: list[Run]) -> tuple[Floors, dict]:
    """Each mode's floors and hit share on the tuning half under the rule (module docstring),
    then the largest share that keeps to it (the noise left out). The grid runs on arrays: the
    relevance of a hit is max(cosine / C, words / K) over the floors the mode has, as
    ``relevance.relevance`` computes it; ``figures`` then judges with the module itself."""
    floors, reached = {}, {}
    for mode in MODES:
        m = {kind: _matrices(runs, "tuning", mode, kind) for kind in KINDS}
        best: tuple = (-1.0,)
        for c in COSINES if mode != "keyword" else (None,):
            for k in KEYWORDS if mode != "approximate" else (None,):
                values = {kind: _relevance(m[kind], c, k) for kind in KINDS}
                for share in SHARES:
                    cleared = {kind: _cleared(values[kind], share) for kind in KINDS}
                    if max(_drop(m[kind], cleared[kind]) for kind in ("locomo", "scifact")) > BUDGET:
                        break  # a larger share only drops more
                    rates = [float(np.mean(~cleared[kind].any(axis=1))) for kind in UNRELATED]
                    score = (min(rates), sum(rates) / len(rates), share, -(c or 0.0), -(k or 0.0))
                    if score > best:
                        best = score + (c, k)
        if best[0] < 0:
            raise SystemExit(f"{mode}: no floor keeps recall@10 within {BUDGET} on the tuning half")
        floors[mode] = relevance.Calibration(best[5], best[6], best[2])
        reached[mode] = {"worst_empty": round(best[0], 4), "mean_empty": round(best[1], 4)}
    return floors, reached


def _relevance(arrays: tuple[np.ndarray, ...], c: float | None, k: float | None) -> np.ndarray:
    cos, words, _, _ = arrays
    value = np.zeros(cos.shape)
    if c is not None:
        value = np.maximum(value, np.nan_to_num(cos, nan=0.0) / c)
    if k is not None:
        value = np.maximum(value, np.nan_to_num(words, nan=0.0) / k)
    return np.where(np.isnan(words), -1.0, value)  # NaN words: no hit there


def _cleared(values: np.ndarray, share: float) -> np.ndarray:
    relevant = (values >= relevance.AUTO).any(axis=1, keepdims=True)
    return relevant & (values >= share * relevance.AUTO)


def _drop(arrays: tuple[np.ndarray, ...], cleared: np.ndarray) -> float:
    _, _, relevant, counts = arrays
    return float(np.mean((relevant & ~cleared).sum(axis=1) / counts))


UNRELATED = ("scifact-on-locomo", "locomo-on-scifact")
ELSEWHERE = "locomo-elsewhere"  # young conversation slices: questions about another conversation
KINDS = ("locomo", "scifact") + UNRELATED


def _pct(value: tuple) -> str:
    return f"{100 * value[0]:.1f} % ± {100 * value[1]:.1f} (n {value[2]})"


def constants(floors: Floors, model: str) -> str:
    """Floors as ``ranking/relevance.py`` spells them."""
    keyword = {mode: f.keyword for mode, f in floors.items() if f.keyword is not None}
    cosine = {mode: f.semantic for mode, f in floors.items() if f.semantic is not None}
    shares = {mode: f.share for mode, f in floors.items()}
    return f"KEYWORD_FLOORS = {keyword}; COSINE_FLOORS[{model!r}] = {cosine}; HIT_SHARES = {shares}"


def table(result: dict) -> str:
    lines = [
        f"{result['date']}, {result['machine']}; embedder {result['embedder']}; the recalls took "
        f"{result['recall_seconds']} s (made once and kept in `--work`; this run {result['seconds']} s); "
        "`python benchmarks/relevance_floor.py --work /tmp/floor` (with `EIDETIC_CACHE_DIR` on a cache that has "
        "the SciFact vectors).",
        "",
        f"Chosen on the tuning half (recall@10 drop at most {BUDGET} there): `{result['chosen']}`. "
        f"Shipped and measured below: `{result['shipped']}`.",
        "",
        "| half | mode | empty: SciFact claims on LoCoMo | empty: LoCoMo questions on SciFact "
        "| LoCoMo R@10 off -> on (drop ± SE) | SciFact R@10 off -> on (drop ± SE) | kept of top 10: LoCoMo, SciFact "
        "| matching left empty: LoCoMo, SciFact |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for half in ("tuning", "held-out"):
        for mode, row in result[half].items():
            cells = [_pct(row[f"empty {kind}"]) for kind in UNRELATED]
            for kind in ("locomo", "scifact"):
                off, on, drop, se = row[f"recall {kind}"]
                cells.append(f"{off:.3f} -> {on:.3f} ({drop:.3f} ± {se:.3f})")
            cells.append(f"{row['kept locomo'][0]:.1f}, {row['kept scifact'][0]:.1f}")
            cells.append(f"{100 * row['kept locomo'][1]:.1f} %, {100 * row['kept scifact'][1]:.1f} %")
            lines.append(f"| {half} | {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def choose_young(runs: list[Run], floors: Floors, large: dict) -> Floors:
    """Each mode's young-store floors under the rule (module docstring), on the tuning half's
    slices, with ``floors`` as the large stores judge (no slope, no standing out) and ``large``
    their tuning-half figures: the slope, and for a mode with a standout floor, the pair."""
    chosen = {}
    for mode in MODES:
        groups: dict[tuple, list[Run]] = defaultdict(list)
        for r in runs:
            if r["half"] == "tuning" and r["mode"] == mode and r["kind"] in UNRELATED and "slice" in r:
                groups[(r["slice"], r["kind"])].append(r)
        floor, bar = floors[mode], max(large[mode][f"empty {kind}"][0] for kind in UNRELATED)
        need = {key: min(_empty(floor, group), bar) for key, group in groups.items()}
        holds = partial(_holds, groups, need)
        best = floor
        for slope in SLOPES:
            if not holds(replace(floor, young=slope)):
                break  # a larger slope only empties less
            best = replace(floor, young=slope)
        if mode in relevance.STANDOUT_FLOORS:
            each_way = {
                key: min(_empty(floor, group), large[mode][f"empty {key[1]}"][0]) for key, group in groups.items()
            }
            best = _standout_and_words(runs, mode, best, each_way)
        chosen[mode] = best
    return chosen


def _standout_and_words(runs: list[Run], mode: str, alone: relevance.Calibration, need: dict) -> relevance.Calibration:
    """The standout floor and words floor of ``mode`` (module docstring) at the slope chosen
    ``alone``: judged on arrays as ``relevance`` judges a young store (``_judged``), since the
    grid is large; ``figures`` then judges what ships with the module itself."""
    tuning = [r for r in runs if r["half"] == "tuning" and r["mode"] == mode]
    arrays = _young_arrays(tuning)
    kinds = np.array([r["kind"] for r in tuning])
    sizes = np.array([r["slice"] for r in tuning])
    groups = {key: (sizes == key[0]) & (kinds == key[1]) for key in need}
    nearby = {size: (sizes == size) & (kinds == ELSEWHERE) for size in SIZES}
    matching = np.isin(kinds, KINDS[:2])

    def empty(kept: np.ndarray, rows: np.ndarray) -> float:
        return float(np.mean(~kept[rows].any(axis=1))) if rows.any() else 1.0

    before = _judged(arrays, alone)
    in_register = {size: empty(before, rows) for size, rows in nearby.items()}  # no more let through
    best, best_score = alone, _recall_arrays(arrays, before, matching)
    for words in (None, *WORDS) if mode in relevance.YOUNG_WORD_FLOORS else (None,):
        for standout in STANDOUTS:
            candidate = replace(alone, standout=standout, young_words=words)
            kept = _judged(arrays, candidate)
            if any(empty(kept, rows) < need[key] - 1e-9 for key, rows in groups.items()) or any(
                empty(kept, rows) < in_register[size] - 1e-9 for size, rows in nearby.items()
            ):
                break  # a lower floor only empties less
            score = _recall_arrays(arrays, kept, matching)
            if score > best_score + 1e-12:
                best, best_score = candidate, score
    return best


def _young_arrays(runs: list[Run]) -> dict[str, np.ndarray]:
    """Young runs of one semantic mode as arrays: cosines (NaN: no hit), words, reference,
    records, and which hits are relevant."""
    cos = np.full((len(runs), K), np.nan)
    words = np.zeros((len(runs), K))
    relevant = np.zeros((len(runs), K), dtype=bool)
    for i, r in enumerate(runs):
        for j, (rid, cosine, found) in enumerate(r["hits"]):
            cos[i, j] = np.nan if cosine is None else cosine
            words[i, j] = found or 0.0
            relevant[i, j] = rid in set(r["relevant"])
    reference = np.array([np.nan if r.get("reference") is None else r["reference"] for r in runs])
    counts = np.array([max(1, len(r["relevant"])) for r in runs], dtype=float)
    records = np.array([r["records"] for r in runs], dtype=float)
    arrays = {"cos": cos, "words": words, "reference": reference, "records": records, "relevant": relevant}
    return arrays | {"counts": counts}


def _judged(a: dict[str, np.ndarray], floor: relevance.Calibration) -> np.ndarray:
    """Which hits ``floor`` keeps, as ``relevance.relevance`` and ``kept`` judge a mode with no
    keyword floor of its own: cosines, and in a young store standing out and words."""
    young = a["records"] < relevance.YOUNG
    scale = np.where(young, 1.0 - floor.young * np.log(relevance.YOUNG / np.maximum(a["records"], 1.0)), 1.0)
    present = ~np.isnan(a["cos"])
    cos = np.nan_to_num(a["cos"], nan=0.0)
    value = cos / (floor.semantic * scale)[:, None]
    if floor.standout is not None:
        stands = young & ~np.isnan(a["reference"])
        out = (cos - np.nan_to_num(a["reference"], nan=0.0)[:, None]) / floor.standout
        value = np.where(stands[:, None], np.maximum(value, out), value)
    if floor.young_words is not None:
        value = np.where(young[:, None], np.maximum(value, a["words"] / floor.young_words), value)
    value = np.where(present, value, -np.inf)
    best = value.max(axis=1)
    each = np.where(young, np.minimum(floor.share / scale, floor.share * best), floor.share)
    return (best >= relevance.AUTO)[:, None] & present & ((value >= each[:, None]) | (value == best[:, None]))


def _recall_arrays(a: dict[str, np.ndarray], kept: np.ndarray, rows: np.ndarray) -> float:
    return float(np.mean(((a["relevant"] & kept).sum(axis=1) / a["counts"])[rows])) if rows.any() else 0.0


def _holds(groups: dict[tuple, list[Run]], need: dict[tuple, float], floor: relevance.Calibration) -> bool:
    """Whether ``floor`` leaves each group of unrelated queries empty as often as it needs."""
    return all(_empty(floor, group) >= need[key] - 1e-9 for key, group in groups.items())


def _empty(floor: relevance.Calibration, runs: list[Run]) -> float:
    """How often unrelated queries of one mode come back empty, judged by ``floor``."""
    judged = {run["mode"]: floor for run in runs}
    return float(np.mean([not any(_kept(run, judged)) for run in runs])) if runs else 1.0


def young_constants(floors: Floors) -> str:
    """Young stores' floors as ``ranking/relevance.py`` spells them."""
    standouts = {mode: f.standout for mode, f in floors.items() if f.standout is not None}
    words = {mode: f.young_words for mode, f in floors.items() if f.young_words is not None}
    slopes = {mode: f.young for mode, f in floors.items()}
    return f"YOUNG_SLOPES = {slopes}; STANDOUT_FLOORS = {standouts}; YOUNG_WORD_FLOORS = {words}"


def young_table(result: dict) -> str:
    lines = [
        f"{result['date']}, {result['machine']}; embedder {result['embedder']}; the young stores' recalls took "
        f"{result['young_seconds']} s; `python benchmarks/relevance_floor.py --young-only --work /tmp/floor`.",
        "",
        f"Chosen on the tuning half's slices: `{result['young_chosen']}`. Shipped: `{result['young_shipped']}` "
        "(before: the same slopes, no standing out, no words, and each hit but the best judged by its share of the large "
        "stores' line only; 350 records and more are judged as before).",
        "",
        "| half | records | mode | empty: SciFact claims on LoCoMo, before -> after | empty: LoCoMo questions on "
        "SciFact, before -> after | empty: questions about another conversation, before -> after "
        "| LoCoMo R@10 floor off: on before -> after | SciFact R@10 floor off: on before -> after "
        "| matching left empty: LoCoMo, before -> after | matching left empty: SciFact, before -> after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for half in HALVES:
        for size in [*map(str, SIZES), "conversations"]:
            before, after = result["young"][half][size]["before"], result["young"][half][size]["after"]
            for mode in MODES:
                b, a = before[mode], after[mode]
                cells = [
                    f"{100 * b[f'empty {kind}'][0]:.1f} % -> {100 * a[f'empty {kind}'][0]:.1f} % (n {a[f'empty {kind}'][2]})"
                    if a.get(f"empty {kind}", (0, 0, 0))[2]
                    else "-"
                    for kind in (*UNRELATED, ELSEWHERE)
                ]
                for kind in ("locomo", "scifact"):
                    cells.append(
                        f"{b[f'recall {kind}'][0]:.3f}: {b[f'recall {kind}'][1]:.3f} -> {a[f'recall {kind}'][1]:.3f}"
                    )
                for kind in ("locomo", "scifact"):
                    n = a[f"kept {kind}"][2]
                    cells.append(f"{100 * b[f'kept {kind}'][1]:.1f} % -> {100 * a[f'kept {kind}'][1]:.1f} % (n {n})")
                records = "369-680; SciFact 5,183" if size == "conversations" else size
                lines.append(f"| {half} | {records} | {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, help="keep stores and signals here (a rerun reuses them)")
    parser.add_argument(
        "--young-only",
        action="store_true",
        help="only the young stores; the large stores' figures come from benchmarks/results/relevance_floor.json",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    work, embedder, why = prepared(args.work, "eidetic-floor-")
    if embedder is None:
        raise SystemExit(f"no embedder ({why}): the floor is calibrated for a model")
    saved = HERE / "results" / "relevance_floor.json"
    shipped = {mode: relevance.Calibration.of(mode, embedder.name) for mode in MODES}
    if args.young_only:
        result = json.loads(saved.read_text())  # the SciFact store's figures, from the last full run
        if result["embedder"] != embedder.name:
            raise SystemExit(f"{saved} measured {result['embedder']}: run without --young-only")
        large_runs, _ = collect(args.data, work, scifact_store=False)
    else:
        result, large_runs = large(args.data, work, embedder.name, shipped, started)
        shipped = {mode: replace(floor, young=shipped[mode].young) for mode, floor in result.pop("floors").items()}
    plain = {mode: replace(floor, young=0.0, standout=None, young_words=None) for mode, floor in shipped.items()}
    before = {mode: replace(floor, standout=None, young_words=None) for mode, floor in shipped.items()}  # slopes
    large_before = {half: _merged(result[half], figures(large_runs, half, plain)) for half in HALVES}
    for half in HALVES:
        result[half] = _merged(result[half], figures(large_runs, half, shipped))
    young_started = time.perf_counter()
    young_runs, young_seconds = collect_young(args.data, work)
    young_chosen = young_constants(choose_young(young_runs, plain, large_before["tuning"]))
    result |= {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "young_chosen": young_chosen,
        "young_shipped": young_constants(shipped),
        "young_seconds": young_seconds or round(time.perf_counter() - young_started),
        "young": {
            half: {
                str(size): {
                    "before": figures([r for r in young_runs if r["slice"] == size], half, before, previous=True),
                    "after": figures([r for r in young_runs if r["slice"] == size], half, shipped),
                }
                for size in SIZES
            }
            | {"conversations": {"before": large_before[half], "after": result[half]}}
            for half in HALVES
        },
    }
    print("young stores, chosen on the tuning half:", young_chosen)
    saved.parent.mkdir(exist_ok=True)
    saved.write_text(json.dumps(result, indent=2) + "\n")
    if not args.young_only:  # the large stores' table is a full run's: its SciFact recalls are not re-made here
        print(table(result))
        update_doc("relevance-floor", table(result))
    print(young_table(result))
    update_doc("relevance-floor-young", young_table(result))


HALVES = ("tuning", "held-out")
CONVERSATION_FIGURES = ("empty scifact-on-locomo", "recall locomo", "kept locomo")  # the conversations' stores


def _merged(saved: dict, measured: dict) -> dict:
    """Figures of the SciFact store as ``saved`` has them, of the conversations as ``measured``
    (the same when both come from one full run)."""
    return {mode: saved[mode] | {key: measured[mode][key] for key in CONVERSATION_FIGURES} for mode in MODES}


def large(data: Path, work: Path, model: str, shipped: Floors, started: float) -> tuple[dict, list[Run]]:
    """The large stores: floors chosen on the tuning half, figures of what ships on both, and
    the runs."""
    runs, collected = collect(data, work)
    chosen, reached = choose(runs)
    if any(floor.semantic is None for mode, floor in shipped.items() if mode != "keyword"):
        shipped = chosen  # a model not calibrated yet: its figures with what was just chosen
    result = {
        "embedder": model,
        "chosen": constants(chosen, model),
        "reached": reached,
        "shipped": constants(shipped, model),
        "floors": shipped,
        "tuning": figures(runs, "tuning", shipped),
        "held-out": figures(runs, "held-out", shipped),
        "seconds": round(time.perf_counter() - started),
        "recall_seconds": collected,
    }
    print("chosen on the tuning half:", result["chosen"])
    if result["chosen"] != result["shipped"]:
        print("ranking/relevance.py ships other constants; the figures below are for those:", result["shipped"])
    return result, runs


if __name__ == "__main__":
    main()
