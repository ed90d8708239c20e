"""Recall latency against store size, per mode and backend, from the saved benchmark results.

    python benchmarks/plot.py        # writes docs/recall-latency.png and a table in docs/benchmarks.md

Reads what the other benchmarks saved in ``benchmarks/results``: ``speed-files-<n>.json`` and
``semantic.json`` (files backend), ``backend-<name>-<n>.json`` (sqlite, postgres). Each point
is the p50 of in-process top-10 recalls; a size a benchmark has not been run at is simply
absent, so the plot fills in as runs are added.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
MODES = ("keyword", "exact", "hybrid")


def points() -> dict[tuple[str, str], dict[int, float]]:
    """(backend, mode) -> {records: p50 ms}."""
    found: dict[tuple[str, str], dict[int, float]] = {}

    def add(backend: str, mode: str, size: int, p50: float) -> None:
        found.setdefault((backend, mode), {})[size] = p50

    for path in RESULTS.glob("speed-files-*.json"):
        r = json.loads(path.read_text())
        for mode in ("keyword", "exact"):
            if f"{mode}_in_process" in r:
                add("files", mode, r["records"], r[f"{mode}_in_process"]["p50_ms"])
    semantic = RESULTS / "semantic.json"
    if semantic.exists():
        hybrid = json.loads(semantic.read_text()).get("hybrid", {})
        if "hybrid_in_process" in hybrid:
            add("files", "hybrid", hybrid["records"], hybrid["hybrid_in_process"]["p50_ms"])
    for path in RESULTS.glob("backend-*.json"):
        match = re.fullmatch(r"backend-(\w+)-(\d+)\.json", path.name)
        if match:
            r = json.loads(path.read_text())
            for mode in MODES:
                if mode in r:
                    add(match.group(1), mode, int(match.group(2)), r[mode]["p50_ms"])
    return found


def plot(found: dict[tuple[str, str], dict[int, float]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(MODES), figsize=(12, 4), sharey=True)
    for ax, mode in zip(axes, MODES):
        for backend in ("files", "sqlite", "postgres"):
            series = found.get((backend, mode), {})
            if series:
                sizes = sorted(series)
                ax.plot(sizes, [series[n] for n in sizes], marker="o", label=backend)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{mode} recall, top 10")
        ax.set_xlabel("records in the store")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("p50 latency, ms (in-process)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def table(found: dict[tuple[str, str], dict[int, float]]) -> str:
    sizes = sorted({n for series in found.values() for n in series})
    lines = ["### Recall latency against store size (`benchmarks/plot.py`)", "",
             "![recall p50 against store size, per mode and backend](recall-latency.png)", "",
             "| backend | mode | " + " | ".join(f"{n:,}" for n in sizes) + " |",
             "|---|---|" + "---|" * len(sizes)]
    for (backend, mode), series in sorted(found.items()):
        lines.append(f"| {backend} | {mode} | " + " | ".join(
            f"{series[n]} ms" if n in series else "" for n in sizes) + " |")
    lines += ["", "p50 of in-process top-10 recalls, from each benchmark's saved results (their sections "
              "above give dates and conditions)."]
    return "\n".join(lines)


def main() -> None:
    import sys

    sys.path.insert(0, str(HERE))
    from report import update_doc

    found = points()
    plot(found, HERE.parent / "docs" / "recall-latency.png")
    update_doc("recall-latency-plot", table(found))
    print(table(found))


if __name__ == "__main__":
    main()
