from __future__ import annotations

import json

from conftest import rec, snapshot

from eidetic import Memory
from eidetic.frontmatter import parse


def ndjson(*records):
    return "".join(json.dumps(r) + "\n" for r in records)


def test_remember_one_json_argument(cli, store):
    run = cli("remember", '{"id": "n1", "text": "Deploys run on Tuesdays", "metadata": {"source": "chat"}}', "--json")
    assert run.code == 0, run.err
    assert run.json == {
        "upserted": 1,
        "ids": ["n1"],
        "duplicates": [],
        "records": [
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
    assert [(r["id"], r["status"]) for r in run.json["records"]] == [("n1", "unchanged")]
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
