"""A new ``eidetic recall`` process of this code against an earlier commit's, side by side.

    git worktree add --detach /tmp/before <commit>
    python benchmarks/recall_process.py --before /tmp/before/src --records 20000 --runs 5

Each side remembers the same corpus (``corpus.py``) with its own code into a files store of its
own, and the same clustered vectors are planted in each side's cache (``measure.plant_vectors``:
no model runs for the records; the query is embedded by the real model, as a user's is); one
recall per mode warms each side. Then new ``recall QUERY --mode MODE --top-k 10 --json``
processes alternate between the sides. Each side runs from a byte-compiled copy taken at the
start (as ``remember_speed.py`` does). Prints, per mode, each side's median wall time, CPU (user
+ system) and peak RSS of the process (``/usr/bin/time``), and the ratios: on a shared machine the CPU is what the
code itself costs, the wall time mostly how long it waited for a core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from measure import isolated_env, plant_vectors, run_cli, side_by_side  # noqa: E402

QUERY = "which module parses the configuration"
MODES = ("hybrid", "keyword")


def one_process(args: list[str], env: dict) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS in MB of one CLI process, as
    ``/usr/bin/time`` reads them (a forked child's own peak would count this process's pages)."""
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%e %U %S %M", sys.executable, "-m", "eidetic", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"eidetic {' '.join(args)} failed: {proc.stderr}")
    wall, user, system, peak = proc.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(peak) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the earlier code's src folder")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5, help="processes per side and mode")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recall-process-") as tmp:
        sources = side_by_side(args.before, Path(tmp))
        corpus = records(args.records, seed=7)
        stdin = Path(tmp) / "corpus.ndjson"
        stdin.write_text("".join(json.dumps(r) + "\n" for r in corpus))
        envs = {}
        for name, source in sources.items():
            work = Path(tmp) / name
            env = isolated_env(work)
            env["PYTHONPATH"] = str(source)
            with stdin.open() as handle:
                run_cli(["remember", "--json", "--no-embed"], env, stdin=handle)
            plant_vectors(corpus, [work / "cache"])
            for mode in MODES:  # the warm-up: the vector index is built, the caches filled
                one_process(["recall", QUERY, "--mode", mode, "--top-k", "10", "--json"], env)
            envs[name] = env
        measured: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for run in range(args.runs):
            for mode in MODES:
                for name in sources if run % 2 == 0 else reversed(list(sources)):
                    found = one_process(["recall", QUERY, "--mode", mode, "--top-k", "10", "--json"], envs[name])
                    measured.setdefault((mode, name), []).append(found)
                    print(
                        f"run {run + 1} {mode} {name}: {found[0] * 1000:.0f} ms, {found[1] * 1000:.0f} ms CPU, {found[2]:.1f} MB"
                    )
    for mode in MODES:
        medians = {
            name: [statistics.median(part[i] for part in measured[(mode, name)]) for i in range(3)] for name in sources
        }
        for name, (wall, cpu, rss) in medians.items():
            listed = ", ".join(f"{part[1] * 1000:.0f}" for part in measured[(mode, name)])
            print(
                f"{mode} {name}: median {wall * 1000:.0f} ms, {cpu * 1000:.0f} ms CPU ({listed}), peak RSS {rss:.1f} MB"
            )
        (wall_b, cpu_b, rss_b), (wall_a, cpu_a, rss_a) = medians["before"], medians["after"]
        print(
            f"{mode} after / before: {wall_a / wall_b:.2f} in wall time, {cpu_a / cpu_b:.2f} in CPU, {rss_a / rss_b:.2f} in RSS"
        )


if __name__ == "__main__":
    main()
