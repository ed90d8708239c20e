"""The scope rule, server side, tested as an attacker would: a store holding alice's private
records, bob's and public ones; a server for bob/private (and one for default/public) asked for
every page and every id, with scope, visibility and lifecycle parameters that try to widen what
it serves, and with changes aimed at alice's records.

Two checks on every response: nothing of alice's private records (text, id, type) appears in
it unless the request itself carried that string; and the response is exactly the one the same
request gets once alice's private records are gone from the store (so no count, total, hint,
order or link target depends on them)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from eidetic import Memory
from web_client import page, served

PUBLIC = [
    {"id": "pub-1", "text": "Shared deploy checklist for everyone", "links": ["alice-secret-1"]},
    {"id": "alice-pub", "text": "Alice's public deploy plan", "scope": {"name": "alice", "visibility": "public"}},
    {"id": "pub-turn-1", "text": "Lunch at noon?", "metadata": {"thread": "lunch"}, "created": "2026-01-01T12:00:00Z"},
    {"id": "pub-turn-2", "text": "Noon works.", "metadata": {"thread": "lunch"}, "created": "2026-01-01T12:02:00Z"},
]
BOB = [
    {"id": "bob-1", "text": "Bob's private deploy runbook", "links": ["alice-secret-1", "pub-1"]},
    {"id": "bob-turn", "text": "Bob joins too.", "metadata": {"thread": "lunch"}, "created": "2026-01-01T12:03:00Z"},
]
ALICE = [
    {
        "id": "alice-secret-1",
        "text": "ALICESECRET deploy credentials vault-7731",
        "type": "alicetype",
        "links": ["pub-1", "bob-1"],
    },
    {"id": "alice-secret-2", "text": "ALICESECRET old deploy note vault-9912", "supersedes": "pub-1"},
    {"id": "alice-secret-3", "text": "ALICESECRET archived deploy vault-4420", "links": ["alice-pub"]},
    # a turn of the same thread, between two public ones: never a neighbour outside alice's scope
    {
        "id": "alice-secret-4",
        "text": "ALICESECRET lunch vault-5501",
        "metadata": {"thread": "lunch"},
        "created": "2026-01-01T12:01:00Z",
    },
]
# what must never appear, unless the request typed it. "alice-secret-1" is left out: pub-1 and
# bob-1 link to it, so its id is their content (shown "not found": the differential check proves
# the page is the same whether that record exists or not)
ALICE_STRINGS = (
    "vault-7731",
    "vault-9912",
    "vault-4420",
    "vault-5501",
    "ALICESECRET",
    "alicetype",
    "alice-secret-2",
    "alice-secret-3",
    "alice-secret-4",
    "alice/private",
)
IDS = ["pub-1", "alice-pub", "pub-turn-1", "bob-1", "alice-secret-1", "alice-secret-2", "alice-secret-3", "ghost"]
WIDER = [
    {},
    {"include_archived": "1", "include_shadowed": "1", "depth": "3", "max_nodes": "50"},
    {"scope": "alice"},
    {"scope": "alice", "visibility": "private"},
    {"visibility": "private"},
    {"types": "alicetype", "scope_only": "1", "lifecycle": "all"},
]
Request = tuple[str, str, dict[str, str]]


@pytest.fixture
def store_with_secrets(backend):
    seed()
    return backend


@pytest.fixture
def files_with_secrets(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    seed()
    return store


def seed() -> None:
    with Memory.open() as memory:
        memory.remember(PUBLIC)
        memory.remember(BOB, scope="bob", visibility="private")
        memory.remember(ALICE, scope="alice", visibility="private")
        memory.set_lifecycle("alice-secret-3", "archived", scope="alice", visibility="private")


def requests() -> list[Request]:
    """Every page, every id, every widening parameter; changes aimed at alice's records."""
    asked: list[Request] = []
    for query in ("ALICESECRET", "deploy"):
        for mode in ("exact", "keyword", "hybrid", "approximate", "fields"):
            asked += [("GET", "/", {"q": query, "mode": mode, **wider}) for wider in WIDER]
    asked += [("GET", "/", {"q": "", "types": "alicetype", "mode": "fields"})]
    asked += [("GET", "/", wider) for wider in WIDER]  # the home page: counts, lists, the filters' choices
    for rid in IDS:
        asked += [("GET", path, {"id": rid}) for path in ("/record", "/record/edit", "/record/supersede")]
    asked += [("GET", "/browse", {**wider, "sort": sort}) for wider in WIDER for sort in ("name", "recalled")]
    asked += [("GET", "/overview", wider) for wider in WIDER]
    for rid in IDS[4:]:
        for change in ("forget", "restore"):
            asked += [
                ("POST", f"/record/{change}", {"id": rid}),
                ("POST", f"/record/{change}", {"id": rid, "confirm": "yes"}),
            ]
        asked += [
            ("POST", "/record/edit", {"id": rid, "original": "", "text": "---\nid: x\n---\n\nmine now"}),
            ("POST", "/record/supersede", {"id": rid, "text": "replaced by bob"}),
        ]
    return asked


def answers(client, asked: list[Request]) -> list[tuple[int, str]]:
    out = []
    for method, path, params in asked:
        if method == "GET":
            response = client.get(path, params=params)
        else:
            response = client.post(path, data=params)
            assert response.status_code != 303, (path, params)  # no attack changed anything
        typed = " ".join([path, *params.values(), f"{params.get('scope')}/{params.get('visibility')}"])
        leaked = [s for s in ALICE_STRINGS if s in response.text and s not in typed]
        assert not leaked, (method, path, params, leaked)
        out.append((response.status_code, response.text))
    return out


def test_nothing_of_alices_private_records_reaches_bobs_session(store_with_secrets):
    blind_to_alice(("bob", "private"))


def test_nothing_of_alices_private_records_reaches_a_public_session(files_with_secrets):
    blind_to_alice(("default", "public"))


def unclocked(body: str) -> str:
    """A page without the overview's one line that names the time its report was made (the two
    servers make theirs at different moments)."""
    return re.sub(r'<p class="made small">.*?</p>', "", body, flags=re.DOTALL)


def blind_to_alice(session: tuple[str, str]) -> None:
    """The two checks of this module's docstring, for every request, as ``session``."""
    asked = requests()
    with served(*session) as client:
        seen = answers(client, asked)
        edit = _bobs_edit(client) if session[0] == "bob" else None
    with Memory.open() as memory:  # alice's private records, gone
        for record in ALICE:
            memory.purge(record["id"], scope="alice", visibility="private")
    with served(*session) as client:
        blind = answers(client, asked)
    for request, (status, body), (status_blind, body_blind) in zip(asked, seen, blind, strict=True):
        assert (status, unclocked(body)) == (status_blind, unclocked(body_blind)), request
    assert seen[asked.index(("GET", "/record", {"id": "bob-1"}))][0] == (200 if session[0] == "bob" else 404)
    link = page_of(seen, asked, "/record", {"id": "pub-1"}).select("#links-out li")[0]
    assert link.select("a") == [] and link.select_one(".unseen").text == "not found"
    assert "alice-secret-1" not in "".join(
        a["href"] for a in page_of(seen, asked, "/", {"q": "deploy", "mode": "keyword", **WIDER[1]}).select("a")
    )
    thread = [li["data-id"] for li in page_of(seen, asked, "/record", {"id": "pub-turn-1"}).select("#thread li.turn")]
    assert thread == ["pub-turn-1", "pub-turn-2", "bob-turn"] if session[0] == "bob" else ["pub-turn-1", "pub-turn-2"]
    home = page_of(seen, asked, "/", {})
    assert [o["value"] for o in home.select("select[name=types] option")] == ["", "note"]
    scopes = [o["value"] for o in home.select("select[name=scope] option")]
    assert scopes == (["", "alice", "bob", "default"] if session[0] == "bob" else ["", "alice", "default"])
    if edit is not None:
        assert edit.status_code == 400 and "may not write to scope alice/private" in edit.text


def page_of(seen, asked: list[Request], path: str, params: dict[str, str]) -> Any:
    """The page a request got, from the answers."""
    return page(seen[asked.index(("GET", path, params))][1])


def _bobs_edit(client) -> Any:
    """Bob's session moving his own record into alice's private scope: refused."""
    form = page(client.get("/record/edit", params={"id": "bob-1"})).select_one("form#edit")
    original = form.select_one("input[name=original]")["value"]
    text = form.select_one("textarea").text.lstrip("\n").replace("name: bob", "name: alice")
    return client.post("/record/edit", data={"id": "bob-1", "original": original, "text": text})


def test_an_id_taken_out_of_reach_is_refused_without_naming_its_owner(store_with_secrets):
    with served("bob", "private") as client:
        taken = client.post(
            "/record/supersede", data={"id": "bob-1", "text": "bob's newer runbook", "new_id": "alice-secret-2"}
        )
        assert taken.status_code == 400
        message = page(taken).select_one(".error .message").text
        assert "taken by a record outside scope bob/private" in message and "alice" not in message.replace(
            "alice-secret-2", ""
        )
        assert "vault" not in taken.text and "ALICESECRET" not in taken.text
    with Memory.open() as memory:
        kept = memory.get("alice-secret-2", scope="alice", visibility="private")
        assert kept.text.startswith("ALICESECRET") and kept.lifecycle == "active"
