"""Honest feedback: progress for long runs (a bar on a real terminal, plain lines in a log), a
``--memory-dir`` that does not exist, and ``--explain`` in every recall mode."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ndjson, rec
from eidetic.cli.main import build_parser
from eidetic.index import database
from eidetic.stores.files import folder_index
from terminal import run_in_terminal

NOTES = ndjson(*({"id": f"n{i}", "text": f"deploy note number {i} about the {i % 7} servers"} for i in range(70)))


@pytest.mark.slow
def test_the_first_semantic_recall_after_no_embed_shows_a_bar_on_a_terminal(cli, store, env, monkeypatch):
    assert cli("remember", "--no-embed", stdin=NOTES).code == 0
    shown = run_in_terminal("recall", "deploy servers", "--mode", "hybrid", env=dict(os.environ))
    assert shown.code == 0, shown.err
    assert "embedding 70 texts for semantic recall (once: they were stored without vectors)" in shown.err
    assert "70/70" in shown.err and "\r" in shown.err  # a bar, redrawn in place
    assert "embedder: online" in shown.out and "\r" not in shown.out  # results stay clean

    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(env / "another-cache"))  # no vectors there yet
    logged = cli("recall", "deploy servers", "--mode", "hybrid")  # stderr is no terminal here
    assert logged.code == 0
    assert logged.err == "embedding 70 texts for semantic recall (once: they were stored without vectors) ...\n"
    assert cli("recall", "deploy servers", "--mode", "hybrid").err == ""  # once: the vectors are kept


def test_import_shows_a_bar_on_a_terminal_and_nothing_in_a_log(cli, env):
    dump = env / "dump.ndjson"
    dump.write_text(ndjson({"id": "a", "text": "one"}, {"id": "b", "text": "two"}))
    shown = run_in_terminal("import", str(dump), "--memory-dir", str(env / "dst"), env=dict(os.environ))
    assert shown.code == 0, shown.err
    assert "\rimporting: 2record [" in shown.err  # tqdm's counter (the number is not known up front)
    assert shown.out == "Imported 2 record(s) (ndjson): 2 written, 0 unchanged, 0 skipped.\n"
    logged = cli("import", str(dump), "--memory-dir", str(env / "dst2"))
    assert logged.code == 0 and logged.err == ""


def test_rebuilds_and_migrate_say_what_they_are_doing(cli, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setattr(folder_index, "LONG_READ", 3)  # as if three files took a while to read
    monkeypatch.setattr(database, "LONG_INDEX", 3)
    notes = ndjson(*({"id": f"r{i}", "text": f"record {i}"} for i in range(3)))
    files = ["--memory-dir", str(env / "notes")]
    assert cli("remember", *files, stdin=notes).code == 0
    rebuilt = cli("index", "--rebuild", *files)
    assert rebuilt.code == 0, rebuilt.err
    assert rebuilt.err == f"reading 3 record files of {env / 'notes'} ...\n"  # each file indexed as it is read
    sqlite = ["--backend", "sqlite", "--db", str(env / "notes.sqlite")]
    assert cli("remember", *sqlite, stdin=notes).code == 0
    assert cli("index", "--rebuild", *sqlite).err == "indexing 3 records ...\n"
    migrate = ("migrate", "--from", "files", "--from-dir", str(env / "notes"), "--to", "sqlite")
    copied = cli(*migrate, "--to-db", str(env / "m.sqlite"))
    assert copied.code == 0, copied.err
    assert copied.err.splitlines()[-1] == f"copying 3 records to {env / 'm.sqlite'} ..."
    again = cli(*migrate, "--to-db", str(env / "m.sqlite"), "--json")
    progress = {"progress": f"copying 3 records to {env / 'm.sqlite'}", "total": 3}
    assert [json.loads(line) for line in again.err.splitlines()][-1] == progress  # --json: stderr stays JSON
    monkeypatch.setattr(folder_index, "LONG_READ", 1000)
    monkeypatch.setattr(database, "LONG_INDEX", 10_000)
    assert cli("index", "--rebuild", *files).err == ""  # a short run says nothing


# Every verb that takes --memory-dir, with the arguments it needs; a new verb must be added here.
READERS = {
    "recall": ("recall", "x"),
    "list": ("list",),
    "show": ("show", "x"),
    "edit": ("edit", "x"),
    "overview": ("overview",),
    "doctor": ("doctor",),
    "sweep": ("sweep",),
    "consolidate": ("consolidate",),
    "context": ("context", "--prompt", "x"),
    "forget": ("forget", "x"),
    "restore": ("restore", "x"),
    "export": ("export",),
    "audit": ("audit",),
    "index": ("index",),
    "watch": ("watch",),
    "config": ("config",),
    "mcp": ("mcp",),
    "serve": ("serve",),
    "log": ("log",),
}
WRITERS = {"remember": ("remember", "a new note"), "import": ("import",), "capture": ("capture", "transcript.jsonl")}


def test_every_verb_with_memory_dir_is_covered_here():
    parser = build_parser()
    verbs = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    taking = {name for name, sub in verbs.items() if any("--memory-dir" in a.option_strings for a in sub._actions)}
    assert taking == set(READERS) | set(WRITERS)


@pytest.mark.parametrize("verb", sorted(READERS))
def test_a_memory_dir_that_does_not_exist_is_an_error(cli, env, verb):
    missing = env / "no" / "such" / "folder"
    run = cli(*READERS[verb], "--memory-dir", str(missing))
    assert run.code == 1 and run.out == ""
    assert run.err == (
        f"error: --memory-dir {missing} does not exist\n"
        "hint: check the path; 'eidetic remember' or 'eidetic import' creates a new store folder\n"
    )
    assert not (env / "no").exists()
    a_file = env / "a-file"
    a_file.write_text("")
    assert "is not a folder" in cli(*READERS[verb], "--memory-dir", str(a_file), "--json").err_json["message"]


def test_remember_and_import_create_the_folder_they_are_given(cli, env):
    new = env / "new" / "store"
    remembered = cli(*WRITERS["remember"], "--memory-dir", str(new), "--id", "n1")
    assert remembered.code == 0 and rec(new, "n1").exists()
    imported = cli("import", "--memory-dir", str(env / "other"), "--json", stdin=ndjson({"id": "i1", "text": "in"}))
    assert imported.code == 0 and rec(env / "other", "i1").exists()
    a_file = env / "a-file"
    a_file.write_text("")
    refused = cli(*WRITERS["remember"], "--memory-dir", str(a_file), "--json")
    assert refused.code == 1 and "is not a folder" in refused.err_json["message"]


@pytest.mark.parametrize("mode", ["exact", "keyword", "approximate", "hybrid", "fields"])
def test_explain_in_every_mode_says_what_the_score_means(cli, env, mode):
    where = ["--memory-dir", str(env / "notes")]
    notes = ndjson(
        {"id": "d1", "name": "deploy-rule", "text": "Never deploy on Fridays", "links": ["d2"]},
        {"id": "d2", "text": "Tuesdays are for the release train"},
        {"id": "d3", "text": "The deploy checklist lives in the wiki"},
    )
    assert cli("remember", *where, stdin=notes).code == 0
    query = ("recall", "deploy", "--mode", mode, "--top-k", "1", "--explain", "--no-record", *where)
    found = cli(*query, "--json")
    assert found.code == 0, found.err
    primary, linked = found.json["items"]
    assert (primary["id"], primary["explain"]["engine"]) == ("d1", mode)
    assert (linked["id"], linked["explain"]["engine"], linked["explain"]["parent_score"]) == (
        "d2",
        "traversal",
        primary["score"],
    )
    text = [line for line in cli(*query).out.splitlines() if line.startswith("  explain: ")]
    first = text[0].removeprefix("  explain: ")
    assert first.startswith(f"score {primary['score']:.4f} = ")
    assert any(line.startswith(f"  explain: {mode}: ") for line in text)  # what the number means
    assert f"  explain: score {linked['score']:.4f} = d1's score {primary['score']:.4f} x 0.5" in text
    if mode == "hybrid":
        parts = primary["explain"]
        blended = parts["alpha"] * parts["cosine_norm"] + (1 - parts["alpha"]) * parts["bm25_norm"]
        assert blended == pytest.approx(parts["raw_score"])


def test_a_python_listener_hears_each_step(env, monkeypatch):
    from eidetic import Memory

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setattr(folder_index, "LONG_READ", 150)
    folder = env / "notes"
    heard: list = []

    def listener(what: str, unit: str, total: int | None):
        heard.append((what, unit, total))
        return heard.append

    with Memory.open(memory_dirs=[folder]) as memory:
        memory.remember([{"id": f"n{i}", "text": f"note {i}"} for i in range(250)])
        assert heard == []  # a listener hears only what it was there for
        memory.progress.listener = listener
        memory.rebuild_index()
    assert heard == [(f"reading 250 record files of {folder}", "file", 250), 100, 200, 250]
