"""Capture leaves out what is stored already: the same words (case, punctuation and spacing aside),
and with vectors (the hook daemon, ``eidetic capture``) the same meaning, in the records' own
scope, reported as a duplicate of the record it repeats; another scope's private records neither
stop a capture nor are named."""

from __future__ import annotations

import hook_payloads as payload
from conftest import ndjson

# Close in meaning for the real model (cosine ~0.95: tests/test_similar_at_write.py).
BACKUP = "The staging database is backed up every night at 2am"
BACKUP_AGAIN = "Every night at 2am the staging database gets backed up"
CAT = "The cat sleeps on the sofa all afternoon"


def capture(cli, env, text: str, *flags: str):
    transcript = env / "transcript.txt"
    transcript.write_text(text)
    run = cli("capture", str(transcript), "--json", *flags)
    assert run.code == 0, run.err
    return run


def stored(cli, *flags: str) -> list[dict]:
    return cli("list", "--visibility", "private", "--json", *flags).json["items"]


def test_the_same_statement_in_other_case_and_punctuation_is_stored_once(cli, store, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    first = capture(cli, env, "User: Please remember that the staging DB is read-only on weekends.\n")
    assert first.json["written"] == 1
    kept = first.json["items"][0]["id"]
    again = capture(cli, env, "#### remember: the Staging db is READ ONLY, on weekends!\n")
    item = again.json["items"][0]
    assert again.json["written"] == 0 and item["status"] == "duplicate"
    assert item["duplicate_of"] == kept and item["rule"] == "text"
    assert [record["id"] for record in stored(cli)] == [kept]
    same = capture(cli, env, "User: Please remember that the staging DB is read-only on weekends.\n", "--session", "s2")
    assert same.json["written"] == 0 and same.json["items"][0]["duplicate_of"] == kept  # not rewritten
    assert (
        "session" not in cli("show", kept, "--visibility", "private", "--json").json["metadata"]
    )  # the first capture's provenance stays
    text = cli("capture", str(env / "transcript.txt"))
    assert text.code == 0 and f"duplicate of {kept} (same words)" in text.out


def test_a_statement_close_in_meaning_is_left_out_at_session_end_with_the_model(cli, store, env, monkeypatch):
    """The daemon's session end (mode hybrid: its model is loaded) embeds what it captures."""
    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)
    monkeypatch.setenv("EIDETIC_CAPTURE", "private")
    assert cli("remember", "--id", "backup", BACKUP, "--visibility", "private").code == 0
    transcript = payload.transcript_file(env / "home", "s")
    lines = [
        payload.transcript_line(
            "user", f"Remember that {BACKUP_AGAIN[0].lower()}{BACKUP_AGAIN[1:]}.", "s", env, "2026-01-20T11:57:18.000Z"
        ),
        payload.transcript_line("user", f"Note that {CAT[0].lower()}{CAT[1:]}.", "s", env, "not a date"),
    ]
    transcript.write_text("\n".join(lines) + "\n")
    answer = payload.handled("session-end", payload.session_end(env / "work", transcript, session="s"), env / "work")
    assert answer["stdout"] == "" and answer["log"] == ["session-end: captured 1 of 2 statement(s), 1 stored already"]
    kept = {record["text"]: record for record in stored(cli)}
    assert sorted(kept) == sorted([BACKUP, CAT + "."]) and not kept[CAT + "."].get("occurred")  # a bad date: none kept
    again = capture(cli, env, f"remember that {BACKUP_AGAIN}\n")  # eidetic capture embeds too
    item = again.json["items"][0]
    assert item["status"] == "duplicate" and item["duplicate_of"] == "backup" and item["rule"] == "meaning"
    assert 0.88 <= item["score"] < 1
    assert capture(cli, env, f"remember that {BACKUP_AGAIN}\n", "--dry-run").json["items"][0]["status"] == "new"
    words_only = capture(cli, env, f"remember that {BACKUP_AGAIN}\n", "--no-embed")
    assert words_only.json["written"] == 1  # no vectors: the words differ, so it is kept


def test_another_scopes_private_record_neither_stops_a_capture_nor_is_named(cli, store, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    secret = {"id": "alices-own-note", "text": "The staging database is read-only on weekends."}
    assert cli("remember", "--scope", "alice", "--visibility", "private", stdin=ndjson(secret)).code == 0
    said = "User: remember that the staging database is read-only on weekends\n"
    run = capture(cli, env, said, "--scope", "bob")
    assert run.json["written"] == 1 and run.json["items"][0]["status"] == "new"
    again = capture(cli, env, said, "--scope", "bob")  # bob's own copy is a duplicate now
    assert again.json["items"][0]["duplicate_of"] == run.json["items"][0]["id"]
    text = cli("capture", str(env / "transcript.txt"), "--scope", "bob", "--dry-run")
    for shown in (run.out, again.out, text.out, text.err):
        assert "alices-own-note" not in shown and "alice" not in shown
    assert [r["id"] for r in stored(cli, "--scope", "alice")] == ["alices-own-note"]
