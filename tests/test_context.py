"""Conversation context: a record is found through its thread neighbours (over every partition
the caller may read, never another scope's), kept right through inserts, edits, deletions and
rebuilds; links lend no context."""

from __future__ import annotations

import pytest

from conftest import rec
from eidetic import Memory
from eidetic.ranking.threads import order_key, thread_of

WHEN = "2024-05-01T10:00:00Z"


def turn(rid, text, thread="chat-1", created=WHEN, **extra):
    record = {"id": rid, "text": text, "created": created, "metadata": {"thread": thread}}
    record.update(extra)
    return record


def found(memory, query, **options):
    return [
        hit.record.id for hit in memory.recall(query, mode="keyword", top_k=10, depth=0, record=False, **options).items
    ]


@pytest.fixture
def memory(store):
    with Memory.open() as m:
        yield m


def test_a_turn_is_found_through_its_window(memory):
    memory.remember(
        [
            turn("t-1", "Do you still go to pottery classes?"),
            turn("t-2", "Which ones?"),
            turn("t-3", "Yes, every Tuesday evening with my sister."),
            turn("t-4", "That sounds lovely."),
            {"id": "loner", "text": "Pottery? Every Tuesday with my sister."},
        ]
    )
    # the direct matches first; t-2 and t-3 have t-1 among the two turns before them; t-4 is
    # three turns on; loner, outside the thread, only matches by its own words
    hits = found(memory, "pottery")
    assert hits[0] in ("t-1", "loner") and set(hits) == {"t-1", "t-2", "t-3", "loner"}
    # a window reaches one turn forward: t-2 sees t-3's words, t-1 (two back) does not
    assert set(found(memory, "sister")) == {"t-2", "t-3", "t-4", "loner"}


def test_neighbours_follow_time_then_natural_id_order(memory):
    memory.remember(
        [
            turn("t-1", "We adopted a puppy."),
            turn("t-10", "ten"),
            turn("t-2", "two"),
            turn("t-9", "nine"),
            turn("t-0", "zero", created="2024-05-01T11:00:00Z"),
        ]
    )
    # order: t-1, t-2, t-9, t-10 (same time, ids by number), then t-0 (later)
    assert set(found(memory, "puppy")) == {"t-1", "t-2", "t-9"}
    assert set(found(memory, "ten")) == {"t-10", "t-9", "t-0"}
    assert set(found(memory, "zero")) == {"t-0", "t-10"}


def test_a_conversation_ingested_at_once_gets_the_same_windows(backend):
    with Memory.open() as memory:  # many members at once: the thread is read in one ordered pass
        memory.remember([turn(f"t-{i}", f"word{i} filler") for i in range(1, 31)])
        assert set(found(memory, "word10")) == {"t-9", "t-10", "t-11", "t-12"}
        assert set(found(memory, "word1")) == {"t-1", "t-2", "t-3"}
        assert set(found(memory, "word30")) == {"t-29", "t-30"}


def test_turns_inserted_between_take_over_the_window(backend):
    with Memory.open() as memory:
        memory.remember([turn("t-1", "Pottery is my new hobby."), turn("t-4", "Nice!")])
        assert found(memory, "pottery") == ["t-1", "t-4"]
        memory.remember([turn("t-2", "Since when?"), turn("t-3", "Since March.")])
        assert set(found(memory, "pottery")) == {"t-1", "t-2", "t-3"}  # t-4 looks back to t-3 and t-2


def test_a_forgotten_turn_leaves_a_gap_the_window_closes_over(backend):
    with Memory.open() as memory:
        memory.remember(
            [turn("t-1", "Pottery is my new hobby."), turn("t-2", "Since when?"), turn("t-3", "Since March.")]
        )
        memory.remember([turn("t-4", "Cool.")])
        assert set(found(memory, "pottery")) == {"t-1", "t-2", "t-3"}
        memory.set_lifecycle("t-2", "archived")
        assert set(found(memory, "pottery")) == {"t-1", "t-3", "t-4"}  # t-4 now looks back to t-1
        memory.set_lifecycle("t-2", "active")
        assert set(found(memory, "pottery")) == {"t-1", "t-2", "t-3"}


def test_forgetting_or_leaving_the_thread_removes_the_context(memory):
    memory.remember([turn("t-1", "Pottery is my new hobby."), turn("t-2", "Since when?"), turn("t-3", "Since March.")])
    memory.set_lifecycle("t-1", "archived")
    assert found(memory, "pottery") == []
    memory.set_lifecycle("t-1", "active")
    assert set(found(memory, "pottery")) == {"t-1", "t-2", "t-3"}
    memory.remember([turn("t-1", "Pottery is my new hobby.", thread="other")])
    assert found(memory, "pottery") == ["t-1"]
    assert "t-3" in found(memory, "since when")  # t-2 and t-3 are neighbours now


def test_a_hand_edit_of_a_neighbour_updates_the_context(memory, store):
    memory.remember([turn("t-1", "Pottery is my new hobby."), turn("t-2", "Since when?")])
    path = rec(store, "t-1")
    path.write_text(path.read_text().replace("Pottery is my new hobby.", "Chess is my new hobby."))
    assert found(memory, "pottery") == []
    assert found(memory, "chess") == ["t-1", "t-2"]


def test_a_private_turn_lends_context_only_to_its_own_scope_s_recall(memory):
    """A window is taken over what the caller may read: the public turn after a private one is
    found through its words by that scope, never by anyone else."""
    memory.remember(
        [
            turn("t-1", "My pottery teacher is Ann.", scope={"name": "me", "visibility": "private"}),
            turn("t-2", "Say hi to her!"),
        ]
    )
    assert found(memory, "pottery") == []
    assert found(memory, "pottery", scope="you", visibility="private") == []
    assert found(memory, "pottery", scope="me", visibility="private") == ["t-1", "t-2"]
    memory.remember([turn("t-3", "Pottery again.", scope={"name": "me", "visibility": "private"})])
    assert found(memory, "hi") == ["t-2"]  # the public caller sees t-2 alone in its thread
    assert set(found(memory, "hi", scope="me", visibility="private")) == {"t-1", "t-2", "t-3"}


def test_links_lend_no_context_traversal_brings_them(memory):
    memory.remember(
        [
            {"id": "notes", "text": "Notes about the kiln firing schedule."},
            {"id": "reply", "text": "Agreed, see above.", "links": ["notes"]},
        ]
    )
    assert found(memory, "kiln") == ["notes"]
    bundle = memory.recall("kiln", mode="keyword", record=False).items
    assert [(h.record.id, h.tier) for h in bundle] == [("notes", "primary")]  # links point the other way
    memory.remember([{"id": "notes", "text": "Notes about the kiln firing schedule.", "links": ["reply"]}])
    bundle = memory.recall("kiln", mode="keyword", record=False).items
    assert [(h.record.id, h.tier) for h in bundle] == [("notes", "primary"), ("reply", "traversal")]


def test_a_rebuilt_index_gives_the_same_contexts(memory):
    memory.remember(
        [
            turn("t-1", "Pottery is my new hobby."),
            turn("t-2", "Since when?"),
            turn("t-3", "Pottery! Again?", thread="chat-2"),
            turn("t-4", "Yes.", thread="chat-2"),
        ]
    )
    before = found(memory, "pottery")
    memory.rebuild_index()
    assert found(memory, "pottery") == before
    assert set(before) == {"t-1", "t-2", "t-3", "t-4"}


def test_thread_and_order_helpers():
    assert thread_of({"thread": "a"}) == "a"
    assert thread_of({"conversation_id": 7}) == "7"
    assert thread_of({"thread": True, "thread_id": ""}) is None
    assert order_key(None, "t-2") < order_key(None, "t-10") < order_key(0.0, "t-1")
    assert order_key(-5.0, "x") < order_key(5.0, "x")


def test_unknown_lifecycle_states_are_refused_and_nothing_changes(memory, store):
    memory.remember([turn("t-1", "Pottery is my new hobby.")])
    path = rec(store, "t-1")
    before = path.read_bytes()
    with pytest.raises(Exception, match="cannot set lifecycle 'forgotten'"):
        memory.set_lifecycle("t-1", "forgotten")
    assert path.read_bytes() == before


@pytest.mark.slow
def test_a_strict_time_window_reads_past_the_first_candidates(memory):
    """Keyword recall over a conversation scores the best candidates by their own words with
    their windows; when too few of them pass (here a strict time window holding only the
    weakest matches), it reads further until the top k is full or nothing is left."""
    memory.remember(
        [
            turn(
                f"t-{i}",
                "alpha " + "filler " * i,
                created=f"2024-{'03' if i >= 90 else '04'}-{1 + i % 28:02d}T10:00:00Z",
            )
            for i in range(100)
        ]
    )
    hits = memory.recall(
        "alpha in March 2024",
        mode="keyword",
        top_k=5,
        depth=0,
        record=False,
        time_words="filter",
        now="2024-06-01T00:00:00Z",
    ).items
    assert len(hits) == 5 and all(int(hit.record.id[2:]) >= 90 for hit in hits)
