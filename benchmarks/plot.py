"""Recall latency against store size, per mode and backend, from the saved results of
``benchmarks/speed.py`` (``results/speed-<backend>-<n>.json``): docs/recall-latency.png and a
table. Each point is the p50 of in-process top-10 recalls; a size not run yet is simply absent.
``speed.py`` calls this after every run, and ``speed.py report`` on its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from eidetic.stores.backends import NAMES

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
MODES = ("keyword", "exact", "hybrid", "approximate")


def points() -> dict[tuple[str, str], dict[int, float]]:
    """(backend, mode) -> {records: p50 ms}."""
    found: dict[tuple[str, str], dict[int, float]] = {}
    for path in RESULTS.glob("speed-*.json"):
        match = re.fullmatch(rf"speed-({'|'.join(NAMES)})-(\d+)\.json", path.name)
        if match:
            in_process = json.loads(path.read_text())["in_process"]
            for mode in MODES:
                found.setdefault((match.group(1), mode), {})[int(match.group(2))] = in_process[mode]["p50_ms"]
    return found


def plot(found: dict[tuple[str, str], dict[int, float]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    fig, axes = plt.subplots(1, len(MODES), figsize=(15, 4), sharey=True)
    for ax, mode in zip(axes, MODES):
        for backend in NAMES:
            series = found.get((backend, mode), {})
            if series:
                sizes = sorted(series)
                ax.plot(sizes, [series[n] for n in sizes], marker="o", label=backend)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_yticks([1, 2, 5, 10, 20, 50, 100])
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))  # 20, not 2x10^1
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{mode} recall, top 10")
        ax.set_xlabel("records in the store")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("p50 latency, ms (in-process)")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def table(found: dict[tuple[str, str], dict[int, float]]) -> str:
    sizes = sorted({n for series in found.values() for n in series})
    lines = [
        "### Recall latency against store size",
        "",
        "![recall p50 against store size, per mode and backend](recall-latency.png)",
        "",
        "| backend | mode | " + " | ".join(f"{n:,}" for n in sizes) + " |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for (backend, mode), series in sorted(found.items()):
        lines.append(
            f"| {backend} | {mode} | " + " | ".join(f"{series[n]} ms" if n in series else "" for n in sizes) + " |"
        )
    lines += [
        "",
        "p50 of in-process top-10 recalls, from the saved results (their sections above give dates and conditions).",
    ]
    return "\n".join(lines)
