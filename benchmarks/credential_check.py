"""What the credential check (src/eidetic/credentials.py) costs and what it flags.

    python benchmarks/credential_check.py [--data ../shared/data] [--records 10000] [--rounds 3]

1. The first check in a process imports detect-secrets: the CPU time of ``kinds("x")`` in a fresh
   interpreter, minus that of importing eidetic.credentials alone (median of 5 processes).
2. CPU per record, median of 5 passes, and how many records are flagged (``record_kinds``: text,
   name, description, metadata): the synthetic records of benchmarks/corpus.py, and the public
   LoCoMo turns and SciFact abstracts as benchmarks/quality.py stores them (read from ``--data``:
   non-commercial licences, never copied here).
3. A bulk ``remember --json --no-embed`` of ``--records`` corpus records from NDJSON into a fresh
   files store, as a process, with the check on (as shipped) and off (``Screen.check`` a no-op),
   alternating, ``--rounds`` each: CPU seconds of the process (user + system), which a busy
   machine disturbs less than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import records  # noqa: E402
from eidetic.credentials import kinds, record_kinds  # noqa: E402
from eidetic.record_intake import record_from_input  # noqa: E402
from eidetic.records import Scope  # noqa: E402
from quality import locomo_samples, scifact_records  # noqa: E402

# a remember whose check is on, or off: argv[1] says which
SWITCHED = (
    "import sys\nimport eidetic.credentials as c\n"
    "if sys.argv.pop(1) == 'off':\n    c.Screen.check = lambda self, record: None\n"
    "from eidetic.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
)


def child_cpu(command: list[str], **options) -> float:
    """CPU seconds (user + system) of one child process, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, capture_output=True, text=True, **options)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def import_cost() -> float:
    alone = [child_cpu([sys.executable, "-c", "import eidetic.credentials"]) for _ in range(5)]
    checked = [child_cpu([sys.executable, "-c", "import eidetic.credentials as c; c.kinds('x')"]) for _ in range(5)]
    return statistics.median(checked) - statistics.median(alone)


def per_text(built: list) -> dict:
    passes, flagged = [], 0
    for _ in range(5):
        started = time.process_time()
        flagged = sum(1 for record in built if record_kinds(record))
        passes.append(time.process_time() - started)
    return {
        "records": len(built),
        "flagged": flagged,
        "us_each": round(statistics.median(passes) / len(built) * 1e6, 1),
    }


def bulk(n: int, rounds: int, work: Path) -> dict:
    data = work / "records.ndjson"
    data.write_text("".join(json.dumps(r) + "\n" for r in records(n, seed=7)))
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    for attempt in range(rounds):
        for mode in ("on", "off") if attempt % 2 == 0 else ("off", "on"):
            store = work / "run"
            shutil.rmtree(store, ignore_errors=True)
            (store / "home").mkdir(parents=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("EIDETIC_")}
            env.update(
                HOME=str(store / "home"),
                EIDETIC_DATA_DIR=str(store / "store"),
                EIDETIC_CACHE_DIR=str(store / "cache"),
                EIDETIC_STATE_DIR=str(store / "state"),
            )
            with data.open() as stdin:
                command = [sys.executable, "-c", SWITCHED, mode, "remember", "--json", "--no-embed"]
                cpu[mode].append(child_cpu(command, stdin=stdin, env=env))
            print(f"  {mode}: {cpu[mode][-1]:.2f} CPU s", flush=True)
    on, off = statistics.median(cpu["on"]), statistics.median(cpu["off"])
    return {
        "records": n,
        "cpu_s_on": round(on, 2),
        "cpu_s_off": round(off, 2),
        "ratio": round(on / off, 3),
        "runs_on": [round(s, 2) for s in cpu["on"]],
        "runs_off": [round(s, 2) for s in cpu["off"]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    result: dict = {"import_cpu_s": round(import_cost(), 3)}
    print(f"first check's import: {result['import_cpu_s']} CPU s", flush=True)
    kinds("warm up")
    turns, _ = locomo_samples(args.data)
    sets = {
        "corpus records": records(args.records, seed=7),
        "LoCoMo turns": [turn for sample in turns.values() for turn in sample],
        "SciFact abstracts": scifact_records(args.data),
    }
    for name, raw in sets.items():
        built = [record_from_input(r, default_scope=Scope(), added_by=None)[0] for r in raw]
        result[name] = {**per_text(built), "mean_chars": round(statistics.mean(len(r.text) for r in built))}
        print(f"{name}: {result[name]}", flush=True)
    with tempfile.TemporaryDirectory() as work:
        result["bulk_remember"] = bulk(args.records, args.rounds, Path(work))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
