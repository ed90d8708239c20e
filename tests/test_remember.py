from __future__ import annotations

import json
import os

import pytest

from conftest import ndjson, rec, snapshot
from eidetic import Memory
from eidetic.frontmatter import parse


@pytest.fixture
def postgres_password_dsn(backend, monkeypatch):
    """The test server's DSN with a password in it (the server trusts its socket: it is unused);
    for neo4j, the graph server's URI with its password in it (the only one given)."""
    if backend == "neo4j":
        password = os.environ["EIDETIC_NEO4J_PASSWORD"]
        monkeypatch.delenv("EIDETIC_NEO4J_PASSWORD")
        return os.environ["EIDETIC_NEO4J_URI"].replace("bolt://", f"bolt://root:{password}@")
    if backend != "postgres":
        return ""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(os.environ["EIDETIC_PG_DSN"], password="s3cret-pw")


def test_remember_one_json_argument(cli, store):
    run = cli("remember", '{"id": "n1", "text": "Deploys run on Tuesdays", "metadata": {"source": "chat"}}', "--json")
    assert run.code == 0, run.err
    assert run.json == {
        "upserted": 1,
        "ids": ["n1"],
        "duplicates": [],
        "items": [
            {"id": "n1", "status": "new", "backend": "files", "store": str(store), "path": str(rec(store, "n1"))}
        ],
    }
    record = parse(rec(store, "n1").read_text(), "x")
    assert record.text == "Deploys run on Tuesdays"
    assert record.metadata == {"source": "chat"}
    assert record.created.startswith("20")


def test_ndjson_batch_and_text_output(cli, store):
    run = cli("remember", stdin=ndjson({"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}))
    assert run.code == 0
    assert run.out.splitlines() == [
        f"new        a  {rec(store, 'a')}",
        f"new        b  {rec(store, 'b')}",
        "2 record(s): 2 new.",
    ]
    assert sorted(p.name for p in store.rglob("*.md")) == ["a.md", "b.md"]


def test_bad_line_aborts_the_whole_batch(cli, store):
    good = json.dumps({"id": "a", "text": "alpha"})
    for bad, fragment in [
        ("{not json", "line 3: invalid JSON"),
        (
            json.dumps({"id": "c", "text": "x", "scope": {"name": "s", "visibility": "secret"}}),
            "line 3: unknown visibility",
        ),
        (json.dumps({"id": "c"}), "line 3: 'text' must be a string"),
    ]:
        run = cli("remember", "--json", stdin=f"{good}\n\n{bad}\n{good}\n")
        assert run.code == 1
        assert fragment in run.err_json["message"]
        assert run.out == ""
        assert not store.exists() or not list(store.rglob("*.md"))


def test_upsert_keeps_created_lifecycle_and_usage(cli, store):
    cli("remember", '{"id": "n1", "text": "first", "created": "2025-01-01T00:00:00+00:00"}')
    cli("recall", "first", "--mode", "keyword")
    rec(store, "n1").write_text(rec(store, "n1").read_text().replace("lifecycle: active", "lifecycle: archived"))
    run = cli("remember", '{"id": "n1", "text": "second version"}', "--json")
    assert run.json["ids"] == ["n1"]
    record = parse(rec(store, "n1").read_text(), "x")
    assert record.text == "second version"
    assert record.created == "2025-01-01T00:00:00+00:00"
    assert record.lifecycle == "archived"
    assert record.updated is not None
    hit = cli("recall", "second", "--mode", "keyword", "--include-archived", "--json").json["items"][0]
    assert hit["recall_count"] == 1


def test_re_remembering_identical_record_writes_nothing(cli, store):
    cli("remember", '{"id": "n1", "text": "same"}')
    before = snapshot(store)
    run = cli("remember", '{"id": "n1", "text": "same"}', "--json")
    assert (run.json["upserted"], run.json["ids"], run.json["duplicates"]) == (1, ["n1"], [])
    assert [(r["id"], r["status"]) for r in run.json["items"]] == [("n1", "unchanged")]
    assert snapshot(store) == before


def test_identical_text_under_new_id_is_reported_not_written(cli, store):
    cli("remember", '{"id": "orig", "text": "the same words"}')
    before = snapshot(store)
    run = cli(
        "remember",
        "--json",
        stdin=ndjson(
            {"id": "copy", "text": "the same words"}, {"id": "x1", "text": "fresh"}, {"id": "x2", "text": "fresh"}
        ),
    )
    assert run.json["duplicates"] == [{"id": "copy", "duplicate_of": "orig"}, {"id": "x2", "duplicate_of": "x1"}]
    assert run.json["ids"] == ["x1"]
    assert rec(store, "orig").exists() and not rec(store, "copy").exists()
    assert snapshot(store)["orig.md"] == before["orig.md"]


def test_same_text_in_another_scope_is_not_a_duplicate(cli, store):
    cli("remember", '{"id": "a", "text": "shared words"}')
    run = cli("remember", '{"id": "b", "text": "shared words"}', "--scope", "team", "--json")
    assert run.json["duplicates"] == []
    assert run.json["ids"] == ["b"]


def test_scope_visibility_and_added_by_flags(cli, store):
    run = cli(
        "remember",
        '{"id": "p", "text": "private note"}',
        "--scope",
        "lobes",
        "--visibility",
        "private",
        "--added-by",
        "ana",
        "--json",
    )
    assert run.code == 0
    record = parse(rec(store, "p").read_text(), "x")
    assert (record.scope.name, record.scope.visibility, record.added_by) == ("lobes", "private", "ana")
    bad = cli("remember", '{"id": "q", "text": "x"}', "--visibility", "secret", "--json")
    assert bad.code == 1 and "unknown visibility" in bad.err_json["message"]
    assert not rec(store, "q").exists()


def test_added_by_defaults_to_culture_yaml_nick(cli, store, env):
    (env / "work" / "culture.yaml").write_text("agents:\n  - suffix: lobes\n    backend: claude\n")
    cli("remember", '{"id": "n", "text": "x"}')
    assert parse(rec(store, "n").read_text(), "x").added_by == "lobes"


def test_moving_a_record_to_another_scope_is_refused(cli, store):
    cli("remember", '{"id": "n", "text": "x"}')
    before = snapshot(store)
    run = cli("remember", '{"id": "n", "text": "y"}', "--scope", "other", "--visibility", "private", "--json")
    assert run.code == 1 and "cannot move" in run.err_json["message"]
    assert snapshot(store) == before


def test_text_size_limit_is_configurable_and_nothing_written(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_MAX_TEXT_BYTES", "10")
    run = cli("remember", "--json", stdin=ndjson({"id": "ok", "text": "short"}, {"id": "big", "text": "x" * 11}))
    assert run.code == 1 and "line 2" in run.err_json["message"] and "over the limit" in run.err_json["message"]
    assert not store.exists()


def test_supersedes_shadows_same_scope_record_at_once(cli, store):
    cli("remember", '{"id": "old", "text": "standup at 9"}')
    cli("remember", '{"id": "new", "text": "standup at 9:30", "supersedes": "old"}')
    assert parse(rec(store, "old").read_text(), "x").lifecycle == "shadowed"
    ids = [i["id"] for i in cli("recall", "standup", "--mode", "keyword", "--json").json["items"]]
    assert ids == ["new"]
    cli("remember", '{"id": "other", "text": "standup elsewhere", "supersedes": "new"}', "--scope", "team")
    assert parse(rec(store, "new").read_text(), "x").lifecycle == "active"


def test_hostile_ids_stay_inside_the_store(cli, store, env):
    run = cli(
        "remember",
        "--json",
        stdin=ndjson(
            {"id": "../../escape", "text": "a"}, {"id": "/etc/passwd", "text": "b"}, {"id": "MEMORY", "text": "c"}
        ),
    )
    assert run.code == 0
    files = [p for p in env.rglob("*.md")]
    assert all(store in p.parents for p in files)
    assert len(list(store.rglob("*.md"))) == 3 and not list(store.rglob("MEMORY.md"))
    found = cli("recall", "c", "--mode", "exact", "--json").json["items"]
    assert "MEMORY" in [i["id"] for i in found]


def test_python_api_remember_and_recall(store):
    with Memory.open() as memory:
        result = memory.remember([{"id": "api", "text": "called from Python"}])
        assert result.ids == ["api"]
        hits = memory.recall("python", mode="keyword").items
        assert [h.record.id for h in hits] == ["api"]


# -- plain text -----------------------------------------------------------------------------


def test_plain_text_is_a_record_with_a_stable_generated_id(cli, store):
    from eidetic.records import Scope, derived_id

    run = cli("remember", "Never deploy on Fridays")
    rid = derived_id(Scope(), "Never deploy on Fridays")
    assert run.code == 0, run.err
    assert run.out == f"new        {rid}  {rec(store, rid)}\n"
    assert parse(rec(store, rid).read_text(), "x").text == "Never deploy on Fridays"
    again = cli("remember", "Never deploy on Fridays", "--json")
    assert again.json["items"] == [
        {"id": rid, "status": "unchanged", "backend": "files", "store": str(store), "path": str(rec(store, rid))}
    ]
    mine = cli("remember", "Never deploy on Fridays", "--scope", "me", "--visibility", "private", "--json").json
    assert mine["ids"] == [derived_id(Scope("me", "private"), "Never deploy on Fridays")] != [rid]


def test_text_takes_its_fields_from_flags_typed_as_filters_read_them(cli, store):
    run = cli(
        "remember",
        "Rotate the deploy key monthly",
        *("--id", "key-rotation", "--type", "lesson", "--name", "key rotation", "--description", "when keys change"),
        *("--meta", "priority=2", "--meta", "ratio=0.5", "--meta", "done=true", "--meta", "source=retro"),
        *("--meta", "tag=ops", "--meta", "tag=security", "--meta", 'code="7"', "--meta", "empty=", "--meta", "a=b=c"),
        *("--link", "deploy-day", "--link", "vault"),
        "--json",
    )
    assert run.code == 0, run.err
    record = parse(rec(store, "key-rotation").read_text(), "x")
    assert (record.type, record.name, record.description) == ("lesson", "key rotation", "when keys change")
    assert record.metadata == {
        "priority": 2,
        "ratio": 0.5,
        "done": True,
        "source": "retro",
        "tag": ["ops", "security"],  # a key given twice holds both values
        "code": "7",
        "empty": "",
        "a": "b=c",
    }
    assert record.links == ["deploy-day", "vault"]
    for facet in ("priority>=2", "done=true", "tag=security", "code=7", "source=retro"):
        found = cli("recall", "deploy key", "--mode", "keyword", "--filter", facet, "--json").json["items"]
        assert [i["id"] for i in found] == ["key-rotation"], facet
    newer = cli("remember", "Rotate the deploy key weekly", "--id", "key-weekly", "--supersedes", "key-rotation")
    assert newer.out.splitlines() == [
        f"new        key-weekly  {rec(store, 'key-weekly')}",
        "           supersedes key-rotation, now shadowed",
    ]
    assert parse(rec(store, "key-rotation").read_text(), "x").lifecycle == "shadowed"


def test_what_happened_to_each_record_of_a_batch(cli, store):
    cli("remember", '{"id": "kept", "text": "kept as it is"}')
    cli("remember", '{"id": "edited", "text": "first words"}')
    run = cli(
        "remember",
        stdin=ndjson(
            {"id": "kept", "text": "kept as it is"},
            {"id": "edited", "text": "second words"},
            {"id": "fresh", "text": "brand new"},
            {"id": "copy", "text": "kept as it is"},
        ),
    )
    assert run.code == 0, run.err
    assert run.out.splitlines() == [
        f"unchanged  kept  {rec(store, 'kept')}",
        f"updated    edited  {rec(store, 'edited')}",
        f"new        fresh  {rec(store, 'fresh')}",
        f"duplicate  copy: same text as kept, not written ({rec(store, 'kept')})",
        "4 record(s): 1 new, 1 updated, 1 unchanged, 1 duplicate.",
    ]
    assert not rec(store, "copy").exists()


def test_a_long_batch_lists_fifty_and_counts_the_rest(cli, store):
    # --no-embed: by meaning "note 1" and "note 2" are near-duplicates, whose lines would add to the count
    run = cli("remember", "--no-embed", stdin=ndjson(*({"id": f"n{i:03}", "text": f"note {i}"} for i in range(60))))
    lines = run.out.splitlines()
    assert len(lines) == 52 and lines[-2:] == ["... and 10 more (--json lists every record)", "60 record(s): 60 new."]
    assert len(cli("remember", "--json", stdin=ndjson({"id": "n059", "text": "note 59"})).json["items"]) == 1


def test_where_a_record_lives_on_a_database_never_shows_a_password(backend, cli, env, postgres_password_dsn):
    flags = {"postgres": ["--dsn", postgres_password_dsn], "neo4j": ["--uri", postgres_password_dsn]}.get(backend, [])
    run = cli("remember", "Backups run nightly", "--id", "b1", *flags, "--json")
    assert run.code == 0, run.err
    (entry,) = run.json["items"]
    if backend == "files":
        assert entry["path"] == str(rec(env / "store", "b1")) and entry["store"] == str(env / "store")
        return
    assert entry["backend"] == backend and entry["path"] is None
    text = cli("remember", "Backups run nightly", "--id", "b1", *flags).out
    if backend == "sqlite":
        assert entry["store"] == str(env / "db" / "memory.sqlite")
        assert text == f"unchanged  b1  sqlite {env / 'db' / 'memory.sqlite'}\n"
    else:
        secret = "s3cret" if backend == "postgres" else "eidetic-test-root"
        assert entry["store"].startswith(("postgres://", "bolt://")) and secret not in run.out + text
        assert text == f"unchanged  b1  {backend} {entry['store']}\n"


def test_json_arguments_and_flags_are_told_apart_safely(cli, store):
    bad = cli("remember", '{"text": "unfinished"', "--json")
    assert bad.code == 1 and bad.err_json["message"].startswith("the argument starts with '{' but is not a JSON object")
    assert "--text" in bad.err_json["remediation"]
    braces = cli("remember", "--text", "{name} is a template placeholder", "--id", "tpl", "--json")
    assert braces.code == 0 and parse(rec(store, "tpl").read_text(), "x").text == "{name} is a template placeholder"
    assert cli("remember", "[1, 2] is a list", "--id", "lst").code == 0  # only '{' announces JSON
    for args, stdin in (
        (('{"text": "json"}', "--type", "lesson"), None),
        (("--name", "n", "--meta", "k=v"), ndjson({"text": "from stdin"})),
        (("text", "--text", "again"), None),
        (("text", "--meta", "novalue"), None),
        (("text", "--meta", "=3"), None),
        (("",), None),
        (("   ",), None),
    ):
        before = snapshot(store)
        run = cli("remember", *args, "--json", stdin=stdin)
        assert run.code == 1 and run.err_json["remediation"], (args, run.err)
        assert snapshot(store) == before, args
    flags = cli("remember", '{"text": "json"}', "--type", "lesson", "--link", "x", "--json").err_json
    assert flags["message"] == "--type, --link: only with a text argument, not with a JSON record"
