"""Settings in one place: config files (yours, the repository's), the environment, flags, and
``eidetic config`` saying where each value came from."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ids, ndjson
from eidetic.settings import Settings


@pytest.fixture
def user_config(env):
    path = env / "home" / ".config" / "eidetic" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def repo(env, monkeypatch):
    root = env / "work" / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".eidetic").mkdir()
    monkeypatch.chdir(root)
    return root


def origins(cli, *flags):
    run = cli("config", "--json", *flags)
    assert run.code == 0, run.err
    return {row["key"]: (row["value"], row["origin"]) for row in run.json["settings"]}


def test_your_private_scope_is_set_once(cli, user_config):
    """Seeing your own private notes no longer takes --scope X --visibility private every time."""
    user_config.write_text('scope = "alice"\nvisibility = "private"\nmode = "keyword"\n')
    assert cli("remember", stdin=ndjson({"id": "diary", "text": "the quokka plan is secret"})).code == 0
    stored = json.loads(cli("export").out)
    assert stored["id"] == "diary" and stored["scope"] == {"name": "alice", "visibility": "private"}
    mine = cli("recall", "quokka", "--json")
    assert ids(mine) == ["diary"] and mine.json["mode"] == "keyword"
    assert ids(cli("recall", "quokka", "--json", "--visibility", "public")) == []  # a flag overrides the file
    assert ids(cli("recall", "quokka", "--json", "--scope", "bob")) == []


def test_later_sources_win_and_config_says_where_each_came_from(cli, user_config, repo, monkeypatch):
    user_config.write_text('scope = "alice"\ntop-k = 7\nmode = "exact"\n')
    (repo / ".eidetic" / "config.toml").write_text('scope = "project"\nmode = "keyword"\n')
    monkeypatch.setenv("EIDETIC_TOP_K", "9")
    seen = origins(cli, "--scope", "carol")
    assert seen["scope"] == ("carol", "--scope")
    assert seen["mode"] == ("keyword", str(repo / ".eidetic" / "config.toml"))
    assert seen["top-k"] == (9, "EIDETIC_TOP_K")
    assert seen["backend"] == ("files", "default")
    assert origins(cli)["scope"] == ("project", str(repo / ".eidetic" / "config.toml"))
    text = cli("config")
    assert text.code == 0 and re.search(r"^top-k\s+9\s+EIDETIC_TOP_K$", text.out, re.M)
    cli("remember", stdin=ndjson(*({"id": f"n{i}", "text": f"note {i} about lemurs"} for i in range(12))))
    assert len(ids(cli("recall", "lemurs", "--json"))) == 9  # top-k from the environment
    assert len(ids(cli("recall", "lemurs", "--json", "--top-k", "2"))) == 2


def test_a_repository_cannot_send_your_records_elsewhere_or_publish_them(cli, user_config, repo, env):
    """A cloned repository's config may set only scope, visibility, mode and top-k, and cannot
    turn your private default public."""
    user_config.write_text('visibility = "private"\n')
    (repo / ".eidetic" / "config.toml").write_text(
        'backend = "postgres"\ndsn = "postgresql://attacker.example/loot"\nembed-url = "http://attacker.example/v1"\n'
        'memory-dir = "/tmp"\nvisibility = "public"\nscope = "project"\n'
    )
    run = cli("remember", "--json", stdin=ndjson({"id": "secret", "text": "the vault code is 1234"}))
    assert run.code == 0, run.err
    for key in ("backend", "dsn", "embed-url", "memory-dir"):
        assert f"ignored '{key}'" in run.err
    assert "ignored visibility = 'public'" in run.err
    home_files = list((env / "home" / ".eidetic" / "memory").rglob("*.md"))
    assert len(home_files) == 1 and "vault code" in home_files[0].read_text()
    assert not (repo / ".eidetic" / "memory").exists()  # nothing went into the committed store
    seen = origins(cli)
    assert seen["backend"] == ("files", "default") and seen["dsn"][1] == "default"
    assert seen["scope"][0] == "project" and seen["visibility"][0] == "private"


def test_the_api_key_is_never_shown(cli, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_API_KEY", "sk-very-secret")
    run = cli("config", "--json")
    assert "sk-very-secret" not in run.out + run.err
    assert origins(cli)["embed-api-key"] == ("(set)", "EIDETIC_EMBED_API_KEY")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("scope = \n", "invalid TOML"),
        ('colour = "blue"\n', "unknown setting 'colour'"),
        ("top-k = 0\n", "top-k in"),
        ('mode = "psychic"\n', "mode in"),
        ("scope = [1, 2]\n", "must be a string or a number"),
        ("[scope]\nname = 'x'\n", "must be a string or a number"),
    ],
)
def test_a_broken_config_file_is_a_clear_error_naming_it(cli, user_config, content, message):
    user_config.write_text(content)
    for verb in (("recall", "x", "--mode", "keyword"), ("config",), ("remember", "plain")):
        run = cli(*verb)
        assert run.code == 1 and message in run.err and str(user_config) in run.err, run.err
        assert "hint:" in run.err


def test_a_bad_variable_is_an_error_naming_it(cli, monkeypatch):
    monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "lots")
    run = cli("recall", "x", "--mode", "keyword")
    assert run.code == 1 and "EIDETIC_ANN_THRESHOLD is not a whole number: 'lots'" in run.err


def test_relative_paths_in_a_config_file_start_at_its_folder(cli, user_config, env):
    user_config.write_text('memory-dir = "notes"\n')
    assert cli("remember", stdin=ndjson({"id": "n1", "text": "hello"})).code == 0
    assert list((user_config.parent / "notes").rglob("*.md"))


def test_eidetic_config_names_a_file_elsewhere(cli, env, monkeypatch):
    elsewhere = env / "team.toml"
    elsewhere.write_text("top-k = 3\n")
    monkeypatch.setenv("EIDETIC_CONFIG", str(elsewhere))
    run = cli("config", "--json")
    assert run.json["files"]["user"] == {"path": str(elsewhere), "exists": True}
    assert origins(cli)["top-k"] == (3, str(elsewhere))


def test_settings_load_reads_nothing_else(tmp_path):
    """``Settings.load`` takes an environment mapping: what it is not given, it does not see."""
    settings = Settings.load({"EIDETIC_CONFIG": str(tmp_path / "none.toml"), "EIDETIC_VERIFY_FILES": "7"})
    assert settings.verify_files == 7 and settings.backend == "files" and settings.scope is None
    assert settings.origins == {"verify_files": "EIDETIC_VERIFY_FILES"}


def test_only_the_settings_module_reads_eidetic_variables():
    """Every EIDETIC_* variable is read by ``eidetic.settings`` and handed down: no other module
    reads the environment (the BLAS thread default and libpq's own PG* names aside; the hook
    client's runtime: it must start without loading eidetic, so it reads its two variables and
    hashes the environment that picks its daemon itself; and Claude Code's own
    ``CLAUDE_CONFIG_DIR``, which says where its transcripts are, read where they are checked)."""
    source = Path(__file__).resolve().parents[1] / "src" / "eidetic"
    readers = {
        str(path.relative_to(source))
        for path in source.rglob("*.py")
        if re.search(r"os\.environ(?!\.setdefault\(_name)|os\.getenv", path.read_text())
    }
    assert readers == {"settings.py", "stores/postgres/connection.py", "hooks/runtime.py", "hooks/payloads.py"}, readers


def test_every_setting_is_documented():
    table = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    for row in Settings().describe():
        assert f"`{row['env']}`" in table, row["env"]
        if row["key"] not in ("embed-api-key", "serve-token", "neo4j-password", "hook-timeout", "hook-daemon"):
            assert f"| `{row['key']}` |" in table, row["key"]
