"""``--json`` means the same on every verb: JSON on stdout only; on stderr one JSON object a line
(a warning ``{"warning"}``, an error ``{"code", "message", "remediation"}``); exit codes as
without it. Every verb that has ``--json`` is run here, once to succeed and once to fail, and its
JSON is checked against the vocabulary (tests/test_vocabulary.py); a verb added without a case
here fails the coverage test."""

from __future__ import annotations

import argparse
import io
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from eidetic.cli import memory_recall
from eidetic.cli.main import build_parser
from test_vocabulary import assert_one_vocabulary

ERROR_KEYS = {"code", "message", "remediation"}


def cases(env: Path) -> dict[tuple[str, ...], tuple[list[str], list[str]]]:
    """verb words -> (arguments that succeed, arguments that fail)."""
    dump = env / "dump.ndjson"
    dump.write_text(json.dumps({"id": "imported", "text": "from a file"}) + "\n")
    (env / "skills-here").mkdir(exist_ok=True)
    (env / "said.txt").write_text("remember that json is everywhere\n")
    (env / "broken.json").write_text("{not json")
    hooks_file = ["claude", "--file", str(env / "claude-settings.json")]
    broken = ["claude", "--file", str(env / "broken.json")]
    return {
        ("remember",): (['{"id": "n1", "text": "json everywhere"}'], ['{"id": 1']),
        ("recall",): (["json", "--mode", "keyword"], ["json", "--top-k", "0"]),
        ("sweep",): (["--dry-run"], ["--now", "yesterday"]),
        ("consolidate",): ([], ["--threshold", "2"]),
        ("context",): (["--prompt", "json", "--mode", "keyword"], ["--prompt", "json", "--budget", "-5"]),
        ("capture",): ([str(env / "said.txt"), "--dry-run"], [str(env / "missing.jsonl")]),
        ("hooks", "install"): (hooks_file, broken),
        ("hooks", "status"): (hooks_file, ["claude", "--bogus"]),
        ("hooks", "uninstall"): (hooks_file, broken),
        ("hooks", "stop"): ([], ["--bogus"]),
        ("forget",): (["n1"], ["no-such-id"]),
        ("restore",): (["n1"], ["no-such-id"]),
        ("list",): (["--sort", "name"], ["--limit", "0"]),
        ("show",): (["n1"], ["no-such-id"]),
        ("edit",): (["n1"], ["no-such-id"]),  # the editor: `true` (the seeded fixture), which changes nothing
        ("overview",): ([], ["--visibility", "secret"]),
        ("doctor",): ([], ["--visibility", "secret"]),
        ("import",): ([str(dump)], [str(env / "missing.ndjson")]),
        ("export",): ([], ["--visibility", "secret"]),
        ("audit",): ([], ["--stale-months", "0"]),
        ("log",): (["--member", "nobody"], ["--limit", "0"]),
        ("tokens", "add"): (["json-member", "--scope", "team"], ["bad name!", "--scope", "team"]),
        ("tokens", "list"): ([], ["--bogus"]),
        ("tokens", "revoke"): (["json-member"], ["nobody-here"]),
        ("index",): ([], ["--visibility", "secret"]),
        ("migrate",): (
            ["--from", "files", "--to", "sqlite", "--to-db", str(env / "copy.sqlite")],
            ["--from", "files", "--to", "files"],
        ),
        ("config",): ([], ["--visibility", "secret"]),
        ("explain",): (["recall"], ["nonsense"]),
        ("demo",): ([], ["--bogus"]),
        ("skills", "install"): ([str(env / "skills-here")], [str(env / "no-such-folder")]),
        ("watch",): (None, ["--memory-dir", str(env / "nothing-here")]),  # succeeding: a process, below
        ("mcp",): (None, ["--visibility", "secret"]),  # succeeding: the protocol, below
        ("serve",): (None, ["--visibility", "secret"]),  # succeeding: a server (test_serve_mcp.py)
    }


def verbs_with_json(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found = {words} if words and any("--json" in a.option_strings for a in parser._actions) else set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found |= verbs_with_json(child, (*words, name))
    return found


def ctrl_c_reaches_it() -> None:
    """In the child before it starts: SIGINT as a terminal gives it. A test runner started in
    the background of a script inherits SIGINT ignored, and its children would too."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def check_stderr(err: str) -> list[dict]:
    """Every line of stderr is one JSON object."""
    lines = [json.loads(line) for line in err.splitlines()]
    assert all(isinstance(line, dict) for line in lines), err
    return lines


@pytest.fixture
def seeded(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")  # hybrid falls back with a warning: warnings are JSON too
    monkeypatch.setenv("EDITOR", "true")  # eidetic edit: an editor that saves the file unchanged
    monkeypatch.delenv("VISUAL", raising=False)
    assert cli("remember", '{"id": "seed", "text": "json seeds"}').code == 0
    return store


def test_every_verb_with_json_has_a_case(env):
    assert verbs_with_json(build_parser()) == set(cases(env))


def test_every_verb_prints_only_json(cli, env, seeded):
    for words, (good, bad) in cases(env).items():
        if good is not None:
            run = cli(*words, *good, "--json")
            assert run.code == 0, (words, run.err)
            if words == ("export",):  # NDJSON: one record a line
                assert [json.loads(line)["id"] for line in run.out.splitlines()]
            else:
                assert isinstance(json.loads(run.out), dict), words
            for line in run.out.splitlines():
                assert_one_vocabulary(json.loads(line), " ".join(words))
            assert not any("error" in line for line in check_stderr(run.err))
        run = cli(*words, *bad, "--json")
        assert run.code in (1, 2) and run.out == "", (words, run.out)
        error = check_stderr(run.err)[-1]
        assert set(error) == ERROR_KEYS and error["code"] == run.code and error["message"], words


def test_warnings_are_json_with_json_and_text_without(cli, seeded):
    run = cli("recall", "json", "--json")  # hybrid without an embedder: a warning
    assert run.code == 0 and json.loads(run.out)["items"]
    warnings = check_stderr(run.err)
    assert warnings and all(set(w) == {"warning"} and "semantic recall unavailable" in w["warning"] for w in warnings)
    assert cli("recall", "json").err.startswith("warning: semantic recall unavailable")


def test_a_partial_import_gives_its_report_and_one_error(cli, env, seeded):
    dump = env / "half.ndjson"
    dump.write_text('{"id": "fine", "text": "ok"}\n{"id": 3}\n')
    run = cli("import", str(dump), "--json")
    assert run.code == 1 and json.loads(run.out)["skipped"][0]["path"] == str(dump)
    assert check_stderr(run.err)[-1]["code"] == 1


def test_memory_recall_prints_only_json(env):
    folder = env / "agent-memory"
    folder.mkdir()
    (folder / "tip.md").write_text("---\nname: tip\ntype: feedback\n---\nUse json everywhere.\n")
    for argv, code in ((["json", "--memory-dir", str(folder)], 0), (["json", "--limit", "0"], 1)):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            assert memory_recall.main([*argv, "--json"]) == code
        if code == 0:
            assert json.loads(out.getvalue())["results"][0]["id"] == "tip" and err.getvalue() == ""
        else:
            assert out.getvalue() == "" and set(check_stderr(err.getvalue())[-1]) == ERROR_KEYS


def _lines(proc: subprocess.Popen, count: int, timeout: float = 30) -> list[dict]:
    """The next ``count`` lines of the process's stdout, each parsed as JSON."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    found: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        if selector.select(timeout=0.2):
            line = proc.stdout.readline()
            if not line:
                break
            found.append(json.loads(line))
    return found


def test_watch_json_reports_on_stdout_as_json_lines(cli, seeded):
    proc = subprocess.Popen(
        [sys.executable, "-m", "eidetic", "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        preexec_fn=ctrl_c_reaches_it,
    )
    try:
        assert _lines(proc, 1) == [{"watching": str(seeded)}]
        event: list[dict] = []
        for attempt in range(20):  # the watcher starts just after saying so: write until it reports
            (seeded / "by-hand.md").write_text(f"---\nid: by-hand\n---\nwritten by hand {attempt}\n")
            event = _lines(proc, 1, timeout=1)
            if event:
                break
        assert event and set(event[0]) == {"store", "added", "updated", "removed"}
        assert event[0]["store"] == str(seeded) and event[0]["added"] + event[0]["updated"] == 1
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and all(json.loads(line) for line in out.splitlines())
    assert err == "", err


def test_mcp_json_stdout_is_the_protocol(seeded):
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic", "mcp", "--json"],
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies and replies[0]["id"] == 1 and replies[0]["result"]["serverInfo"]["name"] == "eidetic"
