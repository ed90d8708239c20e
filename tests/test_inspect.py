"""overview, doctor, explain and export."""

from __future__ import annotations

import json

from eidetic.cli.explain import CONCEPTS, TOPICS
from eidetic.cli.main import build_parser, verbs


def seed(cli):
    cli("remember", '{"id": "a", "text": "alpha", "links": ["b"], "metadata": {"author": "ana"}}', "--added-by", "bot")
    cli("remember", '{"id": "b", "text": "beta"}')
    cli("remember", '{"id": "c", "text": "gamma", "supersedes": "b", "type": "lesson"}')
    cli("remember", '{"id": "p", "text": "private one"}', "--scope", "me", "--visibility", "private")
    cli("remember", '{"id": "q", "text": "theirs"}', "--scope", "them", "--visibility", "private")


def test_overview_counts_only_what_the_caller_may_see(cli, store):
    seed(cli)
    stores = cli("overview", "--json").json["stores"]
    assert len(stores) == 1 and stores[0]["records"] == 3
    scope = stores[0]["scopes"][0]
    assert (scope["name"], scope["visibility"], scope["total"], scope["active"], scope["shadowed"]) == (
        "default",
        "public",
        3,
        2,
        1,
    )
    assert scope["contributors"] == ["ana", "bot"] and scope["types"] == {"lesson": 1, "note": 2}
    assert stores[0]["connections"] == {"links": 1, "supersedes": 1}
    assert "them" not in json.dumps(stores) and "me" not in [s["name"] for s in stores[0]["scopes"]]
    mine = cli("overview", "--scope", "me", "--visibility", "private", "--json").json["stores"][0]
    assert [(s["name"], s["total"]) for s in mine["scopes"]] == [("default", 3), ("me", 1)]
    text = cli("overview").out
    assert "default/public: 3 (active 2, shadowed 1)" in text and "contributors: ana, bot" in text
    assert "types: lesson 1, note 2" in text


def test_export_round_trips_through_remember(cli, store, env, monkeypatch):
    seed(cli)
    exported = cli("export", "--json").out.splitlines()
    assert sorted(json.loads(line)["id"] for line in exported) == ["a", "b", "c"]
    mine = [
        json.loads(line)["id"] for line in cli("export", "--scope", "me", "--visibility", "private").out.splitlines()
    ]
    assert sorted(mine) == ["a", "b", "c", "p"]
    assert [json.loads(x)["id"] for x in cli("export", "--active-only").out.splitlines()] == ["a", "c"]
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "copy"))
    assert cli("remember", "--json", stdin="\n".join(exported)).json["upserted"] == 3
    again = cli("export").out.splitlines()
    strip = lambda lines: sorted(
        (d["id"], d["text"], d["links"], d["metadata"], d["created"]) for d in map(json.loads, lines)
    )
    assert strip(again) == strip(exported)


def test_doctor_reports_health(cli, store):
    assert cli("doctor", "--json").json["healthy"] is True  # nothing created yet is not unhealthy
    seed(cli)
    (store / "broken.md").write_text("---\nid: [x\n---\nbody\n")
    report = cli("doctor", "--json")
    assert report.code == 0
    checks = {c["id"]: c for c in report.json["checks"]}
    assert checks["records_parse"]["passed"] is False and "broken.md" in checks["records_parse"]["message"]
    assert checks["embedder"]["passed"] is True and "all-MiniLM-L6-v2" in checks["embedder"]["message"]
    assert "UNHEALTHY" not in cli("doctor").out


def test_doctor_fails_on_unreadable_store(cli, store):
    import os

    seed(cli)
    store.chmod(0o000)
    try:
        if os.access(store, os.R_OK):  # root ignores permissions
            return
        run = cli("doctor", "--json")
        assert run.code == 1 and run.json["healthy"] is False
    finally:
        store.chmod(0o755)


def test_explain_every_topic(cli):
    for topic in TOPICS:
        run = cli("explain", topic, "--json")
        assert run.code == 0 and run.json["topic"] == topic and run.json["markdown"].startswith("# ")
    assert cli("explain", "eidetic").out.startswith("# eidetic")
    missing = cli("explain", "nonsense", "--json")
    assert missing.code == 1 and "recall" in missing.err_json["remediation"]
    for verb, (_, line) in verbs(build_parser()).items():  # every verb has a topic and a --help
        assert verb in TOPICS and line, verb
        assert cli(verb, "--help").code == 0
    named = " ".join(TOPICS["eidetic"].split("Concepts: ")[1].split(". Run")[0].split())
    assert set(named.split(", ")) == set(CONCEPTS) - {"eidetic"}  # the overview names every concept


def test_explain_without_a_topic_lists_them_with_a_line_each(cli):
    listed = cli("explain", "--json").json["topics"]
    assert [t["topic"] for t in listed][:3] == ["eidetic", "remember", "recall"]
    assert sorted(t["topic"] for t in listed) == sorted(TOPICS)  # each topic once, none left out
    assert all(t["summary"] and "\n" not in t["summary"] for t in listed)
    lines = {t["topic"]: t["summary"] for t in listed}
    assert lines["recall"] == "find records verbatim, by keyword or by meaning"  # a verb's line is its --help line
    text = cli("explain")
    assert text.code == 0 and text.err == ""
    assert "  completion   print a tab-completion script for bash, zsh or fish" in text.out  # aligned with consolidate
    assert all(f"  {topic} " in text.out for topic in TOPICS)


def test_explain_an_unknown_topic_names_the_known_ones(cli):
    near = cli("explain", "recal", "--json")
    assert near.code == 1 and near.out == ""
    assert near.err_json["message"] == "no explain entry for 'recal'"
    assert near.err_json["remediation"].startswith("did you mean 'recall'? topics: audit, backends, ")
    hostile = cli("explain", "\x1b[2J" + "x" * 500)
    assert hostile.code == 1 and "\x1b" not in hostile.err and len(hostile.err) < 800  # no escape codes, short
    assert "topics: " in hostile.err and "did you mean" not in hostile.err


def test_doctor_and_overview_report_an_unavailable_embedder(cli, store, monkeypatch):
    seed(cli)
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    report = cli("doctor", "--json")
    check = {c["id"]: c for c in report.json["checks"]}["embedder"]
    assert check["passed"] is False and check["severity"] == "warning" and report.json["healthy"] is True
    assert cli("overview", "--json").json["stores"][0]["embedder"]["online"] is False
