"""Records a person can see, list and edit: ``eidetic show``, ``eidetic list``, ``eidetic edit``;
output formats and colour (in a real pseudo-terminal); usage that counts what a reader used."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import textwrap

import pytest

from conftest import ids, ndjson, rec, snapshot
from eidetic import Memory
from eidetic.ranking import reinforce
from eidetic.records import Record
from eidetic.results import Hit
from terminal import run_on_terminal

ESC = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def notes(cli, store, env, monkeypatch):
    """A small store: a public chain a -> b (a supersedes old), and alice's private record.
    Temporary files (an edit's copy) go to the test's own folder."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    (env / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(env / "tmp"))
    monkeypatch.setenv("TMPDIR", str(env / "tmp"))
    run = cli(
        "remember",
        stdin=ndjson(
            {"id": "old", "text": "deploys used to run on Mondays"},
            {
                "id": "a",
                "name": "Deploy day",
                "text": "Deploys run on Tuesdays\nafter the standup",
                "links": ["b", "secret", "gone"],
                "supersedes": "old",
                "metadata": {"source": "retro", "priority": 2},
            },
            {"id": "b", "text": "The deploy key rotates monthly", "links": ["a"]},
        ),
    )
    assert run.code == 0, run.err
    private = cli("remember", "--scope", "alice", "--visibility", "private", '{"id": "secret", "text": "alice note"}')
    assert private.code == 0, private.err
    return store


def usage_of(cli, rid, *scope):
    [item] = [
        i
        for i in cli("list", "--include-archived", "--include-shadowed", *scope, "--json").json["items"]
        if i["id"] == rid
    ]
    return item["recall_count"], item["last_recall"]


# -- show ---------------------------------------------------------------------------------------


def test_show_gives_every_field_the_file_usage_and_links_both_ways(cli, notes):
    hits = cli("recall", "tuesdays", "--mode", "keyword", "--json").json["items"]
    assert [(h["id"], h["path"]) for h in hits] == [("a", str(rec(notes, "a"))), ("b", str(rec(notes, "b")))]
    view = cli("show", "a", "--json").json
    assert view["text"] == "Deploys run on Tuesdays\nafter the standup" and view["metadata"]["priority"] == 2
    assert view["path"] == str(rec(notes, "a")) and os.path.isfile(view["path"])
    assert view["store"] == {"backend": "files", "location": str(notes)}
    assert view["recall_count"] == 1 and view["last_recall"]
    links = view["connections"]
    assert [(r["id"], r["found"]) for r in links["links_out"]] == [("b", True), ("secret", False), ("gone", False)]
    assert links["links_in"] == [{"id": "b", "found": True, "type": "note", "name": None, "lifecycle": "active"}]
    assert links["supersedes"] == {"id": "old", "found": True, "type": "note", "name": None, "lifecycle": "shadowed"}
    assert [r["id"] for r in cli("show", "old", "--json").json["connections"]["superseded_by"]] == ["a"]
    text = cli("show", "a").out
    assert "Deploys run on Tuesdays\nafter the standup" in text and str(rec(notes, "a")) in text
    assert "secret (not found)" in text and "old (note, shadowed)" in text and "\x1b" not in text
    # showing is not a recall
    assert usage_of(cli, "a")[0] == 1 and usage_of(cli, "b")[0] == 0.5  # b: linked from a


def test_show_has_no_side_channel_for_private_records(cli, notes):
    missing, private = cli("show", "nope", "--json"), cli("show", "secret", "--json")
    assert missing.code == private.code == 1 and private.out == ""
    assert private.err_json["message"] == missing.err_json["message"].replace("nope", "secret")
    mine = cli("show", "secret", "--scope", "alice", "--visibility", "private", "--json").json
    assert mine["scope"] == {"name": "alice", "visibility": "private"}
    # a's link to secret resolves for alice only; public callers cannot tell it from a missing one
    view = cli("show", "a", "--scope", "alice", "--visibility", "private", "--json").json
    assert [r["found"] for r in view["connections"]["links_out"]] == [True, True, False]


def test_show_names_the_database_not_a_file_on_sqlite(cli, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    db = env / "m.sqlite"
    cli("remember", "--backend", "sqlite", "--db", str(db), '{"id": "n", "text": "in a database"}')
    view = cli("show", "n", "--backend", "sqlite", "--db", str(db), "--json").json
    [hit] = cli("recall", "database", "--mode", "keyword", "--backend", "sqlite", "--db", str(db), "--json").json[
        "items"
    ]
    assert "path" in hit and hit["path"] is None
    assert view["path"] is None and view["store"] == {"backend": "sqlite", "location": str(db)}
    assert f"sqlite store  {db}" in cli("show", "n", "--backend", "sqlite", "--db", str(db)).out


def test_show_names_the_server_without_its_password(cli, env, monkeypatch, postgres_dsn):
    from psycopg.conninfo import make_conninfo

    from conftest import fresh_database

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    dsn = make_conninfo(fresh_database(postgres_dsn, "t_show_password"), password="hunter2secret")
    server = ["--backend", "postgres", "--dsn", dsn]
    assert cli("remember", *server, '{"id": "n1", "text": "on the server"}').code == 0
    view = cli("show", "n1", *server, "--json")
    assert view.json["store"]["backend"] == "postgres" and view.json["path"] is None
    text = cli("show", "n1", *server).out
    assert "postgres store" in text and "hunter2secret" not in view.out + text


# -- list ---------------------------------------------------------------------------------------


def test_list_pages_filters_and_gives_paths(cli, notes):
    listed = cli("list", "--json").json
    assert listed["total"] == 2 and {i["id"] for i in listed["items"]} == {"a", "b"}
    assert all(i["path"] == str(rec(notes, i["id"])) for i in listed["items"])
    assert cli("list", "--source", "retro", "--json").json["total"] == 1
    assert [i["id"] for i in cli("list", "--filter", "source=retro", "--json").json["items"]] == ["a"]  # a facet
    assert cli("list", "--filter", "source=retr", "--json").json["total"] == 0
    assert cli("list", "--filter", "priority>=2", "--json").json["items"][0]["id"] == "a"
    page = cli("list", "--sort", "name", "--limit", "1", "--offset", "1", "--json").json
    assert [i["id"] for i in page["items"]] == ["b"] and page["total"] == 2  # "Deploy day" < "The deploy..."
    table = cli("list", "--sort", "name", "--limit", "1")
    assert table.out.splitlines()[0].split() == ["ID", "TYPE", "NAME", "/", "TEXT", "UPDATED", "RECALLS"]
    assert "Deploy day" in table.out and "1-1 of 2 (--offset 1 for more)" in table.out and "\x1b" not in table.out
    markdown = cli("list", "--format", "markdown").out
    assert markdown.startswith("| id | type | name / text | updated | recalls |\n|---|")
    assert cli("list", "--json", "--format", "table").code == 1
    assert cli("list", "--sort", "size").code == 1 and cli("list", "--limit", "0").code == 1
    bad = cli("list", "--filter", "nonsense", "--format", "json")
    assert bad.code == 1 and bad.err_json["message"] == "--filter entry 'nonsense' is malformed"
    # listing is not a recall
    assert usage_of(cli, "a") == (0, None)


def test_no_results_names_the_flag_that_shows_them(cli, notes):
    cli("forget", "b")
    assert cli("list", "--filter", "priority>=9").out.strip() == "(no results)"
    out = cli("recall", "rotates", "--mode", "keyword").out
    assert "(no results: 1 archived record matches (--include-archived shows it))" in out
    assert cli("recall", "rotates", "--mode", "keyword", "--json").json["hidden"] == {"archived": 1}
    assert cli("recall", "mondays", "--mode", "keyword", "--format", "table").out.strip() == (
        "(no results: 1 shadowed record matches (--include-shadowed shows it))"
    )
    assert cli("list", "--filter", "priority>=1", "--type", "note", "--json").json["total"] == 1
    assert cli("list", "--json", "--sort", "name", "--type", "none").json == {"items": [], "total": 0}
    # alice's private records are not counted for anyone else
    cli("forget", "secret", "--scope", "alice", "--visibility", "private")
    assert "hidden" not in cli("recall", "alice", "--mode", "keyword", "--json").json
    mine = cli("recall", "alice", "--mode", "keyword", "--scope", "alice", "--visibility", "private", "--json")
    assert mine.json["hidden"] == {"archived": 1}


def test_list_by_lifecycle_lists_only_those_states(cli, notes):
    cli("forget", "b")
    assert ids(cli("list", "--lifecycle", "archived", "--json")) == ["b"]  # what was forgotten, alone
    assert ids(cli("list", "--lifecycle", "shadowed", "--json")) == ["old"]
    both = cli("list", "--lifecycle", "archived", "--lifecycle", "active", "--sort", "name", "--json").json
    assert [i["id"] for i in both["items"]] == ["a", "b"] and both["total"] == 2
    assert (
        cli("list", "--lifecycle", "archived", "--scope", "alice", "--visibility", "private", "--json").json["total"]
        == 1
    )  # still only what the scope may see: alice's private record is active, b is public
    bad = cli("list", "--lifecycle", "deleted", "--json")
    assert bad.code == 1 and "lifecycle must be active, shadowed, archived (got 'deleted')" in bad.err


def test_list_merges_stores_in_order_and_keeps_precedence(cli, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    first, second = env / "first", env / "second"
    cli(
        "remember",
        "--memory-dir",
        str(second),
        stdin=ndjson(*({"id": f"s{i}", "text": f"second {i}"} for i in range(3))),
    )
    cli(
        "remember",
        "--memory-dir",
        str(first),
        stdin=ndjson({"id": "s1", "text": "first copy"}, {"id": "f", "text": "f"}),
    )
    both = ["--memory-dir", str(first), "--memory-dir", str(second)]
    listed = cli("list", *both, "--sort", "name", "--json").json
    assert [(i["id"], i["text"]) for i in listed["items"]] == [
        ("f", "f"),
        ("s1", "first copy"),
        ("s0", "second 0"),
        ("s2", "second 2"),
    ]
    assert listed["total"] == 4 and listed["items"][1]["path"].startswith(str(first))
    page = cli("list", *both, "--sort", "name", "--limit", "2", "--offset", "1", "--json").json
    assert [i["id"] for i in page["items"]] == ["s1", "s0"] and page["total"] == 4
    # a private copy in the first store hides nothing from callers who may not see it
    cli(
        "remember", "--memory-dir", str(first), "--scope", "bob", "--visibility", "private", '{"id": "s0", "text": "b"}'
    )
    assert cli("list", *both, "--json").json["total"] == 4
    assert [i["text"] for i in cli("list", *both, "--sort", "name", "--json").json["items"]][2] == "second 0"


def test_a_page_is_read_from_the_front_of_a_sort_index(env, monkeypatch):
    """The sort keys of the listing SQL and the index expressions of the schema are one: the
    query plan of each page walks its index, it sorts nothing."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    for options in ({"memory_dirs": [env / "files"]}, {"backend": "sqlite", "db": env / "db.sqlite"}):
        with Memory.open(**options) as memory:
            memory.remember([{"id": f"r{i}", "text": f"record {i}", "links": ["r0"]} for i in range(3)])
            conn = memory.stores()[0].index.conn
            executed: list[str] = []
            conn.set_trace_callback(executed.append)
            for sort, index in (("updated", "docs_updated"), ("created", "docs_created"), ("name", "docs_name")):
                executed.clear()
                memory.list_records(sort=sort, limit=2)
                page = next(sql for sql in executed if sql.startswith("SELECT d.doc, d.id,") and "ORDER BY" in sql)
                plan = " ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + page))
                assert f"USING INDEX {index}" in plan and "TEMP B-TREE" not in plan, plan
            conn.set_trace_callback(None)


# -- edit ---------------------------------------------------------------------------------------


def editor(env, body: str, name: str = "editor.py") -> str:
    """A real editor substitute: a script run as $EDITOR with the file to edit."""
    script = env / name
    script.write_text(
        "import sys, pathlib\npath = pathlib.Path(sys.argv[1])\ntext = path.read_text()\n" + textwrap.dedent(body)
    )
    return f"{sys.executable} {script}"


def test_edit_saves_through_the_write_path(cli, notes, env, monkeypatch):
    monkeypatch.setenv("EDITOR", editor(env, "path.write_text(text.replace('Tuesdays', 'Wednesdays'))"))
    run = cli("edit", "a")
    assert run.code == 0 and run.out.strip() == "Saved a.", run.err
    content = rec(notes, "a").read_text()
    assert "Deploys run on Wednesdays\nafter the standup" in content and "id: a" in content
    view = cli("show", "a", "--json").json
    assert view["links"] == ["b", "secret", "gone"] and view["metadata"] == {"source": "retro", "priority": 2}
    assert [i["id"] for i in cli("recall", "wednesdays", "--mode", "keyword", "--json").json["items"]] == ["a", "b"]
    assert not list((env / "tmp").iterdir())  # the copy went


def test_an_unchanged_edit_writes_nothing(cli, notes, env, monkeypatch):
    before = snapshot(notes)
    monkeypatch.setenv("VISUAL", editor(env, "path.write_text(text)"))
    monkeypatch.setenv("EDITOR", "false")  # VISUAL wins
    run = cli("edit", "a", "--json")
    assert run.code == 0 and run.json == {"id": "a", "saved": False}
    assert snapshot(notes) == before


def test_a_broken_edit_is_refused_kept_and_picked_up_again(cli, notes, env, monkeypatch):
    before = snapshot(notes)
    monkeypatch.setenv("EDITOR", editor(env, "path.write_text(text.replace('type: note', 'type: [note'))"))
    run = cli("edit", "a", stdin="")  # not a terminal: nobody to offer another try
    assert run.code == 1 and "not valid YAML" in run.err and snapshot(notes) == before
    kept = re.search(r"your edit is kept in (\S+)", run.err).group(1)
    assert "type: [note" in open(kept).read() and oct(os.stat(kept).st_mode & 0o777) == "0o600"
    assert f"eidetic edit a --from {kept}" in run.err
    monkeypatch.setenv("EDITOR", editor(env, "path.write_text(text.replace('type: [note', 'type: lesson'))", "fix.py"))
    again = cli("edit", "a", "--from", kept)
    assert again.code == 0, again.err
    assert cli("show", "a", "--json").json["type"] == "lesson"


def test_edit_refuses_what_editing_may_not_change(cli, notes, env, monkeypatch):
    for change, message in (
        ("text.replace('id: a', 'id: z')", "the id cannot be changed"),
        ("text.replace('lifecycle: active', 'lifecycle: archived')", "editing cannot change the lifecycle"),
        ("text.replace('name: default', 'name: other')", "cannot move it"),
        ("text.replace('metadata:', 'metdata:')", "unknown record field(s): metdata"),
        ("'---\\n' + text[4:].replace('---\\n', '', 1)", "the edited file is not a record"),
        ("text.split('\\n\\n')[0] + '\\n\\n  \\n'", "'text' is empty"),
    ):
        monkeypatch.setenv("EDITOR", editor(env, f"path.write_text({change})"))
        run = cli("edit", "a", "--json", stdin="")
        assert run.code == 1 and message in run.err_json["message"], (change, run.err)
        assert "kept in" in run.err_json["message"]
    assert cli("show", "a", "--json").json["text"] == "Deploys run on Tuesdays\nafter the standup"


def test_edit_offers_another_try_on_a_terminal(cli, notes, env, monkeypatch):
    counter = env / "runs"
    monkeypatch.setenv(
        "EDITOR",
        editor(
            env,
            f"""
            runs = pathlib.Path({str(counter)!r})
            n = int(runs.read_text()) if runs.exists() else 0
            runs.write_text(str(n + 1))
            path.write_text(text.replace('id: a', 'id: zz') if n == 0 else text.replace('id: zz', 'id: a').replace('Tuesdays', 'Fridays'))
            """,
        ),
    )
    out = in_terminal("edit", "a", typed="y\n")
    assert "the id cannot be changed" in out and "Edit again? [y/N]" in out and "Saved a." in out
    assert counter.read_text() == "2" and "Fridays" in cli("show", "a", "--json").json["text"]


def test_edit_never_overwrites_a_change_made_meanwhile(cli, notes, env, monkeypatch):
    other = f"{sys.executable} -m eidetic remember '{json.dumps({'id': 'a', 'text': 'changed meanwhile'})}'"
    monkeypatch.setenv(
        "EDITOR",
        editor(
            env, f"import subprocess\nsubprocess.run({other!r}, shell=True, check=True)\npath.write_text(text + 'x')"
        ),
    )
    run = cli("edit", "a", stdin="")
    assert run.code == 1 and "changed (or went) while it was being edited" in run.err
    assert cli("show", "a", "--json").json["text"] == "changed meanwhile"


def test_edit_in_a_coding_agents_folder_keeps_its_layout(cli, env, monkeypatch):
    folder = env / "memory"
    folder.mkdir()
    (folder / "deploy_steps.md").write_text(
        "---\nname: deploy steps\ndescription: Before a deploy\ntype: feedback\n---\nDry-run first.\n"
    )
    (folder / "MEMORY.md").write_text("- [deploy steps](deploy_steps.md): Before a deploy\n")
    shown = cli("show", "deploy_steps", "--memory-dir", str(folder), "--json").json
    assert shown["path"] == str(folder / "deploy_steps.md") and shown["description"] == "Before a deploy"
    monkeypatch.setenv("EDITOR", editor(env, "path.write_text(text.replace('Before a deploy', 'Before every deploy'))"))
    assert cli("edit", "deploy_steps", "--memory-dir", str(folder)).code == 0
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md", "deploy_steps.md"]  # no hash folders
    assert "Before every deploy" in (folder / "MEMORY.md").read_text()
    assert 'description: "Before every deploy"' in (folder / "deploy_steps.md").read_text()


def test_edit_on_sqlite_and_editor_failures(cli, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    db = ["--backend", "sqlite", "--db", str(env / "m.sqlite")]
    cli("remember", *db, '{"id": "n1", "text": "first", "metadata": {"k": 1}}')
    monkeypatch.setenv(
        "EDITOR",
        editor(env, "assert text.startswith('---\\nid: n1\\n')\npath.write_text(text.replace('first', 'second'))"),
    )
    assert cli("edit", "n1", *db).code == 0
    assert cli("show", "n1", *db, "--json").json["text"] == "second"
    monkeypatch.setenv("EDITOR", "false")
    assert "exited with status 1; nothing was saved" in cli("edit", "n1", *db).err
    monkeypatch.setenv("EDITOR", str(env / "no-such-editor"))
    assert cli("edit", "n1", *db).code == 2
    assert cli("edit", "nope", *db).code == 1


# -- usage: what counts as a recall -------------------------------------------------------------


def _hit(rid: str, score: float, tier: str = "primary", depth: int = 0, parent: str | None = None) -> Hit:
    return Hit(Record(id=rid, text=rid), score, 0.5, tier=tier, depth=depth, parent=parent, store="s")


def test_only_hits_near_the_best_count_and_what_they_lead_to():
    hits = [
        _hit("best", 1.0),
        _hit("near", 0.6),
        _hit("filler", 0.3),
        _hit("via-best", 0.5, "traversal", 1, "best"),
        _hit("via-filler", 0.15, "traversal", 1, "filler"),
        _hit("two-hops", 0.25, "traversal", 2, "via-best"),
    ]
    assert reinforce.used(hits) == {("s", "best"): 1, ("s", "near"): 1, ("s", "via-best"): 0.5, ("s", "two-hops"): 0.25}
    assert len(reinforce.used(hits, within=None)) == 6
    assert reinforce.used([_hit("x", -0.1), _hit("y", -0.2)]) == {}
    # a semantic ranking: only the best hit, and what it leads to
    assert reinforce.used(hits, best_only=True) == {("s", "best"): 1, ("s", "via-best"): 0.5, ("s", "two-hops"): 0.25}


def test_hybrid_recall_counts_only_its_best_hit(cli, store):
    cli(
        "remember",
        stdin=ndjson(
            {"id": "cat", "text": "The cat sleeps on the warm sofa"},
            {"id": "tax", "text": "File the quarterly tax return"},
            {"id": "rust", "text": "The borrow checker rejected the code"},
        ),
    )
    found = cli("recall", "a kitten napping", "--mode", "hybrid", "--top-k", "3", "--json").json
    assert found["embedder"]["online"] and [i["id"] for i in found["items"]][0] == "cat" and len(found["items"]) >= 2
    assert [usage_of(cli, rid)[0] for rid in ("cat", "tax", "rust")] == [1, 0, 0]


def test_browsing_a_type_is_not_a_recall(env, monkeypatch):
    folder = env / "memory"
    folder.mkdir()
    (folder / "tip.md").write_text("---\nname: tip\ntype: feedback\n---\nAlways run the linter.\n")
    with Memory.open([folder]) as memory:
        memory.recall("", mode="fields", types=["feedback"])
        memory.recall("linter", mode="fields")
        [item] = memory.list_records().items
        assert item.recall_count == 1


def test_weak_keyword_hits_are_not_reinforced(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    filler = " ".join(f"word{i}" for i in range(200))
    cli(
        "remember",
        stdin=ndjson({"id": "strong", "text": "walrus walrus walrus"}, {"id": "weak", "text": f"walrus {filler}"}),
    )
    scores = {i["id"]: i["score"] for i in cli("recall", "walrus", "--mode", "keyword", "--json").json["items"]}
    assert scores["weak"] < 0.5 * scores["strong"]
    assert usage_of(cli, "strong")[0] == 1 and usage_of(cli, "weak") == (0, None)


# -- formats and colour, in a real terminal -----------------------------------------------------


def in_terminal(*args: str, columns: int = 80, typed: str = "", **environ: str) -> str:
    """What ``eidetic ARGS`` shows on a terminal ``columns`` wide (TERM xterm, no NO_COLOR)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    run = run_on_terminal(*args, env={**env, "TERM": "xterm-256color", **environ}, columns=columns, typed=typed)
    assert run.code == 0, run.out
    return run.out


@pytest.mark.slow
def test_terminal_output_is_a_coloured_table_that_fits(cli, notes):
    hostile = {"id": "long-" + "x" * 60, "text": "evil \x1b]0;pwned\x07 text \x1b[2J gone " + "word " * 30}
    cli("remember", json.dumps(hostile))
    out = in_terminal("list", columns=60)
    assert "\x1b[1mID" in out and "\x1b[36ma\x1b[0m" in out  # bold header, cyan ids
    plain = ESC.sub("", out)
    assert all(len(line) <= 60 for line in plain.splitlines()), plain
    assert "…" in plain and "\x07" not in out and "\x1b]" not in out and "\x1b[2J" not in out
    shown = in_terminal("show", hostile["id"])
    assert "evil \\x1b]0;pwned\\x07 text \\x1b[2J gone" in shown and "\x07" not in shown
    recalled = in_terminal("recall", "deploys", "--mode", "keyword")
    assert "\x1b[1mSCORE" in recalled and "Deploy day" in ESC.sub("", recalled)
    for quiet in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        assert "\x1b[" not in in_terminal("list", **quiet)


def test_piped_output_has_no_escape_codes(notes):
    from conftest import run_process

    for args in (("list",), ("recall", "deploys", "--mode", "keyword"), ("show", "a")):
        run = run_process(*args, env=dict(os.environ, TERM="xterm-256color"))
        assert run.code == 0 and run.out and "\x1b" not in run.out, run.err
        if args[0] == "recall":  # a pipe gets every field in full, as agents read it
            assert run.out.startswith("query: deploys") and "text: Deploys run on Tuesdays" in run.out
