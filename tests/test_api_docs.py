"""docs/api.md cannot rot: every Python block on the page runs, as written, against a fresh
test home (its own assertions check what the prose promises)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO

BLOCKS = re.findall(r"^```python\n(.*?)^```$", (REPO / "docs" / "api.md").read_text(), re.DOTALL | re.MULTILINE)


def test_the_page_has_a_complete_example():
    assert BLOCKS and "Memory.open(" in BLOCKS[0]


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_api_doc_example_runs(number, env, monkeypatch, capsys):
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "store"))  # the examples name their folders; just in case
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")  # hybrid falls back to keyword: fast, and no model needed
    exec(compile(BLOCKS[number], f"docs/api.md block {number + 1}", "exec"), {})  # noqa: S102 (running the page is the point)
    printed = capsys.readouterr().out
    if number == 0:
        assert "'upserted': 2" in printed and "1 top_k must be an integer >= 1" in printed
