"""A large batch's terms come from a helper process (``index.term_lines``): exactly what the
analysis here gives, in order, and a helper that cannot start, or dies midway, costs nothing but
the speed."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from eidetic.index import term_lines
from eidetic.index.term_lines import field_lines
from test_analyzer import HOSTILE

WORDS = "otters build dams running runs ran the THE and Beaver's İstanbul straße ﬁnance 2026 x 👍 \t\n".split(" ")


def rows(count: int, seed: int = 38) -> list[term_lines.Row]:
    rng = random.Random(seed)
    made = []
    for doc in range(count):
        text = HOSTILE[doc % len(HOSTILE)] + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30)))
        name = rng.choice([None, "", "Dam notes", " ".join(rng.choice(WORDS) for _ in range(3))])
        description = rng.choice([None, "about otters", HOSTILE[(doc * 7) % len(HOSTILE)]])
        made.append((doc, name, description, text, rng.random() < 0.3))
    return made


def here(batch: list[term_lines.Row]) -> list[term_lines.Lines]:
    return [field_lines(name, description, text, member) for _, name, description, text, member in batch]


@pytest.fixture
def small_helper_batches(monkeypatch):
    """A helper for batches of 50 rows or more, sent 7 at a time: every path, quickly."""
    monkeypatch.setattr(term_lines, "HELPER_MIN", 50)
    monkeypatch.setattr(term_lines, "CHUNK", 7)


def test_the_helper_gives_the_lines_analysed_here_in_order(small_helper_batches, monkeypatch):
    started = []
    start = term_lines._start
    monkeypatch.setattr(term_lines, "_start", lambda: started.append(1) or start())
    analysed_here = []
    original = term_lines.field_lines
    monkeypatch.setattr(term_lines, "field_lines", lambda *row: analysed_here.append(1) or original(*row))
    batch = rows(333)
    assert list(term_lines.term_lines(batch)) == here(batch)
    assert started == [1] and analysed_here == []  # the helper did all the work
    small = rows(49)
    assert list(term_lines.term_lines(small)) == here(small)
    assert started == [1] and len(analysed_here) == 49  # below the threshold: analysed here


def test_no_interpreter_to_start_means_analysed_here(small_helper_batches, monkeypatch):
    monkeypatch.setattr(term_lines.sys, "executable", "")
    batch = rows(120)
    assert list(term_lines.term_lines(batch)) == here(batch)
    monkeypatch.setattr(term_lines.sys, "executable", "/nonexistent/python")
    assert list(term_lines.term_lines(batch)) == here(batch)


@pytest.mark.parametrize("after", [0, 3, 10])
def test_a_helper_that_dies_midway_loses_no_row(small_helper_batches, monkeypatch, after):
    """Killed after ``after`` chunks came back: the rest is analysed here, none twice."""
    helpers: list[subprocess.Popen[bytes]] = []
    start = term_lines._start

    def started() -> subprocess.Popen[bytes] | None:
        helper = start()
        assert helper is not None
        helpers.append(helper)
        return helper

    monkeypatch.setattr(term_lines, "_start", started)
    batch = rows(200)
    got = []
    for place, lines in enumerate(term_lines.term_lines(batch)):
        if place == after * 7:
            helpers[0].kill()
            helpers[0].wait()
        got.append(lines)
    assert got == here(batch)
    assert helpers[0].returncode is not None


def test_a_helper_that_answers_garbage_loses_no_row(small_helper_batches, monkeypatch):
    """A helper that writes what is not its answer (here: another program) is set aside."""
    monkeypatch.setattr(
        term_lines,
        "_start",
        lambda: subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.stdout.write('not a pickle'); sys.stdout.flush()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        ),
    )
    batch = rows(90)
    assert list(term_lines.term_lines(batch)) == here(batch)


def test_a_bulk_remember_through_the_helper_is_searchable(store, monkeypatch):
    """End to end: records remembered in a batch the helper analysed rank as analysed here."""
    from eidetic import Memory

    monkeypatch.setattr(term_lines, "HELPER_MIN", 50)
    monkeypatch.setattr(term_lines, "CHUNK", 16)
    texts = [f"note {i}: otters build dams near camp {i % 7}" for i in range(120)] + ["the beaver lodge leaks"]
    with Memory.open() as memory:
        memory.remember([{"id": f"n{i}", "text": text} for i, text in enumerate(texts)])
        hits = memory.recall("beaver lodge", mode="keyword", record=False).items
        assert [hit.record.id for hit in hits][:1] == ["n120"]
        assert len(memory.recall("otters camp 3", mode="keyword", top_k=200, record=False).items) == 120


def test_the_helper_never_imports_from_the_working_folder(small_helper_batches, monkeypatch, tmp_path):
    """A repository the remember runs in may hold a ``pickle.py`` or ``tantivy.py``: the helper
    never runs it (the parent process does not either), and the lines are still right."""
    planted = tmp_path / "planted"
    (tmp_path / "pickle.py").write_text(f"open({str(planted)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    (tmp_path / "tantivy.py").write_text(f"open({str(planted)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(tmp_path)
    analysed_here = []
    original = term_lines.field_lines
    monkeypatch.setattr(term_lines, "field_lines", lambda *row: analysed_here.append(1) or original(*row))
    batch = rows(120)
    assert list(term_lines.term_lines(batch)) == here(batch)
    assert not planted.exists() and analysed_here == []
