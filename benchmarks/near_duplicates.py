"""The cosine line of near-duplicates (``SIMILAR_COSINE`` in ``ranking/similar.py``), chosen on
public data and measured on a held-out half.

    python benchmarks/near_duplicates.py [--data ../shared/data]

LoCoMo's per-session ``observation`` facts each cite the dialogue turns (``dia_id``) they
restate: a fact and its evidence turn are the same memory worded twice (positive pairs), and the
fact with every other turn of its conversation is a hard negative (same people, same topics).
Two facts citing the same turn are a second kind of positive pair (both third-person summaries),
and two facts citing different turns a negative. A turn is a record as ``quality.py`` makes it
("speaker: text", plus the shared image's caption), so its vector is the one a recall uses.

The line is chosen on the tuning conversations (conv-26, conv-30, conv-41) and reported on the
held-out ones (conv-42, conv-43, conv-44): the lowest cosine, on a 0.01 grid, from which every
higher line keeps the precision of fact-turn pairs at ``PRECISION`` or more. Precision comes
first because ``remember --on-similar skip`` leaves out what it calls similar. Fact-fact pairs
are reported, not used to choose: LoCoMo restates a fact in later sessions citing a later turn,
so many of their "negatives" are the same memory (their precision is a floor); the closest
fact-fact pairs citing no turn in common are listed for a reader to judge. The script
prints the line it chose and evaluates the one ``ranking/similar.py`` ships; put the printed line
there when they differ. ``EIDETIC_CACHE_DIR`` shares the embedding cache (the turns' vectors are
those of ``quality.py``); the data is read from ``../shared/data`` (CC BY-NC: never copied here).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from eidetic.ranking.particulars import Particulars, differ, differing, particulars  # noqa: E402
from eidetic.ranking.similar import SIMILAR_COSINE  # noqa: E402
from measure import machine  # noqa: E402
from quality import locomo_samples, prepared  # noqa: E402
from report import update_doc  # noqa: E402

TUNING = ("conv-26", "conv-30", "conv-41")
HELD_OUT = ("conv-42", "conv-43", "conv-44")
PRECISION = 0.95  # a false "similar" under --on-similar skip loses a record
LINES = [round(float(c), 2) for c in np.arange(0.60, 1.0001, 0.01)]
KINDS = ("fact-turn", "fact-fact")
RULES = ("cosine", "particulars")  # the cosine alone (before), and with the particulars rule (shipped)
_DIA = re.compile(r"D\d+:\d+")


def facts(data: Path) -> dict[str, list[tuple[str, set[str]]]]:
    """Per conversation, each observation fact with the ids of the turns it cites."""
    out: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for sample in json.loads((data / "locomo" / "locomo_public.json").read_text()):
        conv = sample["sample_id"]
        for session in sample["observation"].values():
            for said in session.values():
                for text, cited in said:
                    cited = cited if isinstance(cited, list) else [cited]
                    ids = {f"{conv}:{dia}" for item in cited for dia in _DIA.findall(item)}
                    if ids:
                        out[conv].append((text, ids))
    return out


def vectors(embedder, texts: list[str]) -> np.ndarray:
    """Each text's vector, from the embedding cache where it is (else computed and cached)."""
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash
    from eidetic.settings import Settings

    cache = VectorCache(Settings.load().cache_dir / "vectors.sqlite")
    hashes = [text_hash(text) for text in texts]
    found = cache.get(embedder.name, hashes)
    missing = list(dict.fromkeys(h for h in hashes if h not in found))
    by_hash = dict(zip(hashes, texts))
    for start in range(0, len(missing), 64):
        chunk = missing[start : start + 64]
        new = dict(zip(chunk, embedder.embed([by_hash[h] for h in chunk])))
        cache.put(embedder.name, new.items())
        found.update(new)
    cache.close()
    return np.stack([found[h] for h in hashes]).astype(np.float32)


Found = dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]


def agree(cosines: np.ndarray, left: list[Particulars], right: list[Particulars]) -> np.ndarray:
    """Whether each pair's particulars agree (``ranking.particulars``), judged where the cosine
    reaches the lowest line swept (elsewhere no rule calls the pair similar)."""
    out = np.zeros(cosines.shape, dtype=bool)
    for i, j in zip(*np.nonzero(cosines >= LINES[0])):
        out[i, j] = not differ(left[i], right[j])
    return out


def pairs(embedder, data: Path) -> Found:
    """Per conversation and kind, (cosines, is-positive, particulars agree) of every pair."""
    turns, _ = locomo_samples(data)
    out: Found = {}
    for conv, said in facts(data).items():
        records = turns[conv]
        turn_vectors = vectors(embedder, [r["text"] for r in records])
        fact_vectors = vectors(embedder, [text for text, _ in said])
        turn_marks = [particulars(r["text"]) for r in records]
        fact_marks = [particulars(text) for text, _ in said]
        cited = np.array([[r["id"] in ids for r in records] for _, ids in said])
        shares = np.array([[bool(a & b) for _, b in said] for _, a in said])
        upper = np.triu_indices(len(said), k=1)  # each pair of facts once
        fact_turn = fact_vectors @ turn_vectors.T
        fact_fact = fact_vectors @ fact_vectors.T
        out[conv] = {
            "fact-turn": (fact_turn.ravel(), cited.ravel(), agree(fact_turn, fact_marks, turn_marks).ravel()),
            "fact-fact": (fact_fact[upper], shares[upper], agree(fact_fact, fact_marks, fact_marks)[upper]),
        }
    return out


def scored(found: Found, convs: tuple[str, ...], line: float, rule: str = "particulars") -> dict[str, dict[str, float]]:
    """Precision and recall of "similar at ``line``" per kind of pair and pooled, with counts:
    by the cosine alone (``rule="cosine"``, before the particulars rule) or as shipped."""
    out = {}
    for kind in (*KINDS, "pooled"):
        kinds = KINDS if kind == "pooled" else (kind,)
        cos = np.concatenate([found[c][k][0] for c in convs for k in kinds])
        positive = np.concatenate([found[c][k][1] for c in convs for k in kinds])
        called = cos >= line
        if rule == "particulars":
            called &= np.concatenate([found[c][k][2] for c in convs for k in kinds])
        hits = int((called & positive).sum())
        out[kind] = {
            "precision": round(hits / called.sum(), 4) if called.any() else 1.0,
            "recall": round(hits / positive.sum(), 4),
            "called": int(called.sum()),
            "positives": int(positive.sum()),
            "pairs": int(len(cos)),
        }
    return out


def chosen(found: Found, rule: str = "particulars") -> float:
    """The lowest line from which every higher one keeps tuning fact-turn precision >= PRECISION."""
    line = LINES[-1]
    for candidate in reversed(LINES):
        if scored(found, TUNING, candidate, rule)["fact-turn"]["precision"] < PRECISION:
            break
        line = candidate
    return line


def closest_apart(embedder, data: Path, convs: tuple[str, ...], line: float, shown: int = 8) -> list[list]:
    """The closest pairs of facts still called similar at ``line`` (cosine and particulars) that
    cite no turn in common: [cosine, a, b]."""
    found = []
    for conv, said in facts(data).items():
        if conv not in convs:
            continue
        fact_vectors = vectors(embedder, [text for text, _ in said])
        cosines = fact_vectors @ fact_vectors.T
        marks = [particulars(text) for text, _ in said]
        for i in range(len(said)):
            for j in range(i + 1, len(said)):
                if cosines[i, j] >= line and not said[i][1] & said[j][1] and not differ(marks[i], marks[j]):
                    found.append([round(float(cosines[i, j]), 3), said[i][0], said[j][0]])
    return sorted(found, reverse=True)[:shown]


def dropped(embedder, data: Path, convs: tuple[str, ...], line: float) -> list[dict]:
    """Every pair the cosine alone calls similar at ``line`` whose particulars differ: what the
    particulars rule changes, with its label (positive or not) and the differing particulars."""
    turns, _ = locomo_samples(data)
    out = []
    for conv, said in facts(data).items():
        if conv not in convs:
            continue
        fact_vectors = vectors(embedder, [text for text, _ in said])
        others = [(r["text"], {r["id"]}, "fact-turn") for r in turns[conv]]
        others += [(text, ids, "fact-fact") for text, ids in said]
        other_vectors = np.concatenate([vectors(embedder, [r["text"] for r in turns[conv]]), fact_vectors])
        cosines = fact_vectors @ other_vectors.T
        for i, j in zip(*np.nonzero(cosines >= line)):
            (a, cited), (b, ids, kind) = said[i], others[j]
            if kind == "fact-fact" and j - len(turns[conv]) <= i:
                continue  # each pair of facts once
            apart = differing(particulars(a), particulars(b))
            if apart:
                out.append(
                    {
                        "kind": kind,
                        "cosine": round(float(cosines[i, j]), 3),
                        "positive": bool(cited & ids),
                        "differing": sorted(apart),
                        "a": a,
                        "b": b,
                    }
                )
    return sorted(out, key=lambda pair: -pair["cosine"])


def table(result: dict) -> str:
    lines = [
        f"Run {result['date']} on {result['machine']}: `python benchmarks/near_duplicates.py` "
        f"({result['seconds']} s), model `{result['embedder']}`. Pairs: each LoCoMo observation fact "
        "with every turn of its conversation (positive: a turn it cites) and with every other fact "
        "(positive: both cite a turn in common). Rule `cosine`: the cosine alone (before the "
        "particulars rule); `shipped`: the cosine and the particulars rule (`ranking/particulars.py`).",
        "",
        f"Chosen on the tuning conversations (fact-turn precision >= {PRECISION} at the line and "
        f"above, shipped rule): **{result['chosen']}** (cosine alone: {result['chosen_cosine']}); "
        f"shipped in `ranking/similar.py`: **{result['shipped']}**. "
        "Fact-fact precision is a floor (a fact restated in a later session cites a later turn).",
        "",
        "| line | half | rule | fact-turn precision | fact-turn recall | fact-fact precision (a floor) "
        "| fact-fact recall | pairs called similar |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        s = row["scores"]
        lines.append(
            f"| {row['line']} | {row['half']} | {row['rule']} | {s['fact-turn']['precision']:.3f} | "
            f"{s['fact-turn']['recall']:.3f} | {s['fact-fact']['precision']:.3f} | {s['fact-fact']['recall']:.3f} | "
            f"{s['pooled']['called']:,} of {s['pooled']['pairs']:,} |"
        )
    for half, pairs_dropped in result["dropped"].items():
        positives = sum(pair["positive"] for pair in pairs_dropped)
        lines += [
            "",
            f"Pairs of the {half} half at {result['dropped_from']} or above that the particulars rule no longer "
            f"calls similar: {len(pairs_dropped)} ({positives} of them positive), "
            f"{sum(pair['cosine'] >= result['shipped'] for pair in pairs_dropped)} of them at {result['shipped']} "
            "or above:",
            "",
        ]
        lines += [
            f"- {pair['cosine']} {pair['kind']}, {'positive' if pair['positive'] else 'negative'}, differing "
            f'{", ".join(pair["differing"])}: "{pair["a"]}" / "{pair["b"]}"'
            for pair in pairs_dropped
        ]
    lines += ["", f"The closest held-out fact pairs citing no turn in common, at {result['shipped']} or above:", ""]
    lines += [f'- {cosine}: "{a}" / "{b}"' for cosine, a, b in result["closest_apart"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, help="the embedding cache here, unless EIDETIC_CACHE_DIR names one")
    args = parser.parse_args()
    _, embedder, why = prepared(args.work, "eidetic-near-duplicates-")
    if embedder is None:
        raise SystemExit(f"no embedder: {why}")
    started = time.perf_counter()
    found = pairs(embedder, args.data)
    line = chosen(found)
    shown = sorted({line, SIMILAR_COSINE, round(line - 0.03, 2), round(line + 0.02, 2), 0.95})
    halves = (("tuning", TUNING), ("held-out", HELD_OUT))
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": machine(),
        "embedder": embedder.name,
        "chosen": line,
        "chosen_cosine": chosen(found, "cosine"),
        "shipped": SIMILAR_COSINE,
        "sweep": {
            rule: {half: {str(c): scored(found, convs, c, rule) for c in LINES} for half, convs in halves}
            for rule in RULES
        },
        "rows": [
            {
                "line": c,
                "half": half,
                "rule": "shipped" if rule == "particulars" else rule,
                "scores": scored(found, convs, c, rule),
            }
            for c in shown
            for half, convs in halves
            for rule in RULES
        ],
        "dropped_from": shown[0],
        "dropped": {half: dropped(embedder, args.data, convs, shown[0]) for half, convs in halves},
    }
    result["closest_apart"] = closest_apart(embedder, args.data, HELD_OUT, SIMILAR_COSINE)
    result["seconds"] = round(time.perf_counter() - started)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "near_duplicates.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"chosen line: {line} (ranking/similar.py ships {SIMILAR_COSINE})")
    update_doc("near-duplicates", table(result))


if __name__ == "__main__":
    main()
