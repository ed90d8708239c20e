"""The server's write log (``team.write_log``) and ``eidetic log``: the JSON-lines file (appends
from several processes never interleave, a torn last line is skipped, mode 0600), the postgres
table on a real PostgreSQL, the filters, and real ``eidetic serve`` processes whose writes, from
an MCP client over HTTP and from the viewer's forget form, are logged with their ids and never
their text or the token."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import fresh_database, run_process
from eidetic.records import Scope
from eidetic.team.write_log import FILE_NAME, SERVER, Entry, FileBook, PostgresBook, ServerLog, Wanted, stamp
from serve_process import seed, serve, store_env

TEAM = Scope("team", "public")
DISTINCT = "Quokka ledger reconciles at noon"  # the text of the record remembered through the server
TOKEN = "log-test-token-0123456789-abcdef"


def entry(member: str, operation: str, ids: list[str], ago: timedelta = timedelta(0)) -> Entry:
    return Entry(stamp(datetime.now(UTC) - ago), member, operation, tuple(ids), "team/public")


def filled(book) -> None:
    """Five entries, oldest first: two members and the server itself, several operations."""
    for item in (
        entry("alice", "remember", ["a1", "a2"], timedelta(days=10)),
        entry("bob", "forget", ["a1"], timedelta(days=3)),
        entry(SERVER, "sweep", ["a2", "b1"], timedelta(days=2)),
        entry("alice", "supersede", ["a3", "a2"], timedelta(hours=2)),
        entry("bob", "edit", ["b1"]),
    ):
        book.add(item)


def check_filters(book) -> None:
    def seen(**wanted) -> list[tuple[str, str]]:
        return [(e.member, e.operation) for e in book.read(Wanted(**wanted))]

    assert seen() == [
        ("bob", "edit"),
        ("alice", "supersede"),
        (SERVER, "sweep"),
        ("bob", "forget"),
        ("alice", "remember"),
    ]  # newest first
    assert seen(member="alice") == [("alice", "supersede"), ("alice", "remember")]
    assert seen(member=SERVER) == [(SERVER, "sweep")]
    assert seen(operation="forget") == [("bob", "forget")]
    assert seen(id="a2") == [("alice", "supersede"), (SERVER, "sweep"), ("alice", "remember")]
    assert seen(id="a") == []  # an id matches whole, never a prefix
    assert seen(since=datetime.now(UTC) - timedelta(days=2, hours=12)) == seen()[:3]
    assert seen(member="bob", since=datetime.now(UTC) - timedelta(days=1)) == [("bob", "edit")]
    assert seen(limit=2) == seen()[:2]
    first = book.read(Wanted(limit=1))[0]
    assert first.ids == ("b1",) and first.scope == "team/public"
    assert datetime.fromisoformat(first.time).utcoffset() == timedelta(0)


# -- the file ----------------------------------------------------------------------------------


def test_the_file_log_appends_one_line_a_write_mode_0600_and_filters(tmp_path):
    path = tmp_path / "state" / FILE_NAME
    book = FileBook(path)
    assert book.read(Wanted()) == []  # no file yet: nothing, no error
    filled(book)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0])["ids"] == ["a1", "a2"]
    check_filters(book)


def test_the_server_log_names_the_server_for_no_member_and_keeps_its_scope(tmp_path):
    book = FileBook(tmp_path / FILE_NAME)
    log = ServerLog(book, Scope("bob", "private"))
    log.append(None, "remember", ["x1"])
    log.append("carol", "forget", ("x1",))
    assert [(e.member, e.operation, e.ids, e.scope) for e in book.read(Wanted())] == [
        ("carol", "forget", ("x1",), "bob/private"),
        (SERVER, "remember", ("x1",), "bob/private"),
    ]


APPENDER = """
import sys
from pathlib import Path
from eidetic.records import Scope
from eidetic.team.write_log import FileBook, ServerLog
log = ServerLog(FileBook(Path(sys.argv[1])), Scope("team", "public"))
for n in range(int(sys.argv[3])):
    # ids long enough that a line is beyond a buffered file's buffer (8 KiB): a write that split
    # would show as a broken line
    log.append(sys.argv[2], "remember", [f"{sys.argv[2]}-{n}", "x" * 20000])
"""


def test_appends_from_several_processes_never_interleave(tmp_path):
    path, writers, each = tmp_path / FILE_NAME, 4, 150
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), f"w{n}", str(each)]) for n in range(writers)]
    assert all(proc.wait(timeout=120) == 0 for proc in procs)
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == writers * each + 1
    entries = [json.loads(line) for line in lines[:-1]]  # every line whole
    assert sorted(e["ids"][0] for e in entries) == sorted(f"w{w}-{n}" for w in range(writers) for n in range(each))
    assert len(FileBook(path).read(Wanted())) == writers * each


def test_a_line_torn_by_a_crash_is_skipped_and_the_next_write_starts_a_line_of_its_own(tmp_path, env, cli):
    path = env / "state" / FILE_NAME
    book = FileBook(path)
    book.add(entry("alice", "remember", ["t1"]))
    with path.open("ab") as handle:
        handle.write(b'{"time": "2026-12-02T08:00:00.000+00:00", "member": "bob", "operation": "forg')
    assert [e.ids for e in book.read(Wanted())] == [("t1",)]
    shown = cli("log", "--json")
    assert shown.code == 0 and shown.err == "" and [e["ids"] for e in shown.json["items"]] == [["t1"]]
    book.add(entry("carol", "edit", ["t2"]))  # after a restart: sealed off, not glued to the torn line
    assert [e.ids for e in book.read(Wanted())] == [("t2",), ("t1",)]


def test_a_write_the_log_cannot_keep_is_reported_on_stderr_in_full_not_failed(tmp_path, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    log = ServerLog(FileBook(blocker / FILE_NAME), TEAM)
    log.append("alice", "forget", ["gone-1"])  # no exception: the change was made
    err = capsys.readouterr().err
    assert "could not record a write" in err and "the change was made" in err
    kept = json.loads(err.split("Its entry: ", 1)[1])
    assert (kept["member"], kept["operation"], kept["ids"], kept["scope"]) == (
        "alice",
        "forget",
        ["gone-1"],
        "team/public",
    )


# -- eidetic log ---------------------------------------------------------------------------------


def test_eidetic_log_filters_and_explains_bad_flags(env, cli):
    filled(FileBook(env / "state" / FILE_NAME))
    listed = cli("log", "--json")
    assert listed.code == 0, listed.err
    assert [e["operation"] for e in listed.json["items"]] == ["edit", "supersede", "sweep", "forget", "remember"]
    assert listed.json["more"] is False and listed.json["log"].endswith(FILE_NAME)
    assert [e["operation"] for e in cli("log", "--json", "--member", "alice").json["items"]] == [
        "supersede",
        "remember",
    ]
    assert [e["member"] for e in cli("log", "--json", "--id", "b1").json["items"]] == ["bob", SERVER]
    assert [e["operation"] for e in cli("log", "--json", "--since", "36h").json["items"]] == ["edit", "supersede"]
    assert [e["operation"] for e in cli("log", "--json", "--operation", "forget").json["items"]] == ["forget"]
    some = cli("log", "--json", "--limit", "2")
    assert len(some.json["items"]) == 2 and some.json["more"] is True
    table = cli("log", "--limit", "2")
    assert table.code == 0 and "MEMBER" in table.out and "supersede" in table.out and "a3 a2" in table.out
    assert "--limit to see more" in table.out
    assert "no writes logged" in cli("log", "--member", "nobody").out
    bad = cli("log", "--since", "the other day")
    assert bad.code == 1 and "--since" in bad.err and "hint:" in bad.err
    assert cli("log", "--limit", "0").code == 1


# -- postgres ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_log_dsn(postgres_dsn):
    return fresh_database(postgres_dsn, "write_log")


def test_the_postgres_log_is_a_table_beside_the_store_with_the_same_filters(pg_log_dsn):
    book = PostgresBook(pg_log_dsn)
    try:
        assert book.read(Wanted()) == []  # a read creates nothing
        with psycopg.connect(pg_log_dsn) as conn:
            assert conn.execute("SELECT to_regclass('eidetic_write_log')").fetchone()[0] is None
        filled(book)
        check_filters(book)
        assert "password" not in book.where and book.where.startswith("postgres://")
    finally:
        book.close()
    with psycopg.connect(pg_log_dsn) as conn:
        indexes = {
            name for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'eidetic_write_log'")
        }
        assert {"eidetic_write_log_at", "eidetic_write_log_member", "eidetic_write_log_ids"} <= indexes
        conn.execute("SET enable_seqscan = off")  # a few rows: else the planner rightly scans them
        plan = " ".join(
            row[0] for row in conn.execute("EXPLAIN SELECT * FROM eidetic_write_log WHERE ids @> ARRAY['a2']::text[]")
        )
    assert "eidetic_write_log_ids" in plan  # an id is found through the index, not by reading every row


def test_two_processes_creating_and_appending_to_the_postgres_log_lose_nothing(postgres_dsn):
    dsn = fresh_database(postgres_dsn, "write_log_race")  # no table yet: both race to create it
    script = """
import sys
from eidetic.records import Scope
from eidetic.team.write_log import PostgresBook, ServerLog
log = ServerLog(PostgresBook(sys.argv[1]), Scope("team", "public"))
for n in range(40):
    log.append(sys.argv[2], "remember", [f"{sys.argv[2]}-{n}"])
"""
    procs = [subprocess.Popen([sys.executable, "-c", script, dsn, f"p{n}"]) for n in range(2)]
    assert all(proc.wait(timeout=120) == 0 for proc in procs)
    book = PostgresBook(dsn)
    try:
        for member in ("p0", "p1"):
            assert sorted(e.ids[0] for e in book.read(Wanted(member=member))) == sorted(
                f"{member}-{n}" for n in range(40)
            )
    finally:
        book.close()


# -- through eidetic serve ---------------------------------------------------------------------


async def _remember_and_supersede(base: str) -> tuple[str, str]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(base + "/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        made = await session.call_tool("remember", {"records": {"id": "quokka", "text": DISTINCT}})
        assert not made.is_error, made.content
        again = await session.call_tool("remember", {"records": {"id": "quokka", "text": DISTINCT}})
        assert again.structured_content["items"][0]["status"] == "unchanged"  # changes nothing: no entry
        newer = await session.call_tool(
            "remember", {"records": {"id": "quokka-2", "text": DISTINCT + " sharp", "supersedes": "quokka"}}
        )
        assert not newer.is_error, newer.content
        return made.structured_content["items"][0]["id"], newer.structured_content["items"][0]["id"]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["files", "postgres"])
def test_every_write_through_eidetic_serve_is_logged_without_text_or_token(backend, tmp_path, request):
    env = store_env(tmp_path, EIDETIC_SERVE_TOKEN=TOKEN)
    if backend == "postgres":
        env.update(
            EIDETIC_BACKEND="postgres",
            EIDETIC_PG_DSN=fresh_database(request.getfixturevalue("postgres_dsn"), "log_serve"),
        )
    seed(
        env,
        [
            {
                "id": "old-note",
                "text": "The staging database moved to db-2",
                "scope": {"name": "team", "visibility": "public"},
            }
        ],
    )
    served = serve(env, "--token", "--scope", "team")
    try:

        async def work() -> tuple[str, str]:
            with anyio.fail_after(60):
                return await _remember_and_supersede(served.base)

        made, newer = anyio.run(work)
        forgot = httpx.post(
            served.base + "/record/forget",
            data={"id": "old-note", "confirm": "yes"},
            cookies=served.cookies,
            headers={"Sec-Fetch-Site": "same-origin"},
        )
        assert forgot.status_code == 303, forgot.text
    finally:
        stderr = served.stop()
    assert "could not record" not in stderr
    shown = run_process("log", "--json", env=env)
    assert shown.code == 0, shown.err
    logged = [(e["member"], e["operation"], e["ids"], e["scope"]) for e in shown.json["items"]]
    assert logged == [
        (SERVER, "forget", ["old-note"], "team/public"),
        (SERVER, "remember", [newer, made], "team/public"),  # the new one and the one it shadowed
        (SERVER, "remember", [made], "team/public"),
    ]
    by_id = run_process("log", "--json", "--id", "old-note", env=env)
    assert [e["operation"] for e in by_id.json["items"]] == ["forget"]
    if backend == "files":
        kept = (Path(env["EIDETIC_STATE_DIR"]) / FILE_NAME).read_text()
    else:
        with psycopg.connect(env["EIDETIC_PG_DSN"]) as conn:
            kept = json.dumps([list(map(str, row)) for row in conn.execute("SELECT * FROM eidetic_write_log")])
    assert kept.count("quokka") >= 2  # the ids are there
    for secret in ("Quokka", "ledger", "staging", TOKEN):  # never the text, never the token
        assert secret not in kept and secret not in shown.out


# -- every write site, in-process ----------------------------------------------------------------


def test_each_write_site_logs_the_ids_it_changed_and_a_refused_write_nothing(store, monkeypatch, tmp_path):
    from starlette.testclient import TestClient

    from eidetic import Memory
    from eidetic.errors import EideticError
    from eidetic.mcp.server import build_server
    from eidetic.memory.editing import edit_text
    from eidetic.session import Session
    from eidetic.web.app import create_app
    from eidetic.web.curate import digest

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    book = FileBook(tmp_path / FILE_NAME)
    scope = Scope("default", "public")
    with Memory.open() as memory:
        memory.remember(
            [
                {"id": "day", "text": "Deploys run on Tuesdays"},
                {"id": "key", "text": "The deploy key rotates monthly"},
                {"id": "ancient", "text": "The build ran on Jenkins", "created": "2019-03-01"},
            ]
        )
        session = Session(memory, scope, member="carol", log=ServerLog(book, scope))
        app = create_app(session, host="127.0.0.1", port=8765, token=None)
        try:
            client = TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)
            assert client.post("/record/forget", data={"id": "key"}).status_code == 200  # only asks
            assert client.post("/record/forget", data={"id": "key", "confirm": "yes"}).status_code == 303
            assert client.post("/record/restore", data={"id": "key", "confirm": "yes"}).status_code == 303
            form = {"id": "day", "text": "Deploys run on Wednesdays", "new_id": "day-2"}
            assert client.post("/record/supersede", data=form).status_code == 303
            assert client.post("/record/forget", data={"id": "nope", "confirm": "yes"}).status_code == 404
            shown = edit_text(memory.get("key"))
            edited = {"id": "key", "text": shown.replace("monthly", "weekly"), "original": digest(shown)}
            assert client.post("/record/edit", data=edited).status_code == 303
            edit = client.post("/record/edit", data={"id": "key", "text": "x", "original": "stale"})
            assert edit.status_code == 409  # refused: nothing changed, nothing logged

            async def sweep() -> dict:
                result = await build_server(session).call_tool("sweep", {})
                return result.structured_content

            swept = anyio.run(sweep)
            assert [c["id"] for c in swept["changed"]] == ["ancient"]
            assert anyio.run(sweep)["changed"] == []  # nothing due: no entry
        finally:
            app.state.reports.close()
            session.close()
    logged = [(e.member, e.operation, list(e.ids)) for e in reversed(book.read(Wanted()))]
    assert logged == [
        ("carol", "forget", ["key"]),
        ("carol", "restore", ["key"]),
        ("carol", "supersede", ["day-2", "day"]),
        ("carol", "edit", ["key"]),
        ("carol", "sweep", ["ancient"]),
    ]
    reader = Session(Memory.open(), scope, member="dave", read_only=True, log=ServerLog(book, scope))
    try:
        with pytest.raises(EideticError, match="may only read"):
            anyio.run(lambda: reader.write("forget", lambda: None, lambda _: ["key"]))
    finally:
        reader.memory.close()
        reader.close()
    assert len(book.read(Wanted())) == 5 and book.read(Wanted(member="dave")) == []
