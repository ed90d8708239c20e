from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import rec, run_process
from eidetic.stores.backends import NAMES


def test_help_version_and_no_args(cli):
    assert cli().code == 0 and "usage: eidetic" in cli().out
    run = cli("--help")
    assert "remember" in run.out and "recall" in run.out
    for verb in ("remember", "recall", "index", "demo"):
        assert cli(verb, "--help").code == 0


def test_version_flag(env):
    run = run_process("--version")
    assert run.code == 0 and run.out.startswith("eidetic ")


def test_errors_are_structured_and_only_on_stderr(cli, store):
    run = cli("recall", "x", "--top-k", "0", "--json")
    assert run.code == 1 and run.out == ""
    assert set(run.err_json) == {"code", "message", "remediation"} and run.err_json["code"] == 1
    text = cli("recall", "x", "--top-k", "0")
    assert text.err.startswith("error: ") and "\nhint: " in text.err and text.out == ""
    unknown = cli("frobnicate", "--json")
    assert unknown.code == 1 and "--help" in unknown.err_json["remediation"]
    backend = cli("recall", "x", "--backend", "mongo", "--json")
    assert backend.code == 1 and "not offered" in backend.err_json["message"]
    assert "postgres" in backend.err_json["remediation"] and "neo4j" in backend.err_json["remediation"]
    other = cli("recall", "x", "--backend", "cassandra", "--json")
    assert other.code == 1 and other.err_json["remediation"] == "available backends: " + ", ".join(NAMES)
    assert cli("remember", "{bad json", "--json").code == 1
    assert cli("remember", "--json").err_json["message"] == "no record given"
    assert not store.exists()


def test_environment_errors_exit_2(cli, env, monkeypatch):
    blocker = env / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(blocker / "store"))
    run = cli("remember", '{"text": "x"}', "--json")
    assert run.code == 2 and "cannot create the store folder" in run.err_json["message"]


def test_reads_never_create_directories(cli, env):
    home = env / "home"
    before = sorted(p for p in home.rglob("*"))
    run = cli("recall", "anything", "--mode", "keyword", "--json")
    assert run.code == 0 and run.json["items"] == []
    cli("index", "--json")
    assert sorted(p for p in home.rglob("*")) == before


def git_repo(path):
    path.mkdir(parents=True, exist_ok=True)
    (path / ".git").mkdir()
    return path


def test_store_routing_repo_home_and_override(cli, env, monkeypatch):
    repo = git_repo(env / "repo")
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    cli("remember", '{"id": "pub", "text": "public quokka"}')
    cli("remember", '{"id": "priv", "text": "private quokka"}', "--scope", "me", "--visibility", "private")
    assert rec(repo / ".eidetic" / "memory", "pub").exists()
    assert rec(env / "home" / ".eidetic" / "memory", "priv").exists()
    assert not rec(repo / ".eidetic" / "memory", "priv").exists()
    found = [
        i["id"]
        for i in cli(
            "recall", "quokka", "--mode", "keyword", "--scope", "me", "--visibility", "private", "--json"
        ).json["items"]
    ]
    assert sorted(found) == ["priv", "pub"]
    monkeypatch.chdir(env / "work")  # outside the repo: public records go home
    cli("remember", '{"id": "outside", "text": "outside quokka"}')
    assert rec(env / "home" / ".eidetic" / "memory", "outside").exists()
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "override"))
    cli("remember", '{"id": "ov", "text": "override quokka"}', "--visibility", "private", "--scope", "me")
    assert rec(env / "override", "ov").exists()
    explicit = env / "explicit"
    cli("remember", '{"id": "ex", "text": "explicit quokka"}', "--memory-dir", str(explicit))
    assert rec(explicit, "ex").exists()


def test_home_copy_wins_and_updates_stay_in_their_store(cli, env, monkeypatch):
    repo = git_repo(env / "repo")
    monkeypatch.chdir(repo)
    home_store = env / "home" / ".eidetic" / "memory"
    home_store.mkdir(parents=True)
    (home_store / "both.md").write_text("---\nid: both\n---\nhome copy quokka\n")
    cli("remember", '{"id": "repo-only", "text": "repo quokka"}')
    repo_store = repo / ".eidetic" / "memory"
    (repo_store / "both.md").write_text("---\nid: both\n---\nrepo copy quokka\n")
    items = cli("recall", "quokka", "--mode", "keyword", "--json").json["items"]
    texts = {i["id"]: i["text"] for i in items}
    assert texts == {"both": "home copy quokka", "repo-only": "repo quokka"}
    cli("remember", '{"id": "both", "text": "home copy updated"}')
    assert "home copy updated" in (home_store / "both.md").read_text()
    assert "repo copy quokka" in (repo_store / "both.md").read_text()


def test_demo_runs_in_a_temporary_store(env):
    run = run_process("demo")
    assert run.code == 0, run.err
    assert "Remembered 12 sample memories" in run.out
    assert "--mode exact" in run.out and "--mode keyword" in run.out and "--mode hybrid" in run.out
    assert "--mode approximate" in run.out and "embedder: online" in run.out
    assert not (env / "home" / ".eidetic").exists()


def test_help_and_keyword_and_exact_recall_do_not_import_heavy_modules(store):
    assert run_process("remember", '{"id": "a", "text": "quokka"}', "--no-embed").code == 0
    time.sleep(0.1)
    run_process("recall", "quokka", "--mode", "keyword")  # re-checks the just-written ("racy") file
    for args in (
        ["--help"],
        ["recall", "quokka", "--mode", "keyword", "--json"],
        ["recall", "quokka", "--mode", "exact", "--json"],
    ):
        code = (
            "import sys; from eidetic.cli.main import main\n"
            f"try:\n    main({args!r})\nexcept SystemExit as exit:\n    assert not exit.code\n"
            "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors', 'httpx', 'psycopg', 'pgvector', 'yaml',"
            " 'usearch', 'mcp', 'pydantic', 'shtab', 'detect_secrets', 'requests')"
            " if m in sys.modules))"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
        assert proc.returncode == 0, proc.stderr
        assert ('"id": "a"' in proc.stdout) if "recall" in args else ("recall" in proc.stdout)
        assert json.loads(proc.stdout.strip().splitlines()[-1].replace("'", '"')) == []


def test_a_recall_process_imports_none_of_memorys_write_side(store):
    """``Memory`` makes its parts other than recall when first used, so a process that only
    recalls does not import them (~15 modules, ~14 ms a process: docs/benchmarks.md); a
    remember does."""
    assert run_process("remember", '{"id": "a", "text": "quokka"}', "--no-embed").code == 0
    parts = [f"eidetic.memory.{p}" for p in ("writes", "curation", "browse", "consolidation", "health", "editing")]
    code = (
        "import sys; from eidetic.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    assert not exit.code\n"
        f"print(sorted(m for m in {[*parts, 'eidetic.credentials']!r} if m in sys.modules))"
    )

    def imported(*args: str) -> list[str]:
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=os.environ.copy()
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1].replace("'", '"'))

    assert imported("recall", "quokka", "--mode", "keyword", "--json") == []
    wrote = imported("remember", "--no-embed", "--json", '{"id": "b", "text": "wombat"}')
    assert "eidetic.memory.writes" in wrote and "eidetic.credentials" in wrote


def test_each_verb_module_registers_the_verbs_the_command_line_looks_for():
    import argparse
    from importlib import import_module

    from eidetic.cli.main import MORE_VERBS, VERBS, add_common, module_of

    for name in VERBS:
        sub = argparse.ArgumentParser().add_subparsers()
        import_module(f"eidetic.cli.{name}").add_parser(sub, add_common)
        assert tuple(sub.choices) == MORE_VERBS.get(name, (name,))
        assert all(module_of(verb) == name for verb in sub.choices)
    assert module_of("list_show") is None  # a module's name is not a verb


def test_remember_without_vectors_imports_no_numerics(store):
    """A bulk ``remember --no-embed`` judges near-duplicates by text alone: it has no vectors to
    compare, so NumPy (and the model's libraries) stay unimported (~60 ms a process)."""
    code = (
        "import sys; from eidetic.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    assert not exit.code\n"
        "print(sorted(m for m in ('numpy', 'tokenizers', 'safetensors', 'onnxruntime') if m in sys.modules))"
    )
    batch = '{"id": "n1", "text": "the quokka naps at noon"}\n{"id": "n2", "text": "The quokka naps at noon!"}\n'
    run = subprocess.run(
        [sys.executable, "-c", code, "remember", "--no-embed", "--json"],
        input=batch,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1].replace("'", '"')) == []
    answer = json.loads("\n".join(run.stdout.strip().splitlines()[:-1]))
    assert [item["status"] for item in answer["items"]] == ["new", "new"]
    assert answer["items"][1]["similar_to"][0]["id"] == "n1"  # still found, by its normalised text


def test_a_verb_builds_only_its_own_parser(store):
    code = (
        "import sys; from eidetic.cli.main import main\n"
        "main(sys.argv[1:])\n"
        "print(sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('eidetic.cli.')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, "show", "nope", "--json"], capture_output=True, text=True, env=os.environ.copy()
    )
    assert json.loads(run.stderr)["message"] == "no record 'nope' in reach of scope default/public"
    loaded = set(json.loads(run.stdout.strip().splitlines()[-1].replace("'", '"')))
    assert "list_show" in loaded and not loaded & {
        "remember",
        "serve",
        "sweep_forget_restore",
        "explain",
        "import_export",
        "hooks",
        "consolidate",
    }
    for args, expected in ((["show", "x", "--bogus"], "unrecognized arguments: --bogus"), (["shoe"], "unknown verb")):
        run = run_process(*args)  # errors read as before: the verb's own, or the verb it is closest to
        assert run.code == 1 and expected in run.err
    assert (
        "did you mean 'show'" in run_process("shoe").err and "usage: eidetic show" in run_process("show", "--help").out
    )


def test_bad_ids_and_read_only_stores(cli, store, env):
    run = cli("remember", '{"id": "a\\u0007b", "text": "x"}', "--json")
    assert run.code == 1 and "control characters" in run.err_json["message"]
    assert not store.exists()
    cli("remember", '{"id": "ok", "text": "fine"}')
    for folder in [store, *store.rglob("*")]:
        if folder.is_dir():
            folder.chmod(0o555)
    try:
        if os.access(store, os.W_OK):  # running as root: permissions do not bind
            return
        run = cli("remember", '{"id": "new", "text": "blocked"}', "--json")
        assert run.code == 2 and run.err_json["remediation"]
        assert cli("recall", "fine", "--mode", "keyword", "--json").json["items"][0]["id"] == "ok"
    finally:
        for folder in [store, *store.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)


@pytest.mark.slow
def test_an_in_place_edit_shows_in_the_next_process(store, env):
    assert run_process("remember", '{"id": "n", "text": "quokka words"}').code == 0
    path = rec(store, "n")
    with open(path, "r+") as handle:  # same size, same inode, maybe even the same mtime tick
        content = handle.read().replace("quokka words", "wombat words")
        handle.seek(0)
        handle.write(content)
        handle.truncate()
    found = run_process("recall", "wombat", "--mode", "keyword", "--json")
    assert [i["id"] for i in json.loads(found.out)["items"]] == ["n"]


def test_backend_options_that_do_not_fit_are_clear_errors_and_write_nothing(cli, env, monkeypatch):
    wrong = cli("remember", '{"text": "x"}', "--backend", "sqlite", "--memory-dir", str(env / "m"), "--json")
    assert wrong.code == 1 and "--memory-dir" in wrong.err_json["message"] and "--db" in wrong.err_json["remediation"]
    assert not (env / "m").exists()
    no_dsn = cli("recall", "x", "--backend", "postgres", "--json")
    assert no_dsn.code == 1 and "EIDETIC_PG_DSN" in no_dsn.err_json["remediation"]
    foreign = env / "other.sqlite"
    import sqlite3

    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes(x)")
    before = foreign.read_bytes()
    run = cli("remember", '{"text": "x"}', "--backend", "sqlite", "--db", str(foreign), "--json")
    assert run.code == 2 and "not an eidetic database" in run.err_json["message"]
    assert foreign.read_bytes() == before
