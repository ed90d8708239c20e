"""Members' tokens (``eidetic tokens``) on both registries: the state folder's file (files and
sqlite stores) and the postgres store's own database. A token is printed once and kept nowhere
(only its SHA-256); names are checked; a server's registry sees an added or revoked token at its
next lookup; ``last_seen`` is written at most once a minute per token."""

from __future__ import annotations

import json
import re
import stat
import time
from pathlib import Path

import pytest

from conftest import fresh_database
from eidetic import Memory
from eidetic.team import token_file, token_table
from eidetic.team.tokens import digest, open_registry

TOKEN = re.compile(r"eid_[A-Za-z0-9_-]{43}")


@pytest.fixture(params=["files", "postgres"])
def flags(request, env) -> list[str]:
    """The store flags that pick a registry, as every verb's."""
    if request.param == "files":
        return []
    return ["--backend", "postgres", "--dsn", fresh_database(request.getfixturevalue("postgres_dsn"), "team_tokens")]


def stored(env: Path, flags: list[str]) -> str:
    """Everything the registry keeps, as text: the file, or every row of the table."""
    if not flags:
        return (env / "state" / "serve-tokens.json").read_text()
    import psycopg

    with psycopg.connect(flags[-1]) as conn:
        return json.dumps([list(map(str, row)) for row in conn.execute("SELECT * FROM eidetic_members")])


def test_add_prints_only_the_token_once_and_keeps_only_its_digest(cli, env, flags):
    made = cli("tokens", "add", "alice", "--scope", "alice", "--visibility", "private", *flags)
    assert made.code == 0, made.err
    token = made.out.strip()
    assert TOKEN.fullmatch(token) and made.out == token + "\n"  # TOKEN=$(eidetic tokens add ...) works
    assert "shown once" in made.err and "Authorization: Bearer" in made.err and token not in made.err
    kept = stored(env, flags)
    assert token not in kept and digest(token) in kept
    if not flags:
        assert stat.S_IMODE((env / "state" / "serve-tokens.json").stat().st_mode) == 0o600
    again = cli("tokens", "add", "bob", "--scope", "team", "--read-only", *flags).out.strip()
    assert TOKEN.fullmatch(again) and again != token

    listed = cli("tokens", "list", *flags)
    assert listed.code == 0 and token not in listed.out and digest(token) not in listed.out
    lines = listed.out.splitlines()
    assert lines[0].split() == ["name", "scope", "rights", "created", "last", "used"]
    assert lines[1].split()[:3] == ["alice", "alice/private", "read-write"] and lines[1].endswith("never")
    assert lines[2].split()[:3] == ["bob", "team/public", "read-only"]
    members = cli("tokens", "list", "--json", *flags).json["members"]
    assert [(m["name"], m["scope"], m["visibility"], m["read_only"]) for m in members] == [
        ("alice", "alice", "private", False),
        ("bob", "team", "public", True),
    ]
    assert token not in json.dumps(members) and digest(token) not in json.dumps(members)


def test_bad_names_taken_names_and_unknown_names_are_errors_with_hints(cli, env, flags):
    assert cli("tokens", "add", "alice", "--scope", "alice", *flags).code == 0
    taken = cli("tokens", "add", "alice", "--scope", "other", *flags)
    assert taken.code == 1 and "already has a token" in taken.err and "eidetic tokens revoke alice" in taken.err
    assert taken.out == ""
    for bad in ("al ice", "alice/../x", "", "a" * 65, "ålice"):
        refused = cli("tokens", "add", bad, "--scope", "x", *flags)
        assert refused.code == 1 and "invalid member name" in refused.err and refused.out == "", bad
    assert cli("tokens", "add", "carol", "--scope", " ", *flags).code == 1  # a blank scope is no scope
    unknown = cli("tokens", "revoke", "alcie", *flags)
    assert unknown.code == 1 and "did you mean 'alice'?" in unknown.err
    assert [m["name"] for m in cli("tokens", "list", "--json", *flags).json["members"]] == ["alice"]


def test_revoke_ends_a_token_at_the_servers_next_lookup(cli, env, flags, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    token = cli("tokens", "add", "alice", "--scope", "alice", "--visibility", "private", *flags).out.strip()
    with Memory.open(backend=flags[1] if flags else None, dsn=flags[-1] if flags else None) as memory:
        server = open_registry(memory)  # as a running server holds it
        try:
            assert server.lookup(digest("eid_wrong")) == (True, None)
            live, member = server.lookup(digest(token))
            assert (
                live
                and member is not None
                and (member.name, member.scope, member.visibility)
                == (
                    "alice",
                    "alice",
                    "private",
                )
            )
            revoked = cli("tokens", "revoke", "alice", *flags)
            assert revoked.code == 0 and "revoked alice" in revoked.err
            assert server.lookup(digest(token)) == (True, None)  # no restart, no wait; still closed
            assert cli("tokens", "list", "--json", *flags).json["members"] == []
            gone = cli("tokens", "list", "--revoked", "--json", *flags).json["members"]
            assert [m["name"] for m in gone] == ["alice"]
            assert digest(token) not in stored(env, flags)  # nothing of a revoked token is kept
            again = cli("tokens", "add", "alice", "--scope", "team", *flags).out.strip()  # a new token for the name
            assert server.lookup(digest(token)) == (True, None)
            assert server.lookup(digest(again))[1].scope == "team"  # type: ignore[union-attr]
        finally:
            server.close()


def test_last_seen_is_written_at_most_once_a_minute(cli, env, flags, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    token = cli("tokens", "add", "alice", "--scope", "alice", *flags).out.strip()
    with Memory.open(backend=flags[1] if flags else None, dsn=flags[-1] if flags else None) as memory:
        server = open_registry(memory)
        try:
            server.lookup(digest(token))
            first = cli("tokens", "list", "--json", *flags).json["members"][0]["last_seen"]
            assert first is not None
            before = stored(env, flags)
            for _ in range(50):  # fifty requests within the minute: no write
                server.lookup(digest(token))
            assert stored(env, flags) == before
            monkeypatch.setattr(token_file if not flags else token_table, "TOUCH_EVERY", 0.0)
            time.sleep(1.1)  # last_seen is kept to the second
            server.lookup(digest(token))
            assert stored(env, flags) != before  # a minute later (here: at once) it is written again
        finally:
            server.close()


def test_a_registry_with_no_members_lets_nothing_in_and_creates_nothing(env, flags, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open(backend=flags[1] if flags else None, dsn=flags[-1] if flags else None) as memory:
        server = open_registry(memory)
        try:
            assert server.lookup(digest("")) == (False, None)
            assert server.members() == []
        finally:
            server.close()
    if not flags:
        assert not (env / "state" / "serve-tokens.json").exists()
    else:
        import psycopg

        with psycopg.connect(flags[-1]) as conn:
            assert conn.execute("SELECT to_regclass('eidetic_members')").fetchone() == (None,)


def test_a_damaged_file_is_an_error_naming_it(cli, env):
    (env / "state").mkdir(parents=True, exist_ok=True)
    (env / "state" / "serve-tokens.json").write_text("{not json")
    failed = cli("tokens", "list")
    assert failed.code == 2 and "serve-tokens.json is not one eidetic wrote" in failed.err
