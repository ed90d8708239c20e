"""Bulk ``remember --no-embed`` of this code against an earlier commit's, side by side in one run.

    git worktree add --detach /tmp/before <commit>
    python benchmarks/remember_speed.py --before /tmp/before/src --records 20000 --rounds 3

Each round remembers the same corpus (``corpus.py``, the one ``speed.py`` ingests) into a fresh
files store, once with the earlier code (``PYTHONPATH=<before>``) and once with this checkout's,
alternating which goes first: on a shared machine the load drifts, and alternating spreads it
over both. Every run writes into a folder of its own, and none is deleted before the last run
ends: a run just after 100k files were deleted spent up to 7x the system time creating its own
(ext4 skips recently freed inodes, and the deletes' discards run meanwhile), so a run's cost
depended on the one before it. Dirty pages are flushed (``sync``) before each run. Each side runs from a byte-compiled copy taken at the start (as an installed package
is compiled; edits to the checkout meanwhile change nothing measured). Prints each run's
records/s and CPU per record (user + system, and user alone: the code's own work, where the
system time is mostly the file system's), the median of each side, and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from measure import isolated_env, run_cli, side_by_side  # noqa: E402


def one_run(source: Path, corpus: Path, work: Path) -> tuple[float, float, float]:
    """Wall, user and system CPU seconds (every thread) of one ``remember --no-embed`` process of
    the code under ``source``, into a new store in ``work``. On a loaded machine the wall time is
    mostly waiting for a core; the CPU time is what the code itself costs."""
    env = isolated_env(work)
    env["PYTHONPATH"] = str(source)
    os.sync()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    with corpus.open() as stdin:
        seconds, _ = run_cli(["remember", "--json", "--no-embed"], env, stdin=stdin)
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, now.ru_utime - used.ru_utime, now.ru_stime - used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the earlier code's src folder")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--where",
        type=Path,
        default=None,
        help="the folder the runs' stores go in (a tmpfs such as /dev/shm leaves the disk out of the comparison)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="remember-speed-", dir=args.where) as tmp:
        sides = side_by_side(args.before, Path(tmp))
        corpus = Path(tmp) / "corpus.ndjson"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in records(args.records, seed=7)))
        rates: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}  # CPU microseconds per record
        user: dict[str, list[float]] = {name: [] for name in sides}  # of which in user mode
        for round_ in range(args.rounds):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for name in order:
                wall, in_user, in_system = one_run(sides[name], corpus, Path(tmp) / f"run-{round_}-{name}")
                rates[name].append(args.records / wall)
                cpu[name].append((in_user + in_system) / args.records * 1e6)
                user[name].append(in_user / args.records * 1e6)
                print(
                    f"round {round_ + 1} {name}: {rates[name][-1]:,.0f} records/s, {cpu[name][-1]:.0f} us CPU a "
                    f"record ({user[name][-1]:.0f} us user)"
                )
    for name in sides:
        listed = ", ".join(f"{v:,.0f}" for v in rates[name])
        print(
            f"{name}: median {statistics.median(rates[name]):,.0f} records/s ({listed}); "
            f"median {statistics.median(cpu[name]):.0f} us CPU a record, {statistics.median(user[name]):.0f} us user"
        )

    def ratio(values: dict[str, list[float]]) -> float:
        return statistics.median(values["after"]) / statistics.median(values["before"])

    print(f"after / before: {ratio(rates):.2f} in records/s, {ratio(cpu):.2f} in CPU, {ratio(user):.2f} in user CPU")


if __name__ == "__main__":
    main()
