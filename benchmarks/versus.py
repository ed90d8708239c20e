"""eidetic against its predecessor eidetic-cli 0.14.1, side by side: bulk ingest and recall per
mode as a new process, on the same realistic records, each tool in its own fresh store.

    python benchmarks/versus.py [--sizes 1000 10000] [--cli-venv DIR] [--no-doc]

eidetic-cli is pip-installed from PyPI into its own Python 3.12 virtual environment (reused
with ``--cli-venv``). It runs offline, as most of its users do: its embedder points at an
unreachable URL, so it silently falls back to its hash embedding and its hybrid mode ranks by
keywords alone. Ours runs with its real local embedding model (vectors computed at ingest).
Both CLIs run with their default flags (top-k 5, depth 1, recall counted), from a folder
outside any git repository. Latencies are medians of new processes; the machine is shared
and noisy, so read the ratios, not the absolutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import versus_cli  # noqa: E402
from corpus import exact_queries, keyword_queries, records  # noqa: E402
from measure import installed_env, machine, snapshot, summary  # noqa: E402
from report import update_doc  # noqa: E402

MODES = ("exact", "keyword", "hybrid", "approximate")
# At the largest size: (what, measure, at least this many times faster). Ingest is compared
# like for like: eidetic-cli computes no vectors at ingest, so ours runs with --no-embed (ours
# with its embedding model computing every record's vector is reported next to it).
TARGETS = (
    ("ingest", "ingest_no_embed_s", 100.0),
    ("keyword recall", "keyword", 5.0),
    ("hybrid recall", "hybrid", 20.0),
)


def our_command() -> list[str]:
    script = Path(sys.executable).parent / "eidetic"
    return [str(script)] if script.exists() else [sys.executable, "-m", "eidetic"]


def our_env(work: Path, source: Path | None = None) -> dict:
    """Ours in its own store, cache, state and HOME, with the real local embedder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EIDETIC_", "DR_"))}
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    env.update(
        {
            "EIDETIC_DATA_DIR": str(work / "store"),
            "EIDETIC_CACHE_DIR": str(work / "cache"),
            "EIDETIC_STATE_DIR": str(work / "state"),
            "HOME": str(work / "home"),
        }
    )
    (work / "home").mkdir(parents=True, exist_ok=True)
    return installed_env(env)


def run(command: list[str], env: dict, cwd: Path, stdin=None) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, stdin=stdin, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def ingest(command: list[str], env: dict, cwd: Path, ndjson: Path, n: int, extra: tuple = ()) -> float:
    with ndjson.open() as stdin:
        seconds, out = run([*command, "remember", "--json", *extra], env, cwd, stdin=stdin)
    upserted = json.loads(out).get("upserted")
    if upserted != n:
        raise SystemExit(f"{command[0]} remember upserted {upserted} of {n}")
    return seconds


def recalls(
    command: list[str], env: dict, cwd: Path, mode: str, queries: list[str], budget_s: float, minimum: int = 3
) -> dict:
    """New-process recalls, one per query, until the queries run out or (after ``minimum``)
    ``budget_s`` is spent. p50/p95 in ms, plus what came back (hits, top ids)."""
    walls, hits, tops = [], [], []
    spent = 0.0
    for query in queries:
        if len(walls) >= minimum and spent >= budget_s:
            break
        seconds, out = run([*command, "recall", query, "--mode", mode, "--json"], env, cwd)
        spent += seconds
        walls.append(seconds * 1000)
        items = [item for item in json.loads(out)["items"] if item.get("tier", "primary") == "primary"]
        hits.append(len(items))
        tops.append(items[0]["id"] if items else None)
    return {**summary(walls), "mean_hits": round(statistics.mean(hits), 2), "top_ids": tops}


def measure_size(n: int, work: Path, cli_script: Path, args) -> dict:
    print(f"\n== {n:,} records", flush=True)
    corpus = records(n)
    ndjson = work / f"records-{n}.ndjson"
    with ndjson.open("w") as handle:
        for record in corpus:
            handle.write(json.dumps(record) + "\n")
    kw = keyword_queries(corpus, args.queries)
    ex = exact_queries(corpus, args.queries)
    queries = {"exact": ex, "keyword": kw, "hybrid": kw, "approximate": kw}
    out: dict = {
        "records": n,
        "mean_words": round(sum(len(r["text"].split()) for r in corpus) / n, 1),
        "eidetic": {},
        "eidetic_cli": {},
    }
    ours, theirs = out["eidetic"], out["eidetic_cli"]
    cmd = our_command()

    # ours without vectors: median of fresh stores
    runs = []
    for i in range(args.ingest_runs):
        folder = work / f"ours-noembed-{n}-{i}"
        runs.append(ingest(cmd, our_env(folder, args.source), work, ndjson, n, ("--no-embed",)))
        shutil.rmtree(folder, ignore_errors=True)
    ours["ingest_no_embed_s"] = round(statistics.median(runs), 3)
    ours["ingest_no_embed_runs_s"] = [round(r, 3) for r in runs]
    print(
        f"  eidetic remember --no-embed: {ours['ingest_no_embed_s']} s (runs {ours['ingest_no_embed_runs_s']})",
        flush=True,
    )

    # ours with vectors (the default): this store serves the recalls
    folder = work / f"ours-{n}"
    env = our_env(folder, args.source)
    ours["ingest_s"] = round(ingest(cmd, env, work, ndjson, n), 2)
    print(f"  eidetic remember (local embedding model): {ours['ingest_s']} s", flush=True)
    for mode in args.modes:
        run([*cmd, "recall", "warm up", "--mode", mode, "--json", "--no-record"], env, work)  # lazily built state
        ours[mode] = recalls(cmd, env, work, mode, queries[mode], args.mode_budget)
        print(f"  eidetic recall --mode {mode}: p50 {ours[mode]['p50_ms']} ms (n {ours[mode]['n']})", flush=True)

    # theirs
    folder = work / f"cli-{n}"
    env = versus_cli.cli_env(folder)
    print("  eidetic-cli remember (NDJSON on stdin) ...", flush=True)
    theirs["ingest_s"] = round(ingest([str(cli_script)], env, work, ndjson, n), 2)
    print(f"  eidetic-cli remember: {theirs['ingest_s']} s", flush=True)
    theirs["store_mb"] = round(sum(p.stat().st_size for p in (folder / "store").rglob("*.jsonl")) / 1e6, 1)
    for mode in args.modes:
        theirs[mode] = recalls([str(cli_script)], env, work, mode, queries[mode], args.mode_budget)
        print(
            f"  eidetic-cli recall --mode {mode}: p50 {theirs[mode]['p50_ms']} ms (n {theirs[mode]['n']})", flush=True
        )

    ratios = {
        "ingest_vs_no_embed": ratio(theirs["ingest_s"], ours["ingest_no_embed_s"]),
        "ingest_vs_embed": ratio(theirs["ingest_s"], ours["ingest_s"]),
    }
    agreement = {}
    for mode in args.modes:
        ratios[mode] = ratio(theirs[mode]["p50_ms"], ours[mode]["p50_ms"])
        pairs = list(zip(ours[mode]["top_ids"], theirs[mode]["top_ids"]))
        agreement[mode] = round(sum(a == b and a is not None for a, b in pairs) / len(pairs), 2)
    out["ratios"], out["same_top_hit"] = ratios, agreement
    print(f"  ratios (eidetic-cli / eidetic): {ratios}", flush=True)
    return out


def ratio(theirs: float, ours: float) -> float:
    """theirs / ours to three significant digits."""
    return float(f"{theirs / ours:.3g}")


def check_targets(size: dict) -> list[dict]:
    checks = []
    for what, key, needed in TARGETS:
        if key not in size["eidetic"]:
            continue
        got = size["ratios"]["ingest_vs_no_embed" if key == "ingest_no_embed_s" else key]
        label = f"{what} >= {needed:g}x faster" + (
            " (ours --no-embed, like for like)" if key.startswith("ingest") else ""
        )
        checks.append({"target": label, "records": size["records"], "ratio": got, "pass": got >= needed})
    return checks


def table(r: dict) -> str:
    intro = (
        f"{r['eidetic_version']} against eidetic-cli {r['cli_version']} (PyPI, Python 3.12, offline: "
        f"hash-embedding fallback), {r['date']}, {r['machine']}. New processes, default flags (top-k 5); "
        "ours with its local embedding model, vectors computed at ingest. Recall latencies are p50 over "
        "the queries shown (n); ratio = eidetic-cli / eidetic."
    )
    lines = [intro, "", "| records | measure | eidetic-cli | eidetic | ratio |", "|---|---|---|---|---|"]
    for s in r["sizes"]:
        o, t, x, n = s["eidetic"], s["eidetic_cli"], s["ratios"], f"{s['records']:,}"
        lines.append(
            f"| {n} | ingest, `remember` NDJSON on stdin (ours `--no-embed`, median of "
            f"{len(o['ingest_no_embed_runs_s'])}) | {t['ingest_s']} s | {o['ingest_no_embed_s']} s | "
            f"{x['ingest_vs_no_embed']}x |"
        )
        lines.append(
            f"| {n} | ingest, ours computing every vector with the local model | {t['ingest_s']} s | "
            f"{o['ingest_s']} s | {x['ingest_vs_embed']}x |"
        )
        for mode in (m for m in MODES if m in o):
            note = (
                " (theirs offline: hash-embeds every record, ranks by keywords)"
                if mode == "hybrid"
                else (" (theirs: hash vectors)" if mode == "approximate" else "")
            )
            lines.append(
                f"| {n} | `recall --mode {mode}`{note} | {t[mode]['p50_ms']:,} ms (n {t[mode]['n']}) | "
                f"{o[mode]['p50_ms']:,} ms (n {o[mode]['n']}) | {x[mode]}x |"
            )
    lines += ["", "| target (at the largest size) | ratio | result |", "|---|---|---|"]
    lines += [f"| {c['target']} | {c['ratio']}x | {'pass' if c['pass'] else 'FAIL'} |" for c in r["targets"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=15, help="recall processes per mode (at most)")
    parser.add_argument(
        "--mode-budget",
        type=float,
        default=240,
        help="seconds per tool, mode and size after which no more queries start (at least 3 run)",
    )
    parser.add_argument(
        "--ingest-runs", type=int, default=3, help="fresh-store ingests of ours with --no-embed (median)"
    )
    parser.add_argument("--cli-venv", type=Path, help="eidetic-cli's virtual environment (created if needed)")
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary one, removed at the end)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument(
        "--live-source",
        action="store_true",
        help="run ours from the working tree itself, not from a snapshot taken at the start",
    )
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="eidetic-versus-"))
    work.mkdir(parents=True, exist_ok=True)
    args.source = None if args.live_source else snapshot(work)
    version = subprocess.run(
        [*our_command(), "--version"],
        env=our_env(work / "probe", args.source),
        capture_output=True,
        text=True,
        cwd=work,
        check=False,
    )
    if version.returncode != 0:
        raise SystemExit(f"eidetic does not start: {version.stderr[-2000:]}")
    head = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    )
    ours_version = f"{version.stdout.strip()} ({head}{', working tree with uncommitted changes' if dirty else ''})"
    print(f"eidetic: {ours_version}", flush=True)
    venv = args.cli_venv or work / "eidetic-cli-venv"
    versus_cli.ensure_installed(venv)
    script_name, script = versus_cli.console_script(venv)
    print(f"eidetic-cli {versus_cli.installed_version(venv)}: console script {script_name!r} at {script}", flush=True)

    result: dict = {
        "machine": machine(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cli_version": versus_cli.installed_version(venv),
        "eidetic_version": ours_version,
        "cli_script": script_name,
        "cli_embed_url": versus_cli.UNREACHABLE_EMBED_URL,
        "sizes": [],
    }
    try:
        for n in args.sizes:
            result["sizes"].append(measure_size(n, work, script, args))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["targets"] = check_targets(max(result["sizes"], key=lambda s: s["records"]))

    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "versus.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out}\n")
    print(table(result))
    if not args.no_doc:
        update_doc("versus", table(result))


if __name__ == "__main__":
    main()
