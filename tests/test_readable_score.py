"""A score a person can read: on the terminal, in the viewer and from ``eidetic context``, an
unrelated hit never looks confident. Each hit shows its relevance (the same scale for every query)
with a word, hits below the relevance floor are set apart or left out, and "nothing relevant" is
said in words. Real model, real stores, the CLI on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import hook_payloads as payload
from conftest import ndjson
from eidetic import Memory, RecallQuery
from eidetic.ranking import relevance
from eidetic.relevance_text import STRONG, below_floor, word
from terminal import run_on_terminal
from web_client import hit_ids, page, served

ESC = re.compile(r"\x1b\[[0-9;]*m")
MIXED = (  # the store: backups and preferences side by side
    {"id": "restore", "text": "To restore the database, stop the app and run pg_restore on last night's dump"},
    {"id": "backup", "text": "Database backups run nightly at 2am to the S3 bucket", "links": ["restore"]},
    {"id": "dark-mode", "text": "I prefer dark mode in every editor"},
    {"id": "lunch", "text": "Team lunch is on Fridays at the noodle place"},
    {"id": "garden", "text": "Tomatoes in the garden need water every morning in summer"},
    {"id": "cat", "text": "The office cat sleeps on the sofa all afternoon"},
)
RESTORE = "how do we restore the database"
UNRELATED = "protein folding of yeast mitochondria under oxidative stress"


@pytest.fixture
def mixed(cli, store, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)  # the real model
    assert cli("remember", stdin=ndjson(*MIXED)).code == 0
    return store


def on_terminal(*args: str, colour: bool = False) -> str:
    """What ``eidetic ARGS`` shows on a 100-column colour terminal, escape codes removed unless
    ``colour``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    run = run_on_terminal(*args, env={**env, "TERM": "xterm-256color"})
    assert run.code == 0, run.out
    return run.out if colour else ESC.sub("", run.out)


def test_words_follow_the_floor_s_verdict_and_the_number():
    assert word(None, None) == "" and word(2.0, None) == ""  # not judged: no word
    assert word(3.0, False) == "low"  # the floor's verdict comes first
    assert [word(value, True) for value in (STRONG, 1.0, 0.6)] == ["strong", "good", "weak"]
    placed = [
        ("primary", "a", None, True),
        ("primary", "b", None, False),
        ("traversal", "c", "b", None),  # linked from a hit below the floor: stands with it
        ("traversal", "d", "a", None),
        ("traversal", "e", "c", None),  # two hops from b
    ]
    assert below_floor(placed) == [False, True, True, False, True]


def test_the_terminal_table_reads_relevance_and_sets_unrelated_hits_apart(cli, mixed):
    coloured = on_terminal("recall", RESTORE, "--no-record", "--depth", "0", colour=True)
    assert "\x1b[2mdark-mode\x1b[0m" in coloured and "\x1b[36mrestore\x1b[0m" in coloured  # set apart: dim
    assert re.search(r"\x1b\[32m\d\.\d\d (strong|good|weak)", coloured)  # a relevant hit's relevance, green
    shown = ESC.sub("", coloured)
    lines = shown.splitlines()
    assert lines[0].split()[:3] == ["#", "RELEVANCE", "SCORE"]
    rule = next(n for n, line in enumerate(lines) if "below the relevance floor" in line)
    above, below = "\n".join(lines[1:rule]), "\n".join(lines[rule + 1 :])
    assert "restore" in above and "dark-mode" in below and "dark-mode" not in above
    judged = cli("recall", RESTORE, "--no-record", "--depth", "0", "--json").json["items"]
    low = [item for item in judged if not item["relevant"]]
    assert f"below the relevance floor: {len(low)} hits" in lines[rule] and len(low) >= 3
    for item in judged:  # each row: its number and its word, on the side of the rule its verdict says
        row = next(line for line in lines if f" {item['id']} " in line)
        said = word(item["relevance"], item["relevant"])
        assert f"{item['relevance']:.2f} {said}" in row and (row in below) == (said == "low")
    assert all(" low " not in line for line in above.splitlines())


@pytest.mark.slow
def test_nothing_relevant_is_said_in_words_and_the_floor_on_hides_the_rest(mixed):
    shown = on_terminal("recall", UNRELATED, "--no-record", "--depth", "0")
    assert shown.startswith(f"nothing relevant to “{UNRELATED}”; the nearest 5 hits, all below the relevance floor:")
    assert shown.count(" low ") == 5
    floored = on_terminal("recall", RESTORE, "--no-record", "--depth", "0", "--relevance-floor", "auto")
    assert "dark-mode" not in floored and "restore" in floored
    assert re.search(r"relevance floor 1: \d+ hits below it left out", floored)
    empty = on_terminal("recall", UNRELATED, "--no-record", "--relevance-floor", "auto")
    assert empty.startswith("(nothing relevant: 5 hits fell below the relevance floor")


def test_piped_text_and_markdown_say_the_same(cli, mixed):
    text = cli("recall", RESTORE, "--no-record", "--depth", "0").out
    head, _, tail = text.partition("── below the relevance floor:")
    assert "relevance: " in head and "id: restore" in head and "id: dark-mode" in tail and " low " in tail
    nothing = cli("recall", UNRELATED, "--no-record", "--depth", "0", "--format", "markdown").out
    assert nothing.startswith(f"**nothing relevant to “{UNRELATED}”") and "| relevance |" in nothing
    exact = cli("recall", "database", "--mode", "exact", "--no-record").out
    assert "relevance" not in exact and "below the relevance floor" not in exact  # any exact match is relevant


def test_json_keeps_every_field_and_adds_the_verdict(cli, mixed):
    """The CLI's JSON has every key the API gives without judging, plus ``relevance`` and
    ``relevant`` on each judged hit; the floor's own fields appear only when it is on."""
    with Memory.open() as memory:
        before = memory.recall(RecallQuery(RESTORE, record=False)).to_dict()
    after = cli("recall", RESTORE, "--no-record", "--json").json
    assert set(after) == set(before)
    assert [item["id"] for item in after["items"]] == [item["id"] for item in before["items"]]  # nothing dropped
    for old, new in zip(before["items"], after["items"]):
        added = {"relevance", "relevant"} if new["tier"] == "primary" else set()
        assert set(new) == set(old) | added, new["id"]
        assert new["score"] == pytest.approx(old["score"], rel=1e-6)
    floored = cli("recall", RESTORE, "--no-record", "--json", "--relevance-floor", "auto").json
    assert set(floored) == set(before) | {"relevance_floor", "below_floor"}
    assert all(item["relevant"] for item in floored["items"] if item["tier"] == "primary")


def test_keyword_judging_loads_no_model(mixed):
    code = (
        "import sys, json; from eidetic.cli.main import main\n"
        f"main(['recall', {RESTORE!r}, '--mode', 'keyword', '--no-record', '--json'])\n"
        "print(json.dumps([m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    out, loaded = proc.stdout.strip().rsplit("\n", 1)
    assert json.loads(loaded) == [] and json.loads(out)["items"][0]["relevant"] is True


def test_another_scope_s_private_records_do_not_move_the_relevance(cli, store, monkeypatch):
    """The idf behind a keyword hit's relevance counts only what the caller may read."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    mine = {"id": "kiln", "text": "The kiln fires at cone 6 on Thursdays"}
    assert cli("remember", "--scope", "bob", stdin=ndjson(mine)).code == 0
    asked = ("recall", "kiln cone", "--mode", "keyword", "--no-record", "--scope", "bob", "--json")
    before = cli(*asked).json["items"][0]["relevance"]
    secrets = [{"id": f"s{n}", "text": f"alice kiln cone secret {n}"} for n in range(20)]
    assert cli("remember", "--scope", "alice", "--visibility", "private", stdin=ndjson(*secrets)).code == 0
    after = cli(*asked).json
    assert [item["id"] for item in after["items"]] == ["kiln"]
    assert after["items"][0]["relevance"] == pytest.approx(before, rel=1e-9)


def test_the_viewer_folds_hits_below_the_floor_under_a_count(cli, mixed):
    judged = cli("recall", RESTORE, "--no-record", "--json").json["items"]
    with served() as client:
        shown = page(client.get("/", params={"q": RESTORE}))
        answer = [li["data-id"] for li in shown.select("#results > ol.hits > li.hit")]
        folded = shown.select_one("details.below-floor")
        apart = [li["data-id"] for li in folded.select("li.hit")]
        assert "restore" in answer and "dark-mode" in apart and folded.get("open") is None
        assert apart == [item["id"] for item in judged if not item["relevant"]]
        assert f"{len(apart)} hits below the relevance floor" in folded.select_one("summary").text
        assert f"{len(apart)} below the relevance floor, folded away" in shown.select_one("p.count").text
        strong = shown.select_one('li.hit[data-id="restore"] .relevance').text
        assert re.fullmatch(r"relevance \d+\.\d\d · (strong|good|weak)", strong)
        nothing = page(client.get("/", params={"q": UNRELATED}))
        said = " ".join(nothing.select_one("p.nothing-relevant").text.split())
        assert said == f"Nothing relevant to “{UNRELATED}”: no hit clears the relevance floor."
        assert not nothing.select("#results > ol.hits") and len(nothing.select("details.below-floor li.hit")) == 5
        assert hit_ids(client.get("/", params={"q": "database", "mode": "exact"}))  # exact: not judged
        assert not page(client.get("/", params={"q": "database", "mode": "exact"})).select(".relevance")


def test_context_never_gives_a_hit_below_the_floor_and_says_why_on_a_terminal(cli, mixed, env):
    given = cli("context", "--prompt", RESTORE, "--json").json
    assert given["items"] and given["below_floor"] >= 1
    share = relevance.HIT_SHARES["hybrid"]
    assert all(item["relevance"] >= share for item in given["items"])  # nothing below the floor's share
    assert "dark-mode" not in [item["id"] for item in given["items"]]
    assert cli("context", "--prompt", UNRELATED).out == ""  # a hook's pipe gets nothing at all
    told = on_terminal("context", "--prompt", UNRELATED)
    assert told.strip() == f"(nothing relevant to “{UNRELATED}”: 5 hits fell below the relevance floor)"
    answer = payload.handled("prompt", payload.prompt(env / "work", UNRELATED), env / "work")
    assert answer["stdout"] == ""
    assert answer["log"][0].endswith(", 5 below the relevance floor: nothing relevant")
