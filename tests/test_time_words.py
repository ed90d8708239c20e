"""A time named in a query: read relative to --now, shown, and blended into (or filtering) the
ranking on every backend; queries naming no time rank exactly as before."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from eidetic import Memory
from eidetic.timewords import read_question, window_in
from web_client import hit_ids, page, served

NOW = datetime(2023, 11, 22, 15, 0, tzinfo=UTC)  # a Wednesday


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


def test_a_time_only_question_lists_the_windows_records_on_every_backend(backend):
    """Nothing left to search: the window's records, freshest first, under the scope rule."""
    with Memory.open() as memory:
        _store(memory)
        secret = {"id": "secret", "text": "x", "created": "2023-11-16", "scope": {"name": "b", "visibility": "private"}}
        memory.remember([secret])
        assert _ranked(memory, "last week") == ["other", "new"]
        assert _ranked(memory, "what was in October 2023?", time_words="filter") == ["old"]
        assert _ranked(memory, "last week", types=["lesson"]) == []
        mine = memory.recall("last week", mode="keyword", now=NOW, record=False, scope="b", visibility="private")
        assert [hit.record.id for hit in mine.items] == ["secret", "other", "new"]


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


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("what did we decide last week?", "what did we decide?"),
        ("yesterday's standup", "standup"),
        ("notes from March 2023 on pricing", "notes on pricing"),
        ("incidents since 2023-03-01", "incidents"),
        ("what happened in May", "what happened"),
        ("last week?", "?"),
    ],
)
def test_the_time_words_are_taken_out_of_the_words_searched(question, searched):
    named = read_question(question, NOW)
    assert named.window is not None and named.words == searched


@pytest.mark.parametrize("question", ["the weekly report", "a week of testing", "what may help", "daily standups"])
def test_ordinary_uses_of_time_words_stay_search_words(question):
    named = read_question(question, NOW)
    assert named.window is None and named.words == question


# The guide's (docs/guide.md) "what did we decide last week?", asked on Tuesday 2026-12-01.
TEAM = [
    {"id": "lunch", "text": "Team lunch is on Thursday this week", "created": "2026-11-30T09:00:00Z"},
    {"id": "pricing-nov", "text": "We decided to raise the Pro plan to $12 a month", "created": "2026-11-25T15:00:00Z"},
    {"id": "pricing-oct", "text": "Pricing decision: we keep the free tier for students", "created": "2026-10-20"},
    {"id": "db", "text": "Decision: the orders database moves to postgres", "created": "2026-11-26T10:00:00Z"},
    {"id": "weekly", "text": "The weekly report goes out on Mondays", "created": "2026-11-16T08:00:00Z"},
    {"id": "testing", "text": "We planned a week of testing before the launch", "created": "2026-11-10T08:00:00Z"},
    {"id": "standup", "text": "Standup moved to 09:30 this week", "created": "2026-11-24T08:00:00Z"},
]
ASKED = "2026-12-01T10:00"


def _asked(cli, question: str, *flags: str) -> dict:
    run = cli("recall", question, "--now", ASKED, "--no-record", "--json", *flags)
    assert run.code == 0, run.err
    return run.json


def test_the_readme_question_gives_last_weeks_decisions_first(store, cli):
    assert cli("remember", "--json", stdin="\n".join(json.dumps(r) for r in TEAM)).code == 0
    answer = _asked(cli, "what did we decide last week?")  # hybrid, the real model
    found = [item["id"] for item in answer["items"]]
    assert set(found[:2]) == {"pricing-nov", "db"}, found  # "week" no longer finds this week's lunch
    assert "lunch" not in found[:2] and found.index("db") < found.index("pricing-oct")
    assert answer["time_window"]["phrase"] == "last week"
    assert answer["time_window"]["searched"] == "what did we decide?"
    literal = _asked(cli, "what did we decide last week?", "--time-words", "off", "--top-k", "7")
    assert "time_window" not in literal and "lunch" in [item["id"] for item in literal["items"]]  # "week" matched
    for question, first in (("the weekly report", "weekly"), ("a week of testing", "testing")):
        ordinary = _asked(cli, question)
        assert "time_window" not in ordinary and ordinary["items"][0]["id"] == first


def test_a_question_that_is_only_a_time_lists_that_windows_records_freshest_first(store, cli):
    assert cli("remember", "--json", stdin="\n".join(json.dumps(r) for r in TEAM)).code == 0
    answer = _asked(cli, "last week?", "--explain")
    assert [item["id"] for item in answer["items"]] == ["db", "pricing-nov", "standup"]  # newest first
    assert answer["time_window"]["searched"] == "" and answer["embedder"]["model"] is None  # no model loaded
    assert all(item["explain"]["engine"] == "window" for item in answer["items"])
    assert [item["id"] for item in _asked(cli, "last week", "--mode", "keyword", "--top-k", "1")["items"]] == ["db"]
    narrowed = _asked(cli, "October 2026?", "--until", "2026-10-19")
    assert narrowed["items"] == [] and narrowed["time_window"]["searched"] == ""
    text = cli("recall", "yesterday", "--now", ASKED, "--no-record", "--explain")
    assert text.code == 0 and "nothing else to search" in text.out and "id: lunch" in text.out
    assert "window: recorded in 'yesterday'" in text.out


def test_date_flags_take_durations_and_words(store, cli):
    assert cli("remember", "--json", stdin="\n".join(json.dumps(r) for r in TEAM)).code == 0

    def found(*flags: str) -> set[str]:
        return {item["id"] for item in _asked(cli, "e", "--mode", "exact", "--top-k", "20", *flags)["items"]}

    assert found("--since", "7d") == {"lunch", "pricing-nov", "db"}  # since 2026-11-24T10:00
    assert found("--since", "last monday") == {"lunch"}  # the 30th, all day
    november = {r["id"] for r in TEAM} - {"pricing-oct"}
    assert found("--since", "last month", "--until", "last month") == november
    assert found("--since", "3 weeks ago", "--until", "2w") == {"weekly"}
    assert found("--as-of", "October") == {"pricing-oct"}  # the store at the end of October
    assert found("--as-of", "last month") == november | {"pricing-oct"}  # ... and of November
    assert found("--since", "10 000 000 years ago") == november | {"pricing-oct"}  # from the calendar's start
    assert cli("list", "--since", "10 000 000 years ago", "--json").json["total"] == len(TEAM)  # list takes them too
    assert cli("list", "--until", "10 000 000 years ago", "--json").json["total"] == 0
    bad = cli("recall", "the", "--since", "whenever", "--json")
    assert bad.code == 1 and "7d" in bad.err_json["remediation"] and "Traceback" not in bad.err


HOSTILE_QUESTIONS = [
    "deploys 9999-12-31",
    "deploys 0001-01-01",
    "deploys since 0001-01-01",
    "deploys in 10000",
    "deploys 10 000 000 years ago",
    "deploys 10000-01-01",
]
HOSTILE_FLAGS = [
    ("--now", "0001-01-01"),
    ("--now", "9999-12-31T23:59:59"),
    ("--as-of", "9999-12-31"),
    ("--as-of", "0001-01-01"),
    ("--as-of", "10 000 000 years ago"),
    ("--since", "0001-01-01"),
    ("--since", "10 000 000 years ago"),
    ("--until", "9999-12-31"),
]


def _deploys(cli) -> None:
    record = {"id": "deploys", "text": "Deploys run on Tuesdays", "created": "2026-11-24"}
    assert cli("remember", json.dumps(record)).code == 0


def test_times_beyond_the_calendar_are_held_or_named_never_a_traceback(store, cli, monkeypatch):
    """Year 1, 9999, 10000 and "10 000 000 years ago", in the question and in every date flag,
    through the CLI (recall and context): an answer, or an error with a hint."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    _deploys(cli)
    for question in HOSTILE_QUESTIONS:
        for flags in ((), ("--now", "0001-01-01T00:00"), ("--now", "9999-12-31T23:59")):
            run = cli("recall", question, "--mode", "keyword", "--no-record", "--json", *flags)
            assert run.code == 0 and [item["id"] for item in run.json["items"]] == ["deploys"], (question, run.err)
        context = cli("context", "--prompt", question, "--mode", "keyword", "--format", "json")
        assert context.code == 0 and context.json["event"] == "prompt", (question, context.err)
    far = cli("recall", "deploys 10 000 000 years ago", "--mode", "keyword", "--no-record", "--json")
    assert "beyond the calendar" in far.err and "time_window" not in far.json  # left as words, said so
    held = cli("recall", "deploys 9999-12-31", "--mode", "keyword", "--no-record", "--json").json["time_window"]
    assert held["start"] == "9999-12-31T00:00:00+00:00" and held["end"] == "9999-12-31T23:59:59+00:00"
    for flag, value in HOSTILE_FLAGS:
        run = cli("recall", "deploys yesterday", "--mode", "keyword", "--no-record", "--json", flag, value)
        assert run.code == 0, (flag, value, run.err)
    for flag in ("--since", "--until", "--as-of"):
        run = cli("recall", "deploys", flag, "10000-01-01", "--json")
        assert run.code == 1 and run.err_json["remediation"] and "Traceback" not in run.err, flag


def test_the_viewer_searches_times_beyond_the_calendar(store, cli, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    _deploys(cli)
    with served() as client:
        for question in HOSTILE_QUESTIONS:
            answer = client.get("/", params={"q": question, "mode": "keyword"})
            assert answer.status_code == 200 and hit_ids(answer) == ["deploys"], question
        for flag, value in HOSTILE_FLAGS:
            if flag != "--now":  # the viewer asks at the present moment
                answer = client.get(
                    "/", params={"q": "deploys yesterday", "mode": "keyword", flag[2:].replace("-", "_"): value}
                )
                assert answer.status_code == 200, (flag, value)
        far = page(client.get("/", params={"q": "deploys 10 000 000 years ago", "mode": "keyword"}))
        assert "beyond the calendar" in far.select_one("p.warning").text
        wrong = client.get("/", params={"q": "deploys", "as_of": "10000-01-01"})
        assert wrong.status_code == 400 and "as_of is not a date" in page(wrong).select_one(".message").text
