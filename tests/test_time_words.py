"""A time named in a query: read relative to --now, shown, and blended into (or filtering) the
ranking on every backend; queries naming no time rank exactly as before."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from eidetic import Memory
from eidetic.timewords import window_in

NOW = datetime(2023, 11, 22, 15, 0, tzinfo=timezone.utc)  # a Wednesday


@pytest.mark.parametrize(
    ("question", "phrase", "start", "end"),
    [
        ("what did we decide last week?", "last week", "2023-11-13", "2023-11-20"),
        ("yesterday's standup", "yesterday", "2023-11-21", "2023-11-22"),
        ("notes from March 2023", "March 2023", "2023-03-01", "2023-04-01"),
        ("two days ago we broke the build", "two days ago", "2023-11-20", "2023-11-21"),
        ("what changed since Monday", "since Monday", "2023-11-20", "2023-11-22"),
        ("incidents since 2023-03-01", "since 2023-03-01", "2023-03-01", "2023-11-22"),
        ("what happened in May", "May", "2023-05-01", "2023-06-01"),  # the last May before now
        ("dinner on October 24, 2023?", "October 24, 2023", "2023-10-24", "2023-10-25"),
        ("the 3rd of May 2022", "3rd of May 2022", "2022-05-03", "2022-05-04"),
        ("releases in 2019", "2019", "2019-01-01", "2020-01-01"),
        ("last month's budget", "last month", "2023-10-01", "2023-11-01"),
        ("the 2023-03 report", "2023-03", "2023-03-01", "2023-04-01"),
    ],
)
def test_a_named_time_is_read_as_a_window_relative_to_now(question, phrase, start, end):
    window = window_in(question, NOW)
    assert window is not None
    assert window.phrase == phrase
    assert window.start.date().isoformat() == start
    assert window.end.date().isoformat() == end


@pytest.mark.parametrize(
    "question",
    [
        "what may help with flaky tests?",  # a verb, not the month
        "march the migration forward",
        "port 2019 is in use",  # a number, not a year
        "",
        "x" * 10_000 + " yesterday",  # only the start of a huge text is read
        "last 𝔴𝔢𝔢𝔨 \x00\u202e",
    ],
)
def test_words_that_name_no_time_give_no_window(question):
    assert window_in(question, NOW) is None


def _store(memory: Memory) -> None:
    memory.remember(
        [
            {"id": "old", "text": "We decided to use sqlite for the store, decided it twice", "created": "2023-10-02"},
            {"id": "new", "text": "We decided to use postgres for the store", "created": "2023-11-14T09:00:00Z"},
            {"id": "other", "text": "Lunch was good", "created": "2023-11-15"},
        ]
    )


def _ranked(memory: Memory, query: str, **options) -> list[str]:
    result = memory.recall(query, mode="keyword", now=NOW, record=False, depth=0, **options)
    return [hit.record.id for hit in result.items]


def test_records_of_the_named_time_rank_higher_or_alone(backend):
    with Memory.open() as memory:
        _store(memory)
        assert _ranked(memory, "what did we decide", time_words="blend") == ["old", "new"]  # no time named
        assert _ranked(memory, "what did we decide last week") == ["new", "old"]  # blend is the default
        assert _ranked(memory, "what did we decide last week", time_words="off") == ["old", "new"]
        assert _ranked(memory, "what did we decide last week", time_words="filter") == ["new"]
        assert _ranked(memory, "what did we decide in October 2023", time_words="filter") == ["old"]
        assert _ranked(memory, "what did we decide in 2021", time_words="filter") == []


def test_the_window_is_in_the_result_and_explained(store):
    with Memory.open() as memory:
        _store(memory)
        result = memory.recall("decided last week", mode="keyword", now=NOW, record=False, explain=True)
        window = result.to_dict()["time_window"]
        assert window == {
            "phrase": "last week",
            "start": "2023-11-13T00:00:00+00:00",
            "end": "2023-11-20T00:00:00+00:00",
            "mode": "blend",
            "searched": "decided",
        }
        factors = {hit.record.id: hit.explain["time_factor"] for hit in result.items}
        assert factors == {"new": 1.5, "old": 1.0}
        plain = memory.recall("decided", mode="keyword", now=NOW, record=False).to_dict()
        assert "time_window" not in plain


def test_the_cli_reads_now_and_shows_the_window(store, cli):
    with Memory.open() as memory:
        _store(memory)
    run = cli("recall", "decided last week", "--mode", "keyword", "--now", "2023-11-22T15:00", "--no-record")
    assert run.code == 0
    assert "time: 'last week' = 2023-11-13T00:00:00+00:00 to 2023-11-20T00:00:00+00:00 (blend)" in run.out
    assert run.out.index("id: new") < run.out.index("id: old")
    bad = cli("recall", "decided", "--now", "next tuesday-ish")
    assert bad.code == 1 and "--now must be an ISO date" in bad.err
    bad = cli("recall", "decided", "--time-words", "strict")
    assert bad.code != 0 and "strict" in bad.err


def test_the_event_clock_places_a_record_in_the_named_time_too(backend):
    """Recorded in November, about October: "in October" finds it by ``occurred``, or by a
    validity interval that overlaps October; a validity wholly before it, or none, does not."""
    with Memory.open() as memory:
        memory.remember(
            [
                {"id": "told", "text": "the outage review", "created": "2023-11-20", "occurred": "2023-10-12"},
                {"id": "held", "text": "the outage rule", "created": "2023-11-20", "valid_from": "2023-09-01"},
                {"id": "ended", "text": "the outage plan", "created": "2023-11-20", "valid_until": "2023-10-01"},
                {"id": "plain", "text": "the outage notes", "created": "2023-11-20"},
            ]
        )
        found = _ranked(memory, "outage in October 2023", time_words="filter")
        assert sorted(found) == ["held", "told"]
        result = memory.recall("outage in October 2023", mode="keyword", now=NOW, record=False, explain=True)
        factors = {hit.record.id: hit.explain["time_factor"] for hit in result.items}
        assert factors == {"told": 1.5, "held": 1.5, "ended": 1.0, "plain": 1.0}
        assert _ranked(memory, "outage last week", time_words="filter") == ["held"]  # still valid then
        found = _ranked(memory, "outage since November 20", time_words="filter")
        assert sorted(found) == ["ended", "held", "plain", "told"]  # all recorded then
