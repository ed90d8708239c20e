"""Attacks on the store, each of which took a store down, wrote outside it or leaked a scope
before it was fixed (docs/reliability.md has the rule each one keeps): hostile front matter,
symlinked folders, batches that fail half-way, another scope's private records seen through
conflicts, precedence, sweep or an MCP session, and small contract gaps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ids, ndjson, rec, run_process
from eidetic import frontmatter
from eidetic.errors import EideticError
from eidetic.memory import Memory
from eidetic.record_intake import MAX_NESTING, MAX_VALUES, record_from_input
from eidetic.records import DEFAULT_SCOPE
from eidetic.stores.files.folder import RecordFolder

# -- 1. a bad record file costs one record ----------------------------------------------------


def _alias_bomb(levels: int, width: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "metadata:\n" + "".join(f"  {line}\n" for line in lines)


def _merge_bomb(levels: int) -> str:
    lines = ["m0: &m0 {a: 1, b: 2}"]
    for level in range(1, levels):
        lines.append(f"m{level}: &m{level} {{<<: [*m{level - 1}], k: [*m{level - 1}, *m{level - 1}]}}")
    return "metadata:\n" + "".join(f"  {line}\n" for line in lines)


HOSTILE = {
    "recursive.md": "metadata: &m {self: *m}\n",
    "recursive-list.md": "links: &l [a, *l]\n",
    "deep-flow.md": "metadata: {x: " + "[" * 900 + "]" * 900 + "}\n",
    "deep-block.md": "metadata:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(60)) + "  " * 61 + "v\n",
    "bomb.md": _alias_bomb(9, 9),
    "merge-bomb.md": _merge_bomb(40),
    "nan.md": "metadata: {x: .nan, y: -.inf}\n",
    "nul.md": 'metadata: {x: "a\\0b"}\n',
    "big.md": 'metadata: {x: "' + "y" * 70_000 + '"}\n',
}


def _plant(store: Path) -> None:
    store.mkdir(parents=True, exist_ok=True)
    for name, header in HOSTILE.items():
        (store / name).write_text(f"---\nid: {name[:-3]}\n{header}---\nquokka hostile {name}\n")


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["flow", "block", "alias", "merge", "cycle"]), size=st.integers(1, 2000))
def test_parse_of_any_shape_returns_a_record_or_a_reason(kind, size):
    """Never RecursionError, MemoryError or a hang: a record, or ValueError naming why not."""
    if kind == "flow":
        header = "metadata: {x: " + "[" * size + "]" * size + "}\n"
    elif kind == "block":
        depth = min(size, 400)
        header = "metadata:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(depth)) + "  " * (depth + 1) + "v\n"
    elif kind == "alias":
        header = _alias_bomb(2 + size % 10, 2 + size % 12)
    elif kind == "merge":
        header = _merge_bomb(1 + size % 60)
    else:
        header = "metadata: &a {x: [*a, {y: *a}]}\n"
    try:
        record = frontmatter.parse(f"---\nid: r\n{header}---\ntext\n", "r")
    except ValueError as exc:
        assert str(exc)
    else:
        assert record.id == "r"
        assert json.dumps(record.metadata)  # what is served is plain, finite JSON


def test_hostile_front_matter_is_skipped_and_every_verb_keeps_working(cli, store, env):
    cli("remember", '{"id": "good", "text": "a good quokka record"}')
    _plant(store)
    run = cli("recall", "quokka", "--mode", "keyword", "--json")
    assert ids(run) == ["good"]
    assert sum(name in run.err for name in HOSTILE) == 5  # five are named, the rest counted
    assert f"skipped {len(HOSTILE) - 5} more unparseable" in run.err
    status = cli("index", "--json").json["stores"][0]
    assert sorted(item["path"] for item in status["unparseable"]) == sorted(HOSTILE)
    assert cli("remember", '{"id": "more", "text": "another quokka"}').code == 0
    assert cli("index", "--rebuild").code == 0
    assert cli("doctor").code == 0  # unparseable files are a warning, not an unhealthy store
    assert cli("overview", "--json").json["stores"][0]["records"] == 2
    exported = cli("export")
    assert exported.code == 0 and len(exported.out.splitlines()) == 2
    assert cli("sweep", "--dry-run").code == 0
    assert cli("audit", "--memory-dir", str(store)).code == 0
    from eidetic.cli.memory_recall import main as memory_recall

    assert memory_recall(["quokka", "--memory-dir", str(store), "--json", "--no-record"]) == 0
    imported = cli("import", str(store), "--format", "markdown", "--memory-dir", str(env / "copy"), "--json")
    assert imported.code == 1  # the hostile files are reported, the rest imported
    assert imported.json["imported"] == 2 and len(imported.json["skipped"]) == len(HOSTILE)
    assert ids(cli("recall", "quokka", "--mode", "exact", "--json")) == ["more", "good"]


@pytest.mark.slow
def test_hostile_front_matter_does_not_stop_the_mcp_server(env, store, monkeypatch):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    store.mkdir()
    (store / "good.md").write_text("---\nid: good\n---\na good quokka record\n")
    _plant(store)

    async def session() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "eidetic", "mcp"], env=dict(os.environ))
        async with stdio_client(params) as streams, ClientSession(*streams) as client:
            await client.initialize()
            for tool, arguments in (
                ("recall", {"query": "quokka", "mode": "keyword"}),
                ("remember", {"records": {"text": "one more quokka"}}),
                ("overview", {}),
                ("sweep", {"dry_run": True}),
            ):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
            found = await client.call_tool("recall", {"query": "quokka", "mode": "keyword"})
            assert {item["id"] for item in found.structured_content["items"]} >= {"good"}
            records = json.loads((await client.read_resource("eidetic://records")).contents[0].text)
            assert len(records["items"]) == 2

    anyio.run(session)


@pytest.mark.parametrize(
    "record, message",
    [
        (
            {"text": "x", "metadata": {"a": json.loads("[" * (MAX_NESTING + 2) + "]" * (MAX_NESTING + 2))}},
            "levels deep",
        ),
        ({"text": "x", "metadata": {"a": [[0] * 100] * (MAX_VALUES // 100 + 1)}}, "values"),
        ({"text": "x", "metadata": {"a": "y" * 70_000}}, "metadata"),
        ({"text": "x\x00y"}, "NUL"),
        ({"text": "x", "metadata": {"k\x00": 1}}, "NUL"),
    ],
)
def test_remember_input_over_the_limits_is_a_clear_error(cli, store, record, message):
    run = cli("remember", stdin=ndjson({"id": "ok", "text": "fine"}, record))
    assert run.code == 1 and message in run.err and "Traceback" not in run.err
    assert not store.exists() or not list(store.rglob("*.md"))  # nothing of the batch


def test_json_nested_beyond_the_parser_is_bad_input_not_a_crash(cli, store):
    deep = '{"text": "x", "metadata": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    for run in (
        cli("remember", deep),
        cli("remember", stdin=deep + "\n"),
        cli("recall", "x", "--mode", "keyword", "--filter", "a=" + "[" * 100_000),
    ):
        assert run.code in (0, 1) and "Traceback" not in run.err
    assert cli("remember", deep).code == 1


def test_a_self_referencing_object_from_python_is_refused():
    looped: dict = {"text": "x", "metadata": {}}
    looped["metadata"]["self"] = looped["metadata"]
    with pytest.raises(EideticError, match="levels deep"):
        record_from_input(looped, default_scope=DEFAULT_SCOPE, added_by=None)


# -- 2. writes never leave the store -----------------------------------------------------------


def test_a_symlinked_shard_folder_is_refused_not_written_through(cli, store, env):
    cli("remember", '{"id": "first", "text": "the first record"}')
    outside = env / "outside"
    outside.mkdir()
    shard = rec(store, "victim").parent
    assert not shard.exists()
    shard.symlink_to(outside)
    run = cli(
        "remember",
        stdin=ndjson({"id": "other", "text": "another record"}, {"id": "victim", "text": "must not leave the store"}),
    )
    assert run.code == 2 and "symlink" in run.err and shard.name in run.err
    assert list(outside.iterdir()) == []
    assert ids(cli("recall", "record", "--mode", "keyword", "--json")) == ["first"]  # not "other" either
    shard.unlink()
    assert cli("remember", '{"id": "victim", "text": "now inside"}').code == 0
    assert rec(store, "victim").is_file() and not rec(store, "victim").parent.is_symlink()


def test_a_symlinked_lock_file_is_never_written_through(cli, store, env):
    cli("remember", '{"id": "first", "text": "the first record"}')
    precious = env / "precious.txt"
    precious.write_text("keep me")
    lock = store / ".eidetic.lock"
    lock.unlink()
    lock.symlink_to(precious)
    run = cli("remember", '{"id": "second", "text": "a second record"}')
    assert run.code == 2 and precious.read_text() == "keep me"


def test_purge_never_deletes_outside_the_store(cli, store, env):
    cli("remember", '{"id": "gone", "text": "to be purged"}')
    path = rec(store, "gone")
    outside = env / "outside"
    outside.mkdir()
    (outside / path.name).write_text("not eidetic's to delete")
    keep = path.parent.with_name(path.parent.name + ".real")
    path.parent.rename(keep)
    path.parent.symlink_to(outside)
    cli("forget", "gone", "--purge", "--yes")
    assert (outside / path.name).read_text() == "not eidetic's to delete"


# -- 3. a batch is all or nothing ---------------------------------------------------------------


def test_write_many_undoes_its_renames_when_one_fails(tmp_path):
    files = RecordFolder(tmp_path / "store")
    files.root.mkdir()
    files.write_many([("aa/one.md", "old one\n")])
    (files.root / "cc" / "three.md").mkdir(parents=True)  # a folder where a record file goes
    (files.root / "cc" / "three.md" / "x").write_text("keeps the folder non-empty")
    with pytest.raises(EideticError) as failure:
        files.write_many([("aa/one.md", "new one\n"), ("bb/two.md", "two\n"), ("cc/three.md", "three\n")])
    assert "nothing of this batch was written" in failure.value.remediation
    assert (files.root / "aa" / "one.md").read_text() == "old one\n"
    assert not (files.root / "bb" / "two.md").exists()
    assert [p.name for p in files.root.iterdir() if p.name.startswith(".staging")] == []


def test_a_folder_where_the_file_should_go_gets_another_name(cli, store):
    (rec(store, "blocked")).mkdir(parents=True)
    run = cli(
        "remember",
        stdin=ndjson({"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}, {"id": "blocked", "text": "gamma"}),
    )
    assert run.code == 0, run.err
    assert ids(cli("recall", "gamma", "--mode", "keyword", "--json")) == ["blocked"]


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@pytest.fixture
def mounts():
    made: list[Path] = []
    yield made
    for point in reversed(made):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_a_rename_failing_on_the_third_record_leaves_nothing_served(cli, store, mounts):
    if os.geteuid() != 0:
        pytest.skip("needs a read-only bind mount (root)")
    cli("remember", '{"id": "a", "text": "alpha version one"}')
    third = rec(store, "c").parent
    third.mkdir(parents=True, exist_ok=True)
    if not (_mount("--bind", str(third), str(third))):
        pytest.skip("bind mounts are not permitted here")
    mounts.append(third)
    assert _mount("-o", "remount,ro,bind", str(third))
    assert rec(store, "a").parent != third and rec(store, "b").parent != third
    run = cli(
        "remember",
        stdin=ndjson(
            {"id": "a", "text": "alpha version two"}, {"id": "b", "text": "beta"}, {"id": "c", "text": "gamma"}
        ),
    )
    assert run.code == 2 and "nothing of this batch was written" in run.err
    assert ids(cli("recall", "alpha", "--mode", "keyword", "--json")) == ["a"]
    assert cli("recall", "version", "--mode", "keyword", "--json").json["items"][0]["text"] == "alpha version one"
    assert ids(cli("recall", "beta", "--mode", "keyword", "--json")) == []
    assert not rec(store, "b").exists()


def test_a_full_disk_on_the_third_record_leaves_nothing_served(cli, store, mounts):
    if os.geteuid() != 0:
        pytest.skip("needs a small tmpfs (root)")
    store.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(store)):
        pytest.skip("mounts are not permitted here")
    mounts.append(store)
    run = cli(
        "remember",
        stdin=ndjson({"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}, {"id": "c", "text": "gamma " * 10_000}),
    )
    assert run.code == 2 and "No space left" in run.err
    assert ids(cli("recall", "alpha", "--mode", "keyword", "--json")) == []
    assert not list(store.rglob("*.md"))


# -- 5. no scope side channels -----------------------------------------------------------------


def test_an_id_held_privately_elsewhere_gets_a_conflict_that_names_no_scope(cli, backend):
    assert (
        cli("remember", '{"id": "secret", "text": "alice only"}', "--scope", "alice", "--visibility", "private").code
        == 0
    )
    for flags in ((), ("--scope", "bob", "--visibility", "private")):
        run = cli("remember", '{"id": "secret", "text": "bob writes"}', *flags, "--json")
        assert run.code == 1
        assert "alice" not in run.err and "private" not in run.err_json["message"].replace("bob/private", "")
    visible = cli("remember", '{"id": "shared", "text": "public", "scope": {"name": "team", "visibility": "public"}}')
    assert visible.code == 0
    moved = cli("remember", '{"id": "shared", "text": "moved"}', "--scope", "bob")
    assert moved.code == 1 and "team/public" in moved.err  # a record the writer may see is named


def test_another_scopes_private_copy_never_hides_a_public_one(env, cli, monkeypatch):
    """Two stores: alice's private "x" at home, a public "x" in the repository."""
    repo = env / "work"
    (repo / ".git").mkdir()
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    assert (
        cli(
            "remember", '{"id": "x", "text": "alice private quokka"}', "--scope", "alice", "--visibility", "private"
        ).code
        == 0
    )
    with Memory.open() as memory:  # the repository store, written directly (an id collision)
        repo_store = memory.plan.repo
    repo_store.mkdir(parents=True)
    RecordFolder(repo_store).write_many([("x.md", "---\nid: x\n---\npublic quokka for everyone\n")])
    assert ids(cli("recall", "quokka", "--mode", "keyword", "--json")) == ["x"]
    hit = cli("recall", "quokka", "--mode", "keyword", "--json").json["items"][0]
    assert hit["text"] == "public quokka for everyone"
    exported = [json.loads(line) for line in cli("export").out.splitlines()]
    assert [(r["id"], r["text"]) for r in exported] == [("x", "public quokka for everyone")]
    with Memory.open() as memory:
        assert memory.get("x").text == "public quokka for everyone"
        memory.set_lifecycle("x", "archived")  # bob archives what he sees, not alice's copy
        assert memory.get("x", scope="alice", visibility="private").lifecycle == "active"
    alice = cli("recall", "quokka", "--mode", "keyword", "--scope", "alice", "--visibility", "private", "--json")
    assert [i["text"] for i in alice.json["items"]] == ["alice private quokka"]


def test_index_and_doctor_name_no_private_partition_or_id(cli, store):
    cli("remember", '{"id": "alice-plan", "text": "alice plans"}', "--scope", "alice", "--visibility", "private")
    cli("remember", '{"id": "pub", "text": "public plans"}')
    (store / "copy.md").write_text("---\nid: alice-plan\nscope: {name: alice, visibility: private}\n---\ncopy\n")
    cli("recall", "plans", "--mode", "keyword")
    for run in (cli("index", "--json"), cli("doctor", "--json"), cli("overview", "--json")):
        assert "alice" not in run.out, run.out
    own = cli("index", "--json", "--scope", "alice", "--visibility", "private").out
    assert "alice-plan" in own


def test_sweep_reports_only_what_the_caller_may_see(cli, backend):
    cli(
        "remember",
        "--scope",
        "alice",
        "--visibility",
        "private",
        stdin=ndjson(
            {"id": "old-secret", "text": "alice v1"},
            {"id": "new-secret", "text": "alice v2", "supersedes": "old-secret"},
        ),
    )
    cli("remember", '{"id": "ancient", "text": "public and old", "created": "2020-01-01T00:00:00Z"}')
    report = cli("sweep", "--dry-run", "--json").json
    assert [c["id"] for c in report["changed"]] == ["ancient"] and report["scanned"] == 1
    assert "secret" not in json.dumps(report)
    own = cli("sweep", "--json", "--scope", "alice", "--visibility", "private").json
    assert {c["id"] for c in own["changed"]} == {"ancient"}  # old-secret was shadowed at remember
    assert own["scanned"] == 3


def test_an_mcp_session_writes_only_where_it_may_read(env, store, monkeypatch, cli):
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    assert (
        cli(
            "remember",
            "--scope",
            "alice",
            "--visibility",
            "private",
            stdin=ndjson({"id": "alice-key", "text": "alice rotates the key monthly"}),
        ).code
        == 0
    )

    async def bob() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            env=dict(os.environ),
            args=["-m", "eidetic", "mcp", "--scope", "bob", "--visibility", "private"],
        )
        async with stdio_client(params) as streams, ClientSession(*streams) as client:
            await client.initialize()
            for arguments in (
                {"records": {"id": "alice-key", "text": "overwritten"}},
                {
                    "records": {
                        "id": "alice-key",
                        "text": "overwritten",
                        "scope": {"name": "alice", "visibility": "private"},
                    }
                },
                {"records": {"text": "x"}, "scope": "alice", "visibility": "private"},
            ):
                result = await client.call_tool("remember", arguments)
                text = result.content[0].text
                assert result.is_error and ("may not write" in text or "alice/" not in text), text
            shadow = await client.call_tool(
                "remember", {"records": {"id": "b1", "text": "bob's note", "supersedes": "alice-key"}}
            )
            assert not shadow.is_error
            same = await client.call_tool(
                "remember", {"records": {"id": "b2", "text": "alice rotates the key monthly"}}
            )
            assert not same.is_error and same.structured_content["duplicates"] == []

    anyio.run(bob)
    with Memory.open() as memory:
        record = memory.get("alice-key", scope="alice", visibility="private")
    assert record.text == "alice rotates the key monthly" and record.lifecycle == "active"


# -- 7/8. NUL on every backend, clean errors ---------------------------------------------------


def test_nul_characters_are_refused_alike_on_every_backend(cli, backend):
    assert cli("remember", '{"id": "ok", "text": "plain text"}').code == 0
    for run in (
        cli("remember", '{"text": "a\\u0000b"}'),
        cli("remember", '{"text": "x", "metadata": {"k": "a\\u0000b"}}'),
        cli("recall", "pla\x00in", "--mode", "keyword"),
        cli("recall", "plain", "--mode", "exact", "--source", "a\x00"),
        cli("recall", "plain", "--mode", "keyword", "--type", "note\x00"),
    ):
        assert run.code == 1 and "NUL" in run.err, run.err


def test_memory_recall_with_a_bad_number_exits_1(cli):
    from eidetic.cli.memory_recall import main as memory_recall

    assert memory_recall(["deploy", "--limit", "abc"]) == 1
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic.cli.memory_recall", "x", "--limit", "abc", "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and json.loads(proc.stderr.strip().splitlines()[-1])["code"] == 1


def test_nan_in_a_hand_written_file_is_refused_so_export_imports_back(cli, store, env):
    cli("remember", '{"id": "fine", "text": "a fine record", "metadata": {"n": 1.5}}')
    (store / "nan.md").write_text("---\nid: nan\nmetadata: {n: .nan, m: .inf}\n---\nnot a number\n")
    run = cli("recall", "record", "--mode", "keyword")
    assert "nan.md" in run.err and ".nan or .inf" in run.err
    exported = cli("export", "--no-usage").out
    imported = cli("import", "-", "--memory-dir", str(env / "copy"), "--json", stdin=exported)
    assert imported.code == 0 and imported.json["imported"] == 1


# -- 9. small contract gaps ----------------------------------------------------------------------


def test_updated_is_set_when_a_record_is_first_stored(cli, backend):
    cli("remember", '{"id": "n", "text": "a new record about otters"}')
    item = cli("recall", "otters", "--mode", "keyword", "--json").json["items"][0]
    assert item["updated"] is not None and item["updated"] == item["created"]


def test_json_scores_keep_full_precision(cli, backend):
    cli("remember", stdin=ndjson(*({"id": f"r{i}", "text": f"otters number {i} " + "swim " * i} for i in range(5))))
    items = cli("recall", "otters swim", "--mode", "keyword", "--json", "--top-k", "5").json["items"]
    assert any(item["score"] != round(item["score"], 6) for item in items)
    assert any(item["signal"] != round(item["signal"], 6) or item["signal"] == 0.5 for item in items)


def test_a_new_process_on_a_hostile_store_prints_no_traceback(tmp_path):
    _plant(tmp_path / "store")
    environ = dict(
        os.environ,
        EIDETIC_DATA_DIR=str(tmp_path / "store"),
        EIDETIC_CACHE_DIR=str(tmp_path / "cache"),
        EIDETIC_STATE_DIR=str(tmp_path / "state"),
        EIDETIC_EMBEDDER="none",
        HOME=str(tmp_path),
    )
    run = run_process("recall", "quokka", "--mode", "keyword", env=environ)
    assert run.code == 0 and "Traceback" not in run.err and "big.md" in run.err
