"""Measuring tools shared by the benchmark scripts: latency summaries, isolated environments
for a run's store and caches, a store of any backend (its server started for the run), CLI
processes timed with their peak memory, the machine's name."""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

TESTS = Path(__file__).resolve().parent.parent / "tests"  # the throwaway servers the tests start


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(values_ms: list[float]) -> dict:
    return {
        "p50_ms": round(statistics.median(values_ms), 2),
        "p95_ms": round(pct(values_ms, 0.95), 2),
        "n": len(values_ms),
    }


def installed_env(env: dict) -> dict:
    """The environment of an installed eidetic: its modules byte-compiled (pip does this on a
    normal install; this machine sets PYTHONDONTWRITEBYTECODE, which would make every new
    process compile eidetic's sources again, ~0.1 s that no user pays)."""
    import compileall

    import eidetic

    compileall.compile_dir(str(Path(eidetic.__file__).parent), quiet=1)
    clean = dict(env)
    clean.pop("PYTHONDONTWRITEBYTECODE", None)
    return clean


def isolated_env(work: Path) -> dict:
    """A run's own store, cache, state and HOME under ``work``: set for this process, and
    returned (as an installed eidetic's environment) for the CLI processes it starts."""
    env = os.environ.copy()
    env.update(
        {
            "EIDETIC_DATA_DIR": str(work / "store"),
            "EIDETIC_CACHE_DIR": str(work / "cache"),
            "EIDETIC_STATE_DIR": str(work / "state"),
            "HOME": str(work / "home"),
        }
    )
    os.environ.update({k: env[k] for k in ("EIDETIC_DATA_DIR", "EIDETIC_CACHE_DIR", "EIDETIC_STATE_DIR")})
    return installed_env(env)


class Store(NamedTuple):
    """A store of one backend for a run: the variables that name it, and its server (None: none)."""

    env: dict[str, str]  # EIDETIC_BACKEND and the variable of the backend's setting, and a server's login
    server: Any = None  # a postgres server's DSN (no database named), or the running graph server


Started = tuple[str, dict[str, str], Any, Callable[[], None]]  # (location, more variables, server, stop)


def _postgres(work: Path, keep: bool) -> Started:
    sys.path.insert(0, str(TESTS))
    from pg_server import start_postgres

    dsn, stop = start_postgres(work, keep=keep)
    return dsn, {}, dsn, stop


def _graph(work: Path, keep: bool) -> Started:
    sys.path.insert(0, str(TESTS))
    from graph_server import start_graph_server

    if keep:
        raise SystemExit("a graph server's files are not kept between runs: run without --keep")
    server = start_graph_server(heap="2g")
    login = {"EIDETIC_NEO4J_USER": server.user, "EIDETIC_NEO4J_PASSWORD": server.password}
    return server.database("eidetic"), login, server, server.stop


# how a benchmark starts each server the tests start, by the name of the tests' fixture (a row's ``fixture``)
START = {"postgres_dsn": _postgres, "graph_server": _graph}


@contextmanager
def backend_store(backend: str, work: Path, *, keep: bool = False) -> Iterator[Store]:
    """An empty store of ``backend`` under ``work``, named as a user's environment names it (the
    table of backends says which setting): the files backend's folder ``work/store``, a database
    file in ``work``, or a throwaway server started for the run (the one the tests' fixture for
    that backend starts) and stopped after it. ``keep``: a server's files stay in ``work`` for a
    later run with the same folder."""
    from eidetic.stores.backends import BACKENDS

    if backend not in BACKENDS:
        raise SystemExit(f"no backend {backend!r}: one of {', '.join(BACKENDS)}")
    row = BACKENDS[backend]
    env = {"EIDETIC_BACKEND": backend, "EIDETIC_DATA_DIR": str(work / "store")}
    location, server, stop = "", None, None
    if row.fixture is not None:
        location, more, server, stop = START[row.fixture](work, keep)
        env.update(more)
    elif row.default is not None:
        location = str(work / Path(row.default).name)
    if row.env is not None:
        env[row.env] = location
    try:
        yield Store(env, server)
    finally:
        if stop is not None:
            stop()


def use_store(store: Store, work: Path) -> None:
    """Point this process (and the CLI processes it starts) at ``store``, with caches, state and
    HOME under ``work``, as a user's shell would configure it."""
    os.environ.update(
        {
            "HOME": str(work / "home"),
            "EIDETIC_CACHE_DIR": str(work / "cache"),
            "EIDETIC_STATE_DIR": str(work / "state"),
            **store.env,
        }
    )


def recall_latencies(memory, mode: str, queries: list[str]) -> dict:
    """p50/p95 of in-process top-10 recalls, one per query."""
    latencies = []
    for query in queries:
        started = time.perf_counter()
        memory.recall(query, mode=mode, top_k=10)
        latencies.append((time.perf_counter() - started) * 1000)
    return summary(latencies)


def run_cli(args: list[str], env: dict, stdin=None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", *args], env=env, stdin=stdin, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"eidetic {' '.join(args)} failed: {proc.stderr}")
    return elapsed, proc


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()}"


def timed_cli(args: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float, str]:
    """One ``eidetic`` process: (wall ms, peak RSS MB, stdout). The peak comes from GNU time
    (``/usr/bin/time -f %M``: the process's maximum resident set, in KiB)."""
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "eidetic", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    wall = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"eidetic {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return wall, int(proc.stderr.strip().splitlines()[-1]) / 1024, proc.stdout


def folder_bytes(path: Path) -> int:
    """Bytes under a folder (or of one file); 0 when absent."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def snapshot(work: Path) -> Path:
    """A byte-compiled copy of the eidetic package as it is now, for a long run to import (first
    on ``sys.path`` and PYTHONPATH): edits made to the working tree meanwhile (an editable
    install reads it) then neither change nor break what is measured."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("eidetic")  # found, not imported: this process may import the copy
    assert spec is not None and spec.submodule_search_locations, "eidetic is not installed"
    target = work / "ours-src"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(
        Path(spec.submodule_search_locations[0]), target / "eidetic", ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(str(target / "eidetic"), quiet=1)
    return target


def side_by_side(before: Path, work: Path) -> dict[str, Path]:
    """The two sides of a side-by-side run, each a byte-compiled copy taken now: ``before``, the
    eidetic package of an earlier checkout's ``src`` folder, and ``after``, this one's."""
    import compileall

    earlier = work / "before"
    shutil.copytree(before / "eidetic", earlier / "eidetic", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(earlier / "eidetic"), quiet=1)
    return {"before": earlier, "after": snapshot(work)}


def ingest_no_embed(chunk: list[dict], work: Path, env: dict) -> None:
    """``chunk`` remembered by one ``eidetic remember --no-embed`` process run with ``env``."""
    path = work / "chunk.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in chunk))
    with path.open() as stdin:
        subprocess.run(
            [sys.executable, "-m", "eidetic", "remember", "--json", "--no-embed"],
            stdin=stdin,
            env=env,
            check=True,
            capture_output=True,
        )


def plant_vectors(chunk: list[dict], caches: list[Path]) -> None:
    """The clustered vectors (``semantic.clustered``) of every text, put in each cache folder's
    vector store, so no model runs."""
    from eidetic.embed import local
    from eidetic.embed.cache import VectorCache
    from eidetic.records import text_hash
    from semantic import clustered

    vectors = clustered(len(chunk), seed=99)
    for cache in caches:
        store = VectorCache(cache / "vectors.sqlite")
        store.put(local.MODEL_NAME, ((text_hash(r["text"]), v) for r, v in zip(chunk, vectors)))
        store.close()
