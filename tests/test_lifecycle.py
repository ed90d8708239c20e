from __future__ import annotations

import json
from datetime import UTC, datetime

from conftest import rec
from eidetic.frontmatter import parse
from eidetic.lifecycle import Usage, plan_sweep
from eidetic.records import Record, Scope

NOW = datetime(2026, 6, 20, 12, tzinfo=UTC)
RECENT = "2026-06-19T12:00:00+00:00"


def r(rid, created=RECENT, **kw):
    return Record(id=rid, text=kw.pop("text", rid), created=created, **kw)


def test_same_scope_supersedes_shadows_only_the_old_record():
    records = [
        r("new", supersedes="old"),
        r("old"),
        r("x", supersedes="y", scope=Scope("a", "private")),
        r("y"),
        r("p", supersedes="q"),
        r("q", metadata={"protected": True}),
        r("d", supersedes="missing"),
    ]
    plan = plan_sweep(records, {}, NOW)
    assert plan.changes == {"old": "shadowed"} and plan.shadowed == 1


def test_supersedes_cycles_shadow_nothing():
    plan = plan_sweep([r("a", supersedes="b"), r("b", supersedes="a")], {}, NOW)
    assert plan.changes == {}


def test_archive_by_age_and_by_signal():
    records = [
        r("old", created="2025-06-01T00:00:00+00:00"),
        r("fresh"),
        r("weak", created="2026-02-01T00:00:00+00:00"),
        r("used", created="2026-02-01T00:00:00+00:00"),
        r("undated", created="date-unknown"),
        r("kept", created="2024-01-01T00:00:00+00:00", metadata={"protected": "yes"}),
        r("shadow", created="2024-01-01T00:00:00+00:00", lifecycle="shadowed"),
    ]
    usage = {"used": Usage(10, "2026-06-19T00:00:00+00:00")}
    plan = plan_sweep(records, usage, NOW)
    assert plan.changes == {"old": "archived", "weak": "archived"}
    assert plan.archived == 2


def test_suggestions_pair_same_scope_same_text_only():
    records = [
        r("a", text="Same words"),
        r("b", text=" same WORDS "),
        r("c", text="same words", scope=Scope("x", "private")),
        r("d", text="other"),
    ]
    plan = plan_sweep(records, {}, NOW)
    assert plan.suggestions == [
        {
            "reason": "same-scope text overlap (possible conflict)",
            "ids": ["a", "b"],
            "scope": {"name": "default", "visibility": "public"},
            "keep": "a",
            "commands": ["eidetic forget b"],
        }
    ]


def test_suggestions_keep_the_earliest_and_quote_what_a_shell_would_misread():
    private = Scope("me", "private")
    records = [
        r("-late one", text="twin", scope=private, created="2026-06-19T13:00:00+00:00"),
        r("early", text="twin", scope=private, created="2026-06-01T00:00:00+00:00"),
        r("undated", text="twin", scope=private, created="date-unknown"),
    ]
    (suggestion,) = plan_sweep(records, {}, NOW).suggestions
    assert suggestion["keep"] == "early"
    assert suggestion["commands"] == [
        "eidetic forget --scope me --visibility private -- '-late one'",
        "eidetic forget --scope me --visibility private undated",
    ]


def test_sweep_cli_dry_run_now_and_undo(cli, store):
    lines = [
        {"id": "new", "text": "standup 9:30", "supersedes": "old", "created": "2026-06-01T00:00:00+00:00"},
        {"id": "old", "text": "standup 9:00", "created": "2026-06-01T00:00:00+00:00"},
        {"id": "ancient", "text": "ancient note", "created": "2024-01-01T00:00:00+00:00"},
        {
            "id": "safe",
            "text": "ancient but protected",
            "created": "2024-01-01T00:00:00+00:00",
            "metadata": {"protected": True},
        },
    ]
    cli("remember", stdin="".join(json.dumps(x) + "\n" for x in lines))
    dry = cli("sweep", "--dry-run", "--now", "2026-06-10T00:00:00Z", "--json").json
    assert dry["changed"] == [{"id": "ancient", "lifecycle": "archived"}] and dry["dry_run"] is True
    assert parse(rec(store, "ancient").read_text(), "x").lifecycle == "active"
    done = cli("sweep", "--now", "2026-06-10T00:00:00Z", "--json").json
    assert done["archived"] == 1 and done["scanned"] == 4
    assert done["changed"] == [{"id": "ancient", "lifecycle": "archived", "undo": "eidetic restore ancient"}]
    assert parse(rec(store, "ancient").read_text(), "x").lifecycle == "archived"
    assert parse(rec(store, "old").read_text(), "x").lifecycle == "shadowed"  # at remember time
    assert sorted(p.stem for p in store.rglob("*.md")) == ["ancient", "new", "old", "safe"]  # never deletes
    assert [i["id"] for i in cli("recall", "ancient", "--mode", "keyword", "--json").json["items"]] == ["safe"]
    assert cli("restore", "ancient", "--json").json == {"id": "ancient", "lifecycle": "active", "previous": "archived"}
    assert [i["id"] for i in cli("recall", "ancient note", "--mode", "keyword", "--json").json["items"]][0] == "ancient"
    assert cli("forget", "ancient", "--json").json["lifecycle"] == "archived"
    assert cli("sweep", "--now", "bad", "--json").code == 1
    text = cli("sweep", "--dry-run")
    assert "Scanned 4 record(s)." in text.out and "dry-run" in text.out


def test_forget_respects_scope_and_purge_needs_confirmation(cli, store):
    cli("remember", '{"id": "secret", "text": "api key abc123"}', "--scope", "me", "--visibility", "private")
    hidden = cli("forget", "secret", "--json")
    missing = cli("forget", "nothing-here", "--json")
    assert hidden.code == missing.code == 1
    assert hidden.err_json["message"].replace("secret", "X") == missing.err_json["message"].replace("nothing-here", "X")
    refused = cli("forget", "secret", "--purge", "--scope", "me", "--visibility", "private", "--json")
    assert refused.code == 1 and "--yes" in refused.err_json["remediation"]
    assert rec(store, "secret").exists()
    wrong = cli("forget", "secret", "--purge", "--scope", "me", "--visibility", "private", stdin=None)
    assert wrong.code == 1 and "not confirmed" in wrong.err and rec(store, "secret").exists()
    cli("recall", "api key", "--mode", "keyword", "--scope", "me", "--visibility", "private")
    gone = cli("forget", "secret", "--purge", "--yes", "--scope", "me", "--visibility", "private", "--json")
    assert gone.json["purged"] is True and not rec(store, "secret").exists()
    assert (
        cli(
            "recall",
            "abc123",
            "--mode",
            "exact",
            "--scope",
            "me",
            "--visibility",
            "private",
            "--include-archived",
            "--json",
        ).json["items"]
        == []
    )


def test_the_commands_sweep_names_resolve_what_it_reports(cli, env):
    """Run each suggested command as printed (with this store's flags) and see it do its job."""
    import shlex

    where = ["--memory-dir", str(env / "notes")]
    texts = ("Deploy on Tuesdays", "deploy on tuesdays", " Deploy on TUESDAYS ")  # one text, told apart
    twins = [{"id": f"twin-{n}", "text": text, "created": f"2026-06-0{n}"} for n, text in enumerate(texts, 1)]
    twins.append({"id": "old", "text": "an old note", "created": "2024-01-01"})
    mine = ("--scope", "me", "--visibility", "private")
    assert cli("remember", *where, *mine, stdin="".join(json.dumps(x) + "\n" for x in twins)).code == 0
    report = cli("sweep", *where, *mine, "--now", "2026-06-10T00:00:00Z", "--json").json
    (change,) = report["changed"]
    assert change["undo"] == f"eidetic restore --memory-dir {env / 'notes'} --scope me --visibility private old"
    (suggestion,) = report["suggestions"]
    assert suggestion["keep"] == "twin-1" and len(suggestion["commands"]) == 2
    shown = cli("sweep", *where, *mine, "--dry-run", "--now", "2026-06-10T00:00:00Z").out
    assert f"    to keep twin-1: {suggestion['commands'][0]}" in shown.splitlines()
    for command in [change["undo"], *suggestion["commands"]]:
        words = shlex.split(command)
        assert words[0] == "eidetic" and cli(*words[1:]).code == 0, command
    states = {d["id"]: d["lifecycle"] for d in map(json.loads, cli("export", *where, *mine).out.splitlines())}
    assert states == {"twin-1": "active", "twin-2": "archived", "twin-3": "archived", "old": "active"}
    text = cli("sweep", *where, *mine, "--dry-run", "--now", "2026-06-10T00:00:00Z").out
    assert "Suggestions" not in text and "old -> archived" in text  # resolved; and old would go again
