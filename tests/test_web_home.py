"""The viewer as a place to start, over the real app and a real store: the home page (what is
stored, and how to remember the first record when nothing is), the typed filters as choices of
what the session sees, and a chat turn or doc chunk shown among its thread's neighbours (only
those the session may read, on every backend)."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

from eidetic import Memory
from web_client import hit_ids, page, row_ids, served

TEAM, ALICE = {"name": "team", "visibility": "public"}, {"name": "alice", "visibility": "private"}


def turn(rid: str, minute: int, text: str, scope: dict[str, str] = TEAM, second: int = 0) -> dict[str, object]:
    return {
        "id": rid,
        "text": text,
        "type": "chat",
        "scope": scope,
        "metadata": {"thread": "lunch"},
        "created": f"2026-03-02T12:{minute:02}:{second:02}Z",
    }


LUNCH = [
    turn("t1", 1, "Where shall we eat on Friday?"),
    turn("t2", 2, "The noodle bar on Elm street."),
    turn("t3", 3, "Booked for noon, six of us."),
    turn("t4", 4, "Bring the receipts for expenses."),
    turn("t5", 5, "Noted."),
    turn("t6", 6, "Moved to 12:30."),
    turn("t7", 7, "Fine by me."),
    turn("t8", 8, "See you there."),
    turn("alice-aside", 3, "ALICESECRET: I will skip it", ALICE, second=30),  # between t3 and t4, out of reach
]
CHUNKS = [
    {"id": f"handbook-{i}", "text": text, "type": "doc", "metadata": {"thread_id": "handbook.md"}}
    for i, text in enumerate(["# Handbook", "Deploys need two reviewers.", "Rollbacks are automatic."], 1)
]


def reloaded(client: Any, ready: Callable[[Any], bool], seconds: float = 60) -> Any:
    """The home page, reloaded as a person would until ``ready`` holds: its counts are made off
    the request path and a change made elsewhere shows in them within a visit or two."""
    deadline = time.monotonic() + seconds
    while True:
        home = page(client.get("/"))
        if ready(home) or time.monotonic() > deadline:
            return home
        time.sleep(0.2)


def test_an_empty_store_says_how_to_remember_the_first_record_and_it_works(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with served("team", "private") as client:
        home = page(client.get("/"))
        assert home.select_one("form#search input[name=q]") is not None  # searching stays one step away
        first = home.select_one("#home #first-record")
        assert "Nothing remembered yet" in first.text and home.select("#home-recent") == []
        command = shlex.split(first.select_one("pre code").text)
        assert command[:2] == ["eidetic", "remember"] and command[-4:] == ["--scope", "team", "--visibility", "private"]
        done = cli(*command[1:])  # the command as shown, run as a new user would
        assert done.code == 0, done.err
        home = reloaded(client, lambda home: home.select_one("#home-counts .by-type a") is not None)
        assert home.select_one("#first-record") is None
        recent = home.select("#home-recent li[data-id]")
        assert len(recent) == 1 and "Deploys run on Tuesdays" in recent[0].text
        assert "decision" in home.select_one("#home-counts .by-type").text
        assert home.select_one("#home-counts .by-scope a").text == "team/private"
        assert [li["data-id"] for li in home.select("#home-never li[data-id]")] == [recent[0]["data-id"]]
        assert home.select("#home-most li[data-id]") == []


def test_the_home_page_lists_recent_most_and_never_recalled(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember(LUNCH[:8] + CHUNKS)
        memory.remember([{"id": "old", "text": "An archived note"}])
        memory.set_lifecycle("old", "archived")
        memory.recall("noodle bar", mode="keyword", depth=0, top_k=1)
    with served("team", "public") as client:
        home = page(client.get("/"))
        recent = [li["data-id"] for li in home.select("#home-recent li[data-id]")]
        assert len(recent) == 6 and "old" not in recent  # the active records written last
        assert home.select_one("#home-recent a.more").text.startswith("all 11")
        assert [li["data-id"] for li in home.select("#home-most li[data-id]")] == ["t2"]
        never = [li["data-id"] for li in home.select("#home-never li[data-id]")]
        assert never and "t2" not in never
        by_type = home.select_one("#home-counts .by-type").text
        assert "chat 8" in " ".join(by_type.split()) and "doc 3" in " ".join(by_type.split())
        assert "note 1" in " ".join(by_type.split())  # counts cover every lifecycle, as the overview's
        # clearing a search with htmx brings the home page back in place of the results
        fragment = client.get("/?q=&mode=keyword", headers={"HX-Request": "true", "HX-Target": "results"})
        assert "<html" not in fragment.text and page(fragment).select_one("#home-recent") is not None


def test_the_type_and_scope_filters_are_choices_of_what_the_session_sees(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember(LUNCH + CHUNKS)
        memory.remember([{"id": "mine", "text": "my lunch notes", "type": "diary"}], scope="me", visibility="private")
    for session, types, scopes in (
        (("me", "private"), ["chat", "diary", "doc"], ["default", "me", "team"]),
        (
            ("default", "public"),
            ["chat", "doc"],
            ["default", "team"],
        ),  # alice's and me's private records: not even a type
    ):
        with served(*session) as client:
            for path in ("/", "/?q=lunch&mode=keyword", "/browse"):
                form = page(client.get(path)).select_one("form")
                assert [o["value"] for o in form.select("select[name=types] option")] == ["", *types], path
                assert [o["value"] for o in form.select("select[name=scope] option")] == ["", *scopes], path
                assert form.select("input[name=types], input[name=scope]") == []  # no free text
    with served("me", "private") as client:
        assert hit_ids(client.get("/?q=lunch&mode=keyword&depth=0&scope=me")) == ["mine"]  # that scope's records
        assert "mine" in hit_ids(client.get("/?q=lunch&mode=keyword&depth=0"))
        assert row_ids(client.get("/browse?types=doc&sort=name")) == ["handbook-1", "handbook-2", "handbook-3"]
        chosen = page(client.get("/browse?types=doc&scope=team")).select_one("form")
        assert chosen.select_one("select[name=types] option[selected]")["value"] == "doc"
        assert chosen.select_one("select[name=scope] option[selected]")["value"] == "team"


def test_a_chat_turn_and_a_doc_chunk_are_shown_in_their_thread_on_every_backend(backend):
    with Memory.open() as memory:
        memory.remember(LUNCH + CHUNKS)
        memory.remember([{"id": "plain", "text": "A note in no thread", "scope": TEAM}])
        memory.set_lifecycle("t6", "archived")
    with served("team", "private") as client:
        shown = page(client.get("/record?id=t4"))
        turns = shown.select("#thread li.turn")
        assert [li["data-id"] for li in turns] == ["t1", "t2", "t3", "t4", "t5", "t7", "t8"]  # t6 archived
        assert [li["class"][1] for li in turns] == ["before"] * 3 + ["current"] + ["after"] * 3
        assert turns[1].select_one("a.id")["href"] == "/record?id=t2" and "noodle bar" in turns[1].text
        assert "ALICESECRET" not in shown.text and "alice-aside" not in shown.text
        whole = shown.select_one("#thread a#whole-thread")["href"]
        assert row_ids(client.get(whole)) == ["t1", "t2", "t3", "t4", "t5", "t7", "t8"]  # oldest first
        archived = page(client.get("/record?id=t6")).select("#thread li.turn")  # still shown in its place
        assert [li["data-id"] for li in archived] == ["t3", "t4", "t5", "t6", "t7", "t8"]
        chunk = page(client.get("/record?id=handbook-2"))
        assert [li["data-id"] for li in chunk.select("#thread li.turn")] == ["handbook-1", "handbook-2", "handbook-3"]
        assert "handbook.md" in chunk.select_one("#thread h2").text
        assert page(client.get("/record?id=plain")).select_one("#thread") is None
    with served("alice", "private") as client:  # her own aside sits between t3 and t4
        around = [li["data-id"] for li in page(client.get("/record?id=alice-aside")).select("#thread li.turn")]
        assert around == ["t1", "t2", "t3", "alice-aside", "t4", "t5", "t7"]
