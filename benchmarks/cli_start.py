"""How long a CLI command takes from start to exit, this tree against another commit: ``eidetic
--help`` and a keyword recall, in a pipe and on a pseudo-terminal 80 columns wide (where recall
draws its table). New processes, the two versions alternating, medians.

    python benchmarks/cli_start.py --old main --runs 21

The store: 200 short notes in a files store, remembered once (``--no-embed``) by this tree, its
index built before the first timed run. Results go to benchmarks/results/cli_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare import export_tree
from measure import machine

HERE = Path(__file__).resolve().parent
COMMANDS = {
    "eidetic --help": ["--help"],
    "eidetic recall QUERY --mode keyword (pipe)": ["recall", "restore the database", "--mode", "keyword"],
    "eidetic recall QUERY --mode keyword (terminal, 80 columns)": [
        "recall",
        "restore the database",
        "--mode",
        "keyword",
    ],
}


def notes(n: int) -> str:
    topics = ("database backups", "deploy windows", "on-call rota", "invoice currency", "standup time")
    return "".join(
        json.dumps({"id": f"note-{i}", "text": f"Note {i} about {topics[i % len(topics)]}: detail {i * 7}."}) + "\n"
        for i in range(n)
    )


def once(src: Path, args: list[str], env: dict[str, str], terminal: bool) -> tuple[float, float]:
    """Milliseconds for one ``eidetic ARGS`` process of the tree at ``src``: wall time, and the
    CPU time (user + system) it used, which a loaded machine blurs less."""
    command = [sys.executable, "-c", "import sys; from eidetic.cli.main import main; sys.exit(main())", *args]
    env = {**env, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    if terminal:
        import fcntl
        import struct
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        while True:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:  # the process closed the terminal
                break
        os.close(master)
        code = proc.wait()
    else:
        code = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env).returncode
    spent = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    assert code == 0, (args, code)
    return spent, cpu


def this_tree(target: Path) -> Path:
    """This tree's ``src``, copied and byte-compiled as ``export_tree`` prepares the other (a
    checkout run with PYTHONDONTWRITEBYTECODE would compile every module at every start)."""
    import compileall
    import shutil

    shutil.copytree(HERE.parent / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(target / "src"), quiet=1)
    return target / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-start-") as tmp:
        work = Path(tmp)
        old, new = export_tree(args.old, work / "old"), this_tree(work / "new")
        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "PYTHONPATH")}
        env.update(
            HOME=str(work / "home"),
            EIDETIC_DATA_DIR=str(work / "store"),
            EIDETIC_CACHE_DIR=str(work / "cache"),
            EIDETIC_STATE_DIR=str(work / "state"),
            EIDETIC_EMBEDDER="none",
            TERM="xterm-256color",
        )
        subprocess.run(
            [sys.executable, "-m", "eidetic", "remember", "--no-embed"],
            input=notes(200),
            text=True,
            capture_output=True,
            check=True,
            env={**env, "PYTHONPATH": str(new)},
        )
        ms: dict[str, dict[str, list[tuple[float, float]]]] = {name: {"old": [], "new": []} for name in COMMANDS}
        for name, argv in COMMANDS.items():
            terminal = "terminal" in name
            for src in (old, new):
                once(src, argv, env, terminal)  # warm: byte-compiled, the index read once
            for _ in range(args.runs):
                for version, src in (("old", old), ("new", new)):
                    ms[name][version].append(once(src, argv, env, terminal))
        result = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": machine(),
            "load": round(os.getloadavg()[0], 1),
            "old": args.old,
            "runs": args.runs,
            "median_ms": {
                name: {
                    version: {
                        "wall": round(statistics.median(wall for wall, _ in v), 1),
                        "cpu": round(statistics.median(cpu for _, cpu in v), 1),
                    }
                    for version, v in pair.items()
                }
                for name, pair in ms.items()
            },
        }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "cli_start.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['date']}, {result['machine']}, load {result['load']}; medians of {args.runs}, ms")
    print(f"| command | {args.old}: wall, CPU | this tree: wall, CPU | ratio of CPU |\n|---|---|---|---|")
    for name, pair in result["median_ms"].items():
        old, new = pair["old"], pair["new"]
        print(
            f"| `{name}` | {old['wall']}, {old['cpu']} | {new['wall']}, {new['cpu']} | {new['cpu'] / old['cpu']:.2f} |"
        )


if __name__ == "__main__":
    main()
