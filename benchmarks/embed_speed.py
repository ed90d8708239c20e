"""Embedding throughput of the local model against the machine's limit for its matrix shapes.

    python benchmarks/embed_speed.py [--rounds 5] [--threads N] [--scifact ../shared/data] [--write]

Two corpora: short notes (20-60 words, ~80 tokens with this vocabulary) and long chunks
(truncated at the model's 256 tokens). For each, in alternating rounds: the encoder embeds
every text (``embed``, all cores by default) through ONNX Runtime (where it is installed) and
through the NumPy forward pass, then the
same matrix products run as bare NumPy matmuls on the same cores (the *limit*: the texts sorted
and cut into batches of 4,096 padded tokens, each batch's products, output arrays allocated
beforehand, one BLAS thread per worker thread). All are timed on the wall clock; the table gives
medians. Then the cost of ONNX Runtime's start in a new process (import and session).

FLOPs are counted for the real (unpadded) tokens, per token and layer: the fused query/key/value
projection 2*d*3d, the output projection 2*d*d, the feed-forward 2*2*d*4d; per text and layer
the attention scores and weighted sum, 2*2*n^2*d for n tokens. The encoder's GFLOP/s are those
FLOPs over its time (padding and elementwise work count against it); the limit's are the FLOPs of
the products it ran over their time. Embedding lookup, layer norm, softmax and GELU add no FLOPs.
Both are also given per CPU second of the whole process (all its threads), which other jobs'
time-slicing does not change: on a busy machine the wall-clock rates fall, matrix products most.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from measure import machine  # noqa: E402
from report import update_doc  # noqa: E402

LIMIT_TOKENS = 4096


def corpora(model) -> dict[str, list[str]]:
    texts = [r["text"] for r in records(4000, seed=5)]
    return {
        "short notes (20-60 words)": [t for t in texts if len(t.split()) <= 60][:512],
        "long chunks (256 tokens)": [t for t in texts if len(t.split()) >= 200][:128],
    }


def shape(model) -> dict[str, int]:
    """The model's width, feed-forward width, layers and heads (from its weights)."""
    weights = model.weights
    qkv_w, _, _, _, _, _, i_w = weights.layers[0][:7]
    return {"d": qkv_w.shape[0], "ffn": i_w.shape[1], "layers": len(weights.layers), "heads": weights.heads}


def flops(lengths: list[int], s: dict[str, int]) -> float:
    d, ffn = s["d"], s["ffn"]
    per_token = 2 * d * 3 * d + 2 * d * d + 2 * 2 * d * ffn
    return float(s["layers"] * sum(n * per_token + 2 * 2 * n * n * d for n in lengths))


def limit_batches(lengths: list[int]) -> list[tuple[int, int]]:
    """(texts, padded length) of the limit's batches: sorted, cut at LIMIT_TOKENS."""
    out: list[tuple[int, int]] = []
    size = 0
    ordered = sorted(lengths)
    for i, n in enumerate(ordered):
        if size and (size + 1) * n > LIMIT_TOKENS:
            out.append((size, ordered[i - 1]))
            size = 0
        size += 1
    out.append((size, ordered[-1]))
    return out


class Limit:
    """The model's matrix products for these batches, with inputs and outputs made once."""

    def __init__(self, batches: list[tuple[int, int]], s: dict[str, int]) -> None:
        import numpy as np

        rng = np.random.default_rng(0)
        d, ffn, heads = s["d"], s["ffn"], s["heads"]
        self.layers, self.batches, self.flops = s["layers"], [], 0.0

        def r(*dims: int) -> np.ndarray:
            return (rng.standard_normal(dims) * 0.1).astype(np.float32)

        weights = [r(d, 3 * d), r(d, d), r(d, ffn), r(ffn, d)]
        for texts, n in batches:
            t = texts * n
            q, k, v = r(texts, heads, n, d // heads), r(texts, heads, d // heads, n), r(texts, heads, n, d // heads)
            products = [
                (r(t, d), weights[0], np.empty((t, 3 * d), np.float32)),
                (q, k, np.empty((texts, heads, n, n), np.float32)),
                (r(texts, heads, n, n), v, np.empty((texts, heads, n, d // heads), np.float32)),
                (r(t, d), weights[1], np.empty((t, d), np.float32)),
                (r(t, d), weights[2], np.empty((t, ffn), np.float32)),
                (r(t, ffn), weights[3], np.empty((t, d), np.float32)),
            ]
            self.batches.append(products)
            self.flops += self.layers * sum(2 * a.size * b.shape[-1] for a, b, _ in products)

    def run_batch(self, products) -> None:
        import numpy as np

        for _ in range(self.layers):
            for a, b, out in products:
                np.matmul(a, b, out=out)

    def run(self, threads: int) -> float:
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(self.run_batch, self.batches))
        return time.perf_counter() - started


def big_product_rate(threads: int, rounds: int) -> float:
    """GFLOP/s of (4096 x 384) @ (384 x 1536) on ``threads`` threads: the BLAS rate at its best."""
    import numpy as np

    a = np.ones((4096, 384), np.float32)
    b = np.ones((384, 1536), np.float32)
    outs = [np.empty((4096, 1536), np.float32) for _ in range(threads)]
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda out: [np.matmul(a, b, out=out) for _ in range(10)], outs))
        rates.append(threads * 10 * 2 * 4096 * 384 * 1536 / (time.perf_counter() - started) / 1e9)
    return statistics.median(rates)


def timed(run) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process) of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def rates(work: float, texts: int, runs: list[tuple[float, float]], limit: Limit, limit_wall: float, limit_cpu: float):
    """One runtime's medians against the limit's."""
    wall, cpu = (statistics.median(t[i] for t in runs) for i in (0, 1))
    return {
        "per_s": round(texts / wall, 1),
        "per_s_runs": [round(texts / t[0], 1) for t in runs],
        "gflops": round(work / wall / 1e9, 1),
        "fraction": round(work / wall / (limit.flops / limit_wall), 3),
        # per CPU second: what time-slicing by other jobs cannot change (cache sharing can)
        "cpu_gflops": round(work / cpu / 1e9, 1),
        "cpu_fraction": round(work / cpu / (limit.flops / limit_cpu), 3),
    }


def measure(model, texts: list[str], threads: int, rounds: int, runtimes: list[str]) -> dict:
    """Each runtime and the limit in alternating rounds, so load from other jobs falls on all."""
    s = shape(model)
    lengths = [sum(e.attention_mask) for e in model.tokenizer.encode_batch(texts)]  # real tokens
    work = flops(lengths, s)
    limit = Limit(limit_batches(lengths), s)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in runtimes}
    bare = []
    for _ in range(rounds):
        for name in runtimes:
            model.runtime = name
            runs[name].append(timed(lambda: model.embed(texts)))
        bare.append(timed(lambda: limit.run(threads)))
    limit_wall, limit_cpu = (statistics.median(t[i] for t in bare) for i in (0, 1))
    return {
        "texts": len(texts),
        "tokens_per_text": round(sum(lengths) / len(lengths), 1),
        "limit_gflops": round(limit.flops / limit_wall / 1e9, 1),
        "limit_cpu_gflops": round(limit.flops / limit_cpu / 1e9, 1),
        "runtimes": {name: rates(work, len(texts), runs[name], limit, limit_wall, limit_cpu) for name in runtimes},
    }


NAMES = {"onnx": "ONNX Runtime", "numpy": "NumPy"}


def report(result: dict) -> str:
    lines = [
        f"Local embedder throughput, {result['date']}, {result['machine']}; {result['threads']} encoder "
        f"thread(s); load average before {result['load_before']}, after {result['load_after']}; "
        f"medians of {result['rounds']} rounds",
        "",
        "| texts | tokens/text | runtime | texts/s | encoder GFLOP/s | limit GFLOP/s | fraction "
        "| per CPU second: encoder / limit GFLOP/s | fraction |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in result["corpora"].items():
        for name, e in r["runtimes"].items():
            lines.append(
                f"| {label}, {r['texts']} | {r['tokens_per_text']} | {NAMES[name]} | {e['per_s']} | {e['gflops']} "
                f"| {r['limit_gflops']} | {e['fraction']:.0%} | {e['cpu_gflops']} / {r['limit_cpu_gflops']} "
                f"| {e['cpu_fraction']:.0%} |"
            )
    lines += ["", f"(4096 x 384) @ (384 x 1536) alone on the same threads: {result['big_product_gflops']} GFLOP/s."]
    if "onnx_start" in result:
        r = result["onnx_start"]
        lines.append(
            f"ONNX Runtime's start in a new process (medians of {r['rounds']}, graph cached): import "
            f"{r['import_s']} s, session {r['session_s']} s."
        )
    if "scifact" in result:
        r = result["scifact"]
        lines += [
            f"Every SciFact abstract ({r['texts']:,}, {r['tokens_per_text']} tokens each on average), "
            f"256 at a time as `remember` embeds them: {r['seconds'] / 60:.1f} min."
        ]
    return "\n".join(lines)


START = """
import time
from eidetic.embed import local
model = local.load()
started = time.perf_counter()
import onnxruntime
from eidetic.embed.onnx_session import OnnxEncoder
imported = time.perf_counter()
OnnxEncoder(model.weights, model._models)
print(imported - started, time.perf_counter() - imported)
"""


def onnx_start(rounds: int) -> dict:
    """What a new process pays the first time it embeds through ONNX Runtime: the import and
    the session (its graph already cached)."""
    import subprocess

    times = [
        [
            float(x)
            for x in subprocess.run(
                [sys.executable, "-c", START], capture_output=True, text=True, check=True
            ).stdout.split()
        ]
        for _ in range(rounds)
    ]
    return {
        "rounds": rounds,
        "import_s": round(statistics.median(t[0] for t in times), 2),
        "session_s": round(statistics.median(t[1] for t in times), 2),
    }


def scifact(model, data: Path) -> dict:
    """Every SciFact abstract embedded once, as an import would: the wait before it is searchable
    by meaning."""
    from quality import scifact_records

    texts = [r["text"] for r in scifact_records(data)]
    lengths = [sum(e.attention_mask) for e in model.tokenizer.encode_batch(texts)]
    started = time.perf_counter()
    for start in range(0, len(texts), 256):  # as remember does: a chunk at a time
        model.embed(texts[start : start + 256])
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "tokens_per_text": round(sum(lengths) / len(lengths), 1), "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="encoder threads (default: every core)")
    parser.add_argument("--scifact", type=Path, help="also embed every SciFact abstract (the data folder)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md and benchmarks/results")
    args = parser.parse_args()
    from eidetic.embed import local

    model = local.load()
    if args.threads:
        model.threads = args.threads
    threads = model.threads
    default = model.runtime
    model.runtime = "onnx"  # measured beside NumPy wherever it is installed
    model.embed(["warm up"])
    if model.onnx_error:
        print("ONNX Runtime is not measured:", model.onnx_error, flush=True)
    runtimes = (["onnx"] if model.onnx else []) + ["numpy"]
    result = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": machine(),
        "threads": threads,
        "rounds": args.rounds,
        "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "corpora": {},
    }
    for label, texts in corpora(model).items():
        result["corpora"][label] = measure(model, texts, threads, args.rounds, runtimes)
        print(label, json.dumps(result["corpora"][label]), flush=True)
    model.runtime = default
    if model.onnx:
        result["onnx_start"] = onnx_start(args.rounds)
    if args.scifact:
        result["scifact"] = scifact(model, args.scifact)
        print("scifact", json.dumps(result["scifact"]), flush=True)
    result["big_product_gflops"] = round(big_product_rate(threads, args.rounds), 1)
    result["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(report(result))
    if args.write:
        (HERE / "results" / "embed-speed.json").write_text(json.dumps(result, indent=1) + "\n")
        update_doc("embed-speed", report(result))


if __name__ == "__main__":
    main()
