"""How long an agent's prompt waits for eidetic's hook: `eidetic-hook claude prompt` as Claude Code
runs it (a new process, the payload on stdin), at 10,000 records, hybrid recall with the relevance
floor, answered by the warm daemon; the same through `python -m eidetic hook` and an earlier
install's `eidetic hook` (taking turns prompt by prompt, so load falls on all alike); and for
comparison the hook answering itself (no daemon: keyword recall in-process), `eidetic context` as a
new process, and the daemon's own time. The console scripts are the installed ones beside this
Python, else written here as pip writes them.

    .venv/bin/python benchmarks/hooks_speed.py [SIZE] [--runs N]

The store is the speed benchmarks' synthetic corpus (``corpus.records``) with vectors planted in
the cache (``measure.plant_vectors``: no model runs to build it); the queries are real model
embeddings in the daemon. Results go to docs/benchmarks.md ("Hooks") by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import keyword_queries, records  # noqa: E402
from measure import ingest_no_embed, isolated_env, machine, plant_vectors, summary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("size", type=int, nargs="?", default=10_000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eh-"))
    env = isolated_env(work)
    (work / "home").mkdir()
    (work / "rt").mkdir(mode=0o700)
    env.update({"XDG_RUNTIME_DIR": str(work / "rt"), "EIDETIC_HOOK_TIMEOUT": "30"})
    corpus = records(args.size)
    started = time.perf_counter()
    for at in range(0, len(corpus), 5000):
        ingest_no_embed(corpus[at : at + 5000], work, env)
    plant_vectors(corpus, [work / "cache"])
    print(f"{args.size} records stored in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    prompts = keyword_queries(corpus, args.runs)
    results = {"machine": machine(), "records": args.size, "runs": args.runs, "date": time.strftime("%Y-%m-%d")}
    results["python_startup_ms"] = summary(_startup(env))
    commands = {
        "warm_daemon_ms": [str(_script(work, "eidetic-hook", "eidetic.hooks.client")), "claude", "prompt"],
        "warm_daemon_module_ms": [sys.executable, "-m", "eidetic", "hook", "claude", "prompt"],
        "warm_daemon_eidetic_hook_ms": [str(_script(work, "eidetic", "eidetic.cli.main")), "hook", "claude", "prompt"],
    }
    results["cold_in_process_ms"] = summary(_hooks(prompts[:10], {**env, "EIDETIC_HOOK_DAEMON": "0"}, work))
    _start_daemon(env, work)
    for name, times in _turns(keyword_queries(corpus, 3 * args.runs, seed=17), env, work, commands).items():
        results[name] = summary(times)
    results["load_average"] = os.getloadavg()
    results["daemon_own_ms"] = _daemon_times(work)
    results["context_process_ms"] = summary(_context(prompts[:10], env, work))
    results["session_end_capture_ms"] = _captures(work)
    subprocess.run([sys.executable, "-m", "eidetic", "hooks", "stop"], env=env, capture_output=True)
    print(json.dumps(results, indent=1))


def _payload(prompt: str, n: int, work: Path) -> str:
    body = {"session_id": _sessions(n), "transcript_path": "", "cwd": str(work), "hook_event_name": "UserPromptSubmit"}
    return json.dumps({**body, "prompt": prompt})


def _hooks(prompts: list[str], env: dict, work: Path, command: list[str] | None = None, n0: int = 0) -> list[float]:
    times = []
    for n, prompt in enumerate(prompts, start=n0):
        started = time.perf_counter()
        proc = subprocess.run(
            command or [sys.executable, "-m", "eidetic", "hook", "claude", "prompt"],
            input=_payload(prompt, n, work),
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
        )
        times.append((time.perf_counter() - started) * 1000)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
    return times


def _turns(prompts: list[str], env: dict, work: Path, commands: dict[str, list[str]]) -> dict[str, list[float]]:
    """The commands taking turns, in an order rotated turn by turn, each on prompts of its own
    (the daemon keeps a prompt's embedding: a prompt asked again would cost less) and in its own
    sessions (ten prompts a session)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for n in range(len(prompts) // len(names)):
        for k in range(len(names)):
            i = names.index(name := names[(n + k) % len(names)])
            times[name] += _hooks([prompts[n * len(names) + i]], env, work, commands[name], n0=n + 10_000 * i)
    return times


def _script(work: Path, name: str, module: str) -> Path:
    """The console script beside this Python, else one written as pip writes it."""
    installed = Path(sys.executable).parent / name
    if installed.is_file():
        return installed
    script = work / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom {module} import main\nif __name__ == '__main__':\n"
        "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


def _startup(env: dict, runs: int = 20) -> list[float]:
    """The floor under any hook command: a Python process that does nothing."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _context(prompts: list[str], env: dict, work: Path) -> list[float]:
    times = []
    for prompt in prompts:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "eidetic", "context", "--prompt", prompt], env=env, cwd=work, capture_output=True
        )
        times.append((time.perf_counter() - started) * 1000)
    return times


def _start_daemon(env: dict, work: Path) -> None:
    """The first hook starts the daemon; wait until it answers (it loads the model first)."""
    _hooks(["warm up"], env, work)
    for _ in range(600):
        status = subprocess.run(
            [sys.executable, "-m", "eidetic", "hooks", "status", "claude", "--json"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
        )
        if json.loads(status.stdout)["daemon"]["running"]:
            _hooks(["warm up again"], env, work)
            return
        time.sleep(0.5)
    raise SystemExit("the daemon did not start")


def _daemon_times(work: Path) -> dict:
    """The hook client's own measure of each daemon answer (its log: '[daemon, N ms]')."""
    log = next((work / "rt" / "eidetic").glob("hook-*.log")).read_text()
    found = [float(ms) for ms in re.findall(r"\[daemon, (\d+) ms\]", log)]
    return {"p50_ms": statistics.median(found), "n": len(found)} if found else {}


def _captures(work: Path, sessions: int = 5, per_session: int = 10) -> dict:
    """The session-end hook's capture of ten new statements, as the daemon runs it (its engine,
    model loaded), with vectors (the meaning rule on: what the daemon does) and by words alone
    (what the in-process answer does); each session's statements are new ones."""
    from eidetic.hooks.respond import Engine, handle

    os.environ["EIDETIC_CAPTURE"] = "private"
    texts = [" ".join(r["text"].split()[:18]) for r in records(2 * sessions * per_session, seed=23, short_share=1.0)]
    engine = Engine(watch=True)
    times: dict[str, list[float]] = {"hybrid": [], "keyword": []}
    try:
        for n in range(2 * sessions):
            mode = "hybrid" if n % 2 == 0 else "keyword"
            transcript = work / f"session-{n}.jsonl"
            said = texts[n * per_session : (n + 1) * per_session]
            transcript.write_text("".join(_said(f"Remember that {text}.", n) for text in said))
            payload = {"session_id": f"end-{n}", "cwd": str(work), "transcript_path": str(transcript)}
            request = {"agent": "claude", "event": "session-end", "payload": payload, "cwd": str(work), "mode": mode}
            started = time.perf_counter()
            answer = handle(engine, request)
            times[mode].append((time.perf_counter() - started) * 1000)
            assert answer["log"][0].startswith(f"session-end: captured {per_session} of"), answer
    finally:
        engine.close()
        os.environ.pop("EIDETIC_CAPTURE")
    return {"statements": per_session, **{mode: summary(found) for mode, found in times.items()}}


def _said(text: str, n: int) -> str:
    message = {"role": "user", "content": text}
    return (
        json.dumps({"type": "user", "message": message, "sessionId": f"end-{n}", "timestamp": "2026-12-01T10:00:00Z"})
        + "\n"
    )


def _sessions(n: int) -> str:
    return f"bench-{n // 10}"  # ten prompts a session: a new session's first prompt, then nine more


if __name__ == "__main__":
    os.environ.pop("EIDETIC_HOOK_DAEMON", None)
    main()
