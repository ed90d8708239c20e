"""Speed of `memory-recall` (and `eidetic audit`) on a big markdown memory folder.

    python benchmarks/memory_recall.py [--files 10000]

Generates a coding agent's memory folder (front matter name/description/type, a body of 20-300
words of real English vocabulary), then times `memory-recall` as a new process: the first call
(which builds the index) and repeated calls with different terms (p50/p95), plus one `audit`.
Target (issue 5): <= 0.3 s per call at 10k files.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from measure import installed_env, machine, summary  # noqa: E402
from report import update_doc  # noqa: E402

TYPES = ("feedback", "user", "project", "reference")


def timed(args: list[str], env: dict) -> float:
    started = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr}")
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eidetic-memory-recall-"))
    folder = work / "memory"
    folder.mkdir()
    corpus = records(args.files, seed=3)
    rng = random.Random(1)
    for i, record in enumerate(corpus):
        words = record["text"].rstrip(".").split()
        name = "-".join(rng.sample(words, min(3, len(words)))).lower()
        description = " ".join(words[:8])
        (folder / f"mem-{i:05d}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ntype: {TYPES[i % 4]}\n---\n{record['text']}\n"
        )
    (folder / "MEMORY.md").write_text("".join(f"- mem-{i:05d}.md\n" for i in range(args.files)))
    env = os.environ.copy()
    env.update(
        {"EIDETIC_CACHE_DIR": str(work / "cache"), "EIDETIC_STATE_DIR": str(work / "state"), "HOME": str(work / "home")}
    )
    env = installed_env(env)
    command = [str(Path(sys.executable).with_name("memory-recall"))]
    if not Path(command[0]).exists():
        command = [sys.executable, "-m", "eidetic.cli.memory_recall"]
    queries = keyword_queries(corpus, args.runs, seed=4)
    first = timed([*command, *queries[0].split()[:2], "--memory-dir", str(folder)], env)
    calls = [timed([*command, *q.split()[:2], "--memory-dir", str(folder), "--json"], env) for q in queries]
    audit = [
        timed([sys.executable, "-m", "eidetic", "audit", "--memory-dir", str(folder), "--json"], env) for _ in range(3)
    ]
    result = {
        "files": args.files,
        "machine": machine(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "first_call_ms": round(first),
        "memory_recall_ms": summary(calls),
        "audit_ms": summary(audit),
    }
    shutil.rmtree(work, ignore_errors=True)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"memory-recall-{args.files}.json").write_text(json.dumps(result, indent=2) + "\n")
    table = "\n".join(
        [
            f"`memory-recall` on a folder of {args.files:,} memory files, {result['date']}, {result['machine']}",
            "",
            "| measure | result |",
            "|---|---|",
            f"| first call (indexes the folder) | {result['first_call_ms']} ms |",
            f"| `memory-recall TERM TERM --json`, new process each | p50 {result['memory_recall_ms']['p50_ms']} ms, "
            f"p95 {result['memory_recall_ms']['p95_ms']} ms ({len(calls)} runs) |",
            f"| `eidetic audit --json`, new process | p50 {result['audit_ms']['p50_ms']} ms |",
        ]
    )
    print(table)
    update_doc(f"memory-recall-{args.files}", table)


if __name__ == "__main__":
    main()
