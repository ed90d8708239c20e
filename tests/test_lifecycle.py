from __future__ import annotations

import json
from datetime import datetime, timezone

from conftest import rec

from eidetic.frontmatter import parse
from eidetic.lifecycle import Usage, plan_sweep
from eidetic.records import Record, Scope

NOW = datetime(2026, 6, 20, 12, tzinfo=timezone.utc)
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
        }
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
