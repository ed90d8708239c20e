"""A write of an id another scope holds: the holder is named only when the writer may see it;
otherwise the answer is that the id is taken outside the writer's own scope (its existence, not
its holder or its text). The writer is the session when there is one (MCP, the viewer), else
the record's scope name, which sees its own private records: moving one's own private record
to public says where it is, not that someone outside holds it."""

from __future__ import annotations

import json

import pytest

from eidetic import Memory
from eidetic.errors import EideticError
from eidetic.ranking.access import Access
from eidetic.records import Scope


def remember(cli, record: dict, scope: str, visibility: str):
    return cli("remember", json.dumps(record), "--scope", scope, "--visibility", visibility, "--json")


def test_moving_ones_own_private_record_to_public_names_it(cli, backend):
    assert remember(cli, {"id": "mine", "text": "bob's own note"}, "bob", "private").code == 0
    moved = remember(cli, {"id": "mine", "text": "bob's own note, for the team"}, "bob", "public")
    assert moved.code == 1, moved.err
    message = moved.err_json["message"]
    assert message == "record 'mine' exists in scope bob/private; remember cannot move it to bob/public", message
    assert "taken by" not in moved.err and moved.err_json["remediation"]
    back = remember(cli, {"id": "mine", "text": "again"}, "bob", "private")  # still his, unchanged
    assert back.code == 0 and back.json["items"][0]["status"] == "updated"


def test_anothers_private_id_is_taken_outside_the_writers_scope(cli, backend):
    assert remember(cli, {"id": "hers", "text": "alice's vault code"}, "alice", "private").code == 0
    for visibility in ("public", "private"):
        taken = remember(cli, {"id": "hers", "text": "bob writes"}, "bob", visibility)
        assert taken.code == 1
        assert taken.err_json["message"] == f"the id 'hers' is taken by a record outside scope bob/{visibility}"
        assert "alice" not in taken.err and "vault" not in taken.err


@pytest.fixture
def held(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember([{"id": "mine", "text": "bob's own note"}], scope="bob", visibility="private")
        memory.remember([{"id": "hers", "text": "carol's vault code"}], scope="carol", visibility="private")
    return store


def refusal(session: Scope, record: dict, scope: Scope) -> str:
    """The message a session of ``session`` gets writing ``record`` into ``scope``."""
    with Memory.open() as memory, pytest.raises(EideticError) as refused:
        memory.remember([record], scope=scope.name, visibility=scope.visibility, writer=Access(session))
    return refused.value.message


def test_a_session_names_only_what_its_scope_sees(held):
    bob_private, bob_public = Scope("bob", "private"), Scope("bob", "public")
    own = refusal(bob_private, {"id": "mine", "text": "now public"}, bob_public)
    assert own == "record 'mine' exists in scope bob/private; remember cannot move it to bob/public"
    # a public session of bob does not read bob's private records: the id is taken outside it
    public = refusal(bob_public, {"id": "mine", "text": "now public"}, bob_public)
    assert public == "the id 'mine' is taken by a record outside scope bob/public"
    # the writer's own scope is named, not the scope it writes into, and never the holder's
    alice = refusal(Scope("alice", "public"), {"id": "hers", "text": "x"}, Scope("bob", "public"))
    assert alice == "the id 'hers' is taken by a record outside scope alice/public" and "carol" not in alice
    with Memory.open() as memory:
        assert memory.get("mine", scope="bob", visibility="private").text == "bob's own note"
        assert memory.get("hers", scope="carol", visibility="private").text == "carol's vault code"
