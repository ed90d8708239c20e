"""Near-duplicates reported at write time: ``similar_to``, ``--on-similar write|skip|supersede``,
in the record's own scope only, on every backend."""

from __future__ import annotations

import pytest

from conftest import mcp_tools, ndjson
from eidetic import Memory

# Close in meaning for the real model (cosine ~0.95), and a text that is not.
BACKUP = "The staging database is backed up every night at 2am"
BACKUP_AGAIN = "Every night at 2am the staging database gets backed up"
NIGHT = "Each night at 2am we back up the staging database"  # ~0.91 to both
CAT = "The cat sleeps on the sofa all afternoon"


def _item(run, rid: str) -> dict:
    assert run.code == 0, run.err
    return next(item for item in run.json["items"] if item["id"] == rid)


def test_normalised_text_is_similar_and_still_written(cli, backend):
    assert cli("remember", "--id", "a", "Use  uv, not pip!", "--json").code == 0
    run = cli("remember", "--json", stdin=ndjson({"id": "b", "text": "use UV not pip"}, {"id": "c", "text": CAT}))
    b = _item(run, "b")
    assert b["status"] == "new" and b["similar_to"] == [{"id": "a", "score": 1.0, "rule": "text"}]
    assert "similar_to" not in _item(run, "c")  # a different text is not reported
    assert run.json["ids"] == ["b", "c"]
    assert {i["id"] for i in cli("list", "--json").json["items"]} == {"a", "b", "c"}


def test_within_one_batch_and_text_output(cli, backend):
    run = cli(
        "remember", stdin=ndjson({"id": "x", "text": "Tabs, not spaces."}, {"id": "y", "text": "tabs not spaces"})
    )
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[1].startswith("new        y") and lines[2].strip() == "similar to x (1.00)"
    assert lines[-1] == "2 record(s): 2 new."


def test_skip_leaves_it_out_and_names_the_record(cli, backend):
    cli("remember", "--id", "a", "Deploys run on Tuesdays.")
    run = cli("remember", "--id", "b", "deploys run on tuesdays", "--on-similar", "skip", "--json")
    assert run.json["upserted"] == 0 and run.json["ids"] == []
    item = _item(run, "b")
    assert item["status"] == "similar" and item["similar_to"][0]["id"] == "a"
    assert item["backend"] == backend  # where the record it repeats lives
    assert [i["id"] for i in cli("list", "--json").json["items"]] == ["a"]
    text = cli("remember", "--id", "b", "DEPLOYS run on Tuesdays", "--on-similar", "skip")
    assert text.out.splitlines()[0].startswith("similar    b: close to a (1.00), not written (")


def test_supersede_shadows_the_closest(cli, backend):
    cli("remember", "--id", "old", "Release notes live in docs/releases.md")
    run = cli(
        "remember", "--id", "new", "release notes live in docs/releases.md!", "--on-similar", "supersede", "--json"
    )
    item = _item(run, "new")
    assert item["status"] == "new" and item["shadowed"] == "old"
    shown = cli("show", "old", "--json").json
    assert shown["lifecycle"] == "shadowed"  # kept, not deleted
    assert [i["id"] for i in cli("list", "--json").json["items"]] == ["new"]


def test_an_update_is_not_similar_to_itself(cli, backend):
    cli("remember", "--id", "a", "Lint with ruff")
    run = cli("remember", "--id", "a", "Lint with ruff.", "--json")
    assert run.json["items"][0]["status"] == "updated" and "similar_to" not in run.json["items"][0]


def test_only_the_same_scope_counts(cli, backend):
    """Another scope's private record is never named nor counted, and private and public copies
    of one scope name are different scopes, both ways."""
    cli("remember", "--id", "secret", "Rotate the vault key on Mondays", "--scope", "bob", "--visibility", "private")
    cli("remember", "--id", "pub", "Lint runs before every commit", "--scope", "team")
    cli("remember", "--id", "priv", "Coffee is on the third floor", "--scope", "team", "--visibility", "private")
    for args in (
        ("--id", "m1", "rotate the vault key on mondays", "--scope", "alice", "--visibility", "private"),
        ("--id", "m2", "rotate the vault key on mondays", "--scope", "bob"),  # bob/public
        ("--id", "m3", "lint runs before every commit", "--scope", "team", "--visibility", "private"),
        ("--id", "m4", "coffee is on the third floor", "--scope", "team"),  # team/public
    ):
        run = cli("remember", *args, "--on-similar", "skip", "--json")
        assert run.json["items"][0]["status"] == "new" and "similar_to" not in run.json["items"][0]
        assert "secret" not in run.out and "priv" not in run.out.replace(args[1], "")
    same = cli(
        "remember", "--id", "m5", "Rotate the vault key on Mondays!", "--scope", "bob", "--visibility", "private"
    )
    assert "similar to secret (1.00)" in same.out  # the owner of the scope is told


def test_bad_on_similar_value(cli, backend):
    run = cli("remember", "--id", "a", "x", "--on-similar", "maybe")
    assert run.code == 1
    assert "--on-similar must be one of write, skip, supersede (got 'maybe')" in run.err
    assert "hint:" in run.err and "--on-similar skip" in run.err
    assert cli("list", "--json").json["items"] == []  # nothing written
    with Memory.open() as memory, pytest.raises(Exception, match="on_similar must be one of"):
        memory.remember([{"text": "x"}], on_similar="drop")


def test_meaning_with_the_real_model(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    cli("remember", "--id", "backup", BACKUP)
    run = cli(
        "remember",
        "--json",
        stdin=ndjson({"id": "again", "text": BACKUP_AGAIN}, {"id": "cat", "text": CAT}, {"id": "night", "text": NIGHT}),
    )
    again = _item(run, "again")
    assert again["similar_to"][0]["id"] == "backup" and again["similar_to"][0]["rule"] == "meaning"
    assert 0.88 <= again["similar_to"][0]["score"] < 1
    assert "similar_to" not in _item(run, "cat")  # a different meaning is not reported
    assert {near["id"] for near in _item(run, "night")["similar_to"]} == {"backup", "again"}  # "again": in the batch
    no_embed = cli("remember", "--id", "n", "The staging DB is backed up nightly at 2am", "--no-embed", "--json")
    assert "similar_to" not in no_embed.json["items"][0]  # without vectors, only the text rule
    superseding = cli(
        "remember",
        "--id",
        "s",
        "At 2am every night the staging database is backed up",
        "--on-similar",
        "supersede",
        "--json",
    )
    assert _item(superseding, "s")["shadowed"] == _item(superseding, "s")["similar_to"][0]["id"]


def test_mcp_remember_takes_on_similar(backend, env):
    with mcp_tools() as call:
        call("remember", {"records": {"id": "a", "text": "Ship on green CI."}})
        skipped = call("remember", {"records": {"id": "b", "text": "ship on green ci"}, "on_similar": "skip"})
        assert skipped["items"][0]["status"] == "similar" and skipped["upserted"] == 0
        with pytest.raises(Exception, match="on_similar"):
            call("remember", {"records": {"id": "c", "text": "x"}, "on_similar": "drop"})
