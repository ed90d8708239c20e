"""The terminal shows the content: recall and list tables wrap each record's text to the
terminal's width (its first lines; a doc chunk's text, not only its name) beside its date and
scope, at 80 and at 200 columns; ``list --sort created`` dates by creation; ``demo`` draws the
table; ``--json`` is indented on a terminal; ``audit`` lists the problems and counts the rest.
Pipes keep their one-line contracts. Real stores, the CLI on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ndjson
from eidetic.cli.render import width_of
from eidetic.cli.text_table import wrap
from terminal import run_on_terminal

ESC = re.compile(r"\x1b\[[0-9;]*m")
LONG = (
    "The nightly backup job copies the orders database to the S3 bucket at 2am; restore it with "
    "pg_restore --clean --if-exists into a scratch database first, check the row counts against the "
    "dashboard, and only then point the app at it. An untested backup is not a backup."
)
CHUNK = "Install eidetic with pip into a virtual environment, then run eidetic demo to see every recall mode."
RECORDS = (
    {"id": "backup-runbook", "type": "reference", "text": LONG},
    {"id": "guide-install", "type": "doc", "name": "docs/guide.md › Install", "text": CHUNK},
    {"id": "standup", "type": "note", "text": "Daily standup moved to 09:30 CET so the Montreal team can join."},
    {"id": "wide", "type": "note", "text": "每日站会改到九点半" * 12},  # two cells a character
)


@pytest.fixture
def notes(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")  # keyword recall: no model
    assert cli("remember", stdin=ndjson(*RECORDS)).code == 0
    return store


def on_terminal(*args: str, columns: int) -> str:
    """What ``eidetic ARGS`` shows on a colour terminal ``columns`` wide, escape codes removed."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    run = run_on_terminal(*args, env={**env, "TERM": "xterm-256color"}, columns=columns)
    assert run.code == 0, run.out
    return ESC.sub("", run.out)


def squeezed(text: str) -> str:
    """``text`` with its line breaks and indents gone: what a reader reads across lines."""
    return " ".join(text.split())


@given(st.text(st.sampled_from("ab 中\u0301-"), max_size=120), st.integers(1, 30), st.integers(1, 5))
def test_wrapped_lines_fit_keep_the_words_and_mark_a_cut(text, cells, most):
    lines = wrap(text, cells, most)
    assert 1 <= len(lines) <= most
    assert all(width_of(line) <= max(cells, 2) for line in lines)  # a wide character alone may not fit one cell
    whole = wrap(text, cells, 1000)
    if len(whole) <= most:
        assert lines == whole and "".join(lines).replace(" ", "") == "".join(text.split())
    else:
        assert lines[-1].endswith("…") and lines[:-1] == whole[: most - 1]


def test_wrap_breaks_between_words():
    assert wrap("one two three four five", 9, 5) == ["one two", "three", "four five"]
    assert wrap("one two three four five", 9, 2) == ["one two", "three …"]
    assert wrap("one two three four five", 7, 1) == ["one …"]  # a whole word dropped, not half of one
    assert wrap("a https://example.org/a/very/long/path b", 10, 9) == [
        "a",
        "https://ex",
        "ample.org/",
        "a/very/lon",
        "g/path b",
    ]


@pytest.mark.parametrize("columns", [80, 200])
def test_recall_on_a_terminal_shows_the_text_its_date_and_scope(cli, notes, columns):
    shown = on_terminal("recall", "backup database install", "--mode", "keyword", "--no-record", columns=columns)
    lines = shown.splitlines()
    assert all(width_of(line) <= columns for line in lines), shown
    assert lines[0].split()[:2] == ["#", "RELEVANCE"] and "SCOPE" in lines[0] and "CREATED" in lines[0]
    hits = cli("recall", "backup database install", "--mode", "keyword", "--no-record", "--json").json["items"]
    for hit in hits:
        row = next(line for line in lines if f" {hit['id']} " in line)
        assert "default/public" in row and hit["created"][:10] in row
    read = squeezed(shown)
    assert LONG[:150] in read  # the first lines of a long record, not 24 characters of it
    assert f"docs/guide.md › Install — {CHUNK}" in read  # a doc chunk: its name and its text
    side = columns >= 200
    assert ("NAME / TEXT" in lines[0]) == side  # wide: the text is a column; narrow: under its row
    first = next(n for n, line in enumerate(lines) if " backup-runbook " in line)
    assert (LONG[:20] in lines[first]) == side and (lines[first + 1].startswith("    ") or side)


def test_a_long_text_shows_its_first_lines_and_marks_the_rest(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    cli("remember", json.dumps({"id": "essay", "text": " ".join(f"word{n}" for n in range(400))}))
    shown = on_terminal("recall", "word7", "--mode", "keyword", "--no-record", columns=80)
    text = [line for line in shown.splitlines() if line.startswith("    word")]
    assert len(text) == 3 and text[-1].endswith(" …") and "word399" not in shown


def test_list_on_a_terminal_wraps_and_dates_by_the_order(cli, notes):
    for columns in (80, 200):
        shown = on_terminal("list", columns=columns)
        lines = shown.splitlines()
        assert all(width_of(line) <= columns for line in lines), shown
        assert lines[0].split() == ["ID", "TYPE", "SCOPE", "UPDATED", "RECALLS"] + (
            ["NAME", "/", "TEXT"] if columns >= 200 else []
        )
        assert "docs/guide.md › Install — Install eidetic" in squeezed(shown) and LONG[:100] in squeezed(shown)
        wide = [line.strip() for line in lines if "站会" in line]
        assert len(wide) == 2 and width_of(wide[0]) >= columns - 12  # the first line fills the width, in cells
    created = on_terminal("list", "--sort", "created", columns=80).splitlines()[0]
    assert "CREATED" in created and "UPDATED" not in created
    piped = cli("list", "--sort", "created").out.splitlines()[0]
    assert piped.split() == ["ID", "TYPE", "NAME", "/", "TEXT", "CREATED", "RECALLS"]
    assert "| created |" in cli("list", "--sort", "created", "--format", "markdown").out


def test_pipes_keep_one_line_a_record(cli, notes):
    listed = cli("list").out.splitlines()
    assert listed[0].split() == ["ID", "TYPE", "NAME", "/", "TEXT", "UPDATED", "RECALLS"] and len(listed) == 2 + len(
        RECORDS
    )
    assert any(LONG in line for line in listed)  # whole cells: nothing wrapped or cut
    table = cli("recall", "backup", "--mode", "keyword", "--format", "table", "--no-record").out.splitlines()
    assert "SCOPE" not in table[0] and sum("backup-runbook" in line for line in table) == 1


def test_json_is_indented_on_a_terminal_and_one_line_in_a_pipe(cli, notes):
    shown = on_terminal("list", "--json", columns=80)
    assert shown.startswith("{\n  ") and json.loads(shown)["total"] == len(RECORDS)
    piped = cli("list", "--json").out
    assert piped.count("\n") == 1 and json.loads(piped)["total"] == len(RECORDS)


@pytest.mark.slow
def test_demo_draws_the_table_on_a_terminal(env, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)  # the demo's semantic modes: the real model
    shown = on_terminal("demo", columns=80)
    assert shown.count("CREATED") == 5 and "query: " not in shown  # recall's table, not the pipe's text
    assert "The Orin Nano draws about 7 W idle" in squeezed(shown)
    assert all(width_of(line) <= 80 for line in shown.splitlines() if not line.startswith("$ "))  # commands whole
