"""The first hour's typos and habits get a way forward: a mistyped verb, flag, choice, id or
type is answered with what it is closest to, a verb of another tool with eidetic's, and a record
remembered private says how to read it back. Every suggestion comes only from what the caller
may see: another scope's private records show through neither as an id nor as a type."""

from __future__ import annotations

import contextlib
import io
import os
import shlex

import pytest

from eidetic.cli.explain import TOPICS
from eidetic.cli.main import FOREIGN_VERBS, VERB_NAMES, build_parser, verbs
from eidetic.errors import close_matches
from terminal import run_in_terminal, run_on_terminal


def rewritten(hint: str) -> list[str]:
    """The command a hint offers after ``run:``, as arguments (without ``eidetic``)."""
    command = hint.split("run: ", 1)[1].split(";")[0].split(" (")[0]
    words = shlex.split(command)
    assert words[0] == "eidetic"
    return words[1:]


def test_a_mistyped_verb_names_the_closest_and_the_command_that_works(cli, store):
    cli("remember", "Deploys run on Tuesdays", "--id", "deploy-day", "--no-embed")
    run = cli("recal", "deploy", "--mode", "keyword", "--json")
    assert run.code == 1 and run.out == ""
    error = run.err_json
    assert error["message"] == "unknown verb 'recal'" and "did you mean 'recall'?" in error["remediation"]
    assert "consolidate" not in run.err  # the closest verb, not every verb
    fixed = cli(*rewritten(error["remediation"]))
    assert fixed.code == 0 and [item["id"] for item in fixed.json["items"]] == ["deploy-day"]
    nothing = cli("zzqx")
    assert nothing.code == 1 and "did you mean" not in nothing.err and "eidetic --help" in nothing.err


def test_close_matches_narrow_a_large_pool_and_take_a_start():
    pool = [f"note-{number}" for number in range(5000)]
    assert close_matches("note-4x21", pool)[0] in ("note-421", "note-4121", "note-4821")
    assert close_matches("NOTE-4999", pool, n=1) == ["note-4999"]  # case aside
    assert close_matches("note-499", pool)[:2] == ["note-4990", "note-4991"]  # those it begins first
    assert close_matches("zzzz", pool) == [] and close_matches("recal", ["recall", "remember"]) == ["recall"]


def test_every_verb_name_is_a_verb_the_parser_has():
    assert set(VERB_NAMES) == set(verbs(build_parser()))
    assert set(FOREIGN_VERBS.values()) <= set(VERB_NAMES) and not set(FOREIGN_VERBS) & set(VERB_NAMES)


@pytest.mark.parametrize("theirs", sorted(FOREIGN_VERBS))
def test_a_verb_of_another_tool_points_to_ours(cli, theirs):
    run = cli(theirs, "deploy day")
    ours = FOREIGN_VERBS[theirs]
    assert run.code == 1 and f"its verb for that is {ours!r}" in run.err
    assert rewritten(run.err) == [ours, "deploy day"]
    assert "Traceback" not in run.err


def test_the_rewritten_search_runs(cli, store):
    cli("remember", "Deploys run on Tuesdays, after the standup", "--id", "deploy-day", "--no-embed")
    run = cli("search", "tuesdays standup", "--mode", "keyword", "--top-k", "3")
    fixed = cli(*rewritten(run.err), "--json")
    assert fixed.code == 0 and fixed.json["items"][0]["id"] == "deploy-day"


def test_the_manual_names_every_verb_of_another_tool():
    errors = " ".join(TOPICS["errors"].split())
    for theirs, ours in FOREIGN_VERBS.items():
        assert theirs in errors and f"`{ours}`" in errors


def test_a_mistyped_flag_is_named_with_the_closest_and_the_command_rewritten(cli, store):
    cli("remember", "Deploys run on Tuesdays", "--id", "deploy-day", "--no-embed")
    run = cli("recall", "tuesdays", "--topk", "3", "--mode", "keyword")
    assert run.code == 1 and "unrecognized arguments: --topk 3" in run.err
    assert "did you mean --top-k?" in run.err
    assert rewritten(run.err) == ["recall", "tuesdays", "--top-k", "3", "--mode", "keyword"]
    equals = cli("list", "--limt=2")
    assert equals.code == 1 and rewritten(equals.err) == ["list", "--limit=2"]
    assert cli(*rewritten(equals.err)).code == 0
    stray = cli("recall", "tuesdays", "standup")  # a second word is no flag: nothing to suggest
    assert stray.code == 1 and "did you mean" not in stray.err


def test_memory_recall_names_the_flag_too(env):
    from eidetic.cli.memory_recall import main as memory_recall

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = memory_recall(["deploy", "--limt", "3"])
    assert code == 1 and "did you mean --limit? run: memory-recall deploy --limit 3" in err.getvalue()


def test_a_mistyped_choice_is_named_with_the_closest(cli, store):
    run = cli("recall", "x", "--mode", "keywrd", "--json")
    assert run.code == 1
    assert "invalid choice: 'keywrd' (did you mean 'keyword'? choose from exact, keyword" in run.err_json["message"]
    far = cli("list", "--sort", "zzz")
    assert far.code == 1 and "did you mean" not in far.err and "choose from updated" in far.err


def test_a_mistyped_id_suggests_close_ids_in_reach(cli, backend):
    cli("remember", "Deploys run on Tuesdays", "--id", "deploy-day", "--no-embed")
    cli(
        "remember",
        "Alice's salary review",
        "--id",
        "deploy-dax",
        "--no-embed",
        "--scope",
        "alice",
        "--visibility",
        "private",
    )
    for verb in ("show", "forget", "restore"):
        run = cli(verb, "deploy-dya", "--json")
        assert run.code == 1 and run.err_json["message"] == "no record 'deploy-dya' in reach of scope default/public"
        assert "did you mean 'deploy-day'?" in run.err_json["remediation"]
        assert "deploy-dax" not in run.err  # alice's private id is not in reach
    derived = cli("remember", "Backups run nightly", "--no-embed", "--json").json["ids"][0]
    cut_short = cli("show", derived[:8], "--json")  # a derived id, copied in part
    assert cut_short.code == 1 and f"did you mean {derived!r}?" in cut_short.err_json["remediation"]
    mine = cli("show", "deploy-dya", "--scope", "alice", "--visibility", "private", "--json")
    assert "'deploy-day' or 'deploy-dax'" in mine.err_json["remediation"]
    for scope in (("--scope", "bob", "--visibility", "private"), ("--scope", "alice")):
        near_private = cli("show", "deploy-dax", *scope, "--json").err_json
        missing = cli("show", "deploy-dzz", *scope, "--json").err_json
        assert near_private["message"] == missing["message"].replace("deploy-dzz", "deploy-dax")
        assert near_private["remediation"] == missing["remediation"] and "dax" not in near_private["remediation"]


def test_a_mistyped_type_is_warned_about_and_written(cli, store):
    assert cli("remember", "Deploys run on Tuesdays", "--id", "d1", "--type", "decision", "--no-embed").err == ""
    cli("remember", "Incident 12: disk full", "--id", "pm", "--type", "postmortem", "--no-embed")
    run = cli("remember", "We chose postgres", "--id", "d2", "--type", "decisoin", "--no-embed", "--json")
    assert run.code == 0 and run.json["items"][0]["status"] == "new"
    warning = run.err_json["warning"]
    assert "type 'decisoin'" in warning and "did you mean 'decision'?" in warning
    assert "known types: decision, feedback, lesson, note, postmortem" in warning
    new_kind = cli("remember", "Restart the queue by hand", "--id", "r1", "--type", "runbook", "--no-embed")
    assert new_kind.code == 0 and "warning" not in new_kind.err  # a new kind of record, not a typo
    listed = cli("list", "--type", "decisions", "--json")
    assert listed.code == 0 and listed.json["items"] == []
    assert "type 'decisions' matches no record you may see; did you mean 'decision'" in listed.err
    right = cli("list", "--type", "decision", "--type", "runbook", "--json")
    assert right.err == "" and {item["id"] for item in right.json["items"]} == {"d1", "r1"}
    recalled = cli("recall", "postgres", "--mode", "keyword", "--type", "postmortm", "--json")
    assert recalled.code == 0 and "did you mean 'postmortem'?" in recalled.err


def test_a_private_type_is_named_only_to_its_scope(cli, store):
    cli(
        "remember",
        "Layoffs planned",
        "--id",
        "hr1",
        "--type",
        "hr-secret",
        "--scope",
        "alice",
        "--visibility",
        "private",
    )
    cli("remember", "Deploys run on Tuesdays", "--id", "d1", "--type", "decision", "--no-embed")
    others = cli("list", "--type", "hr-secrt")
    assert "hr-secret" not in others.err and "known types: decision, feedback, lesson, note" in others.err
    alice = cli("list", "--type", "hr-secrt", "--scope", "alice", "--visibility", "private")
    assert "did you mean 'hr-secret'?" in alice.err
    bob = cli("remember", "x", "--type", "hr-secrt", "--scope", "bob", "--visibility", "private", "--no-embed")
    assert bob.code == 0 and "hr-secret" not in bob.err


def test_a_private_record_says_how_to_read_it_back(cli, store, env):
    run = cli("remember", "My plan for the offsite", "--id", "pv1", "--visibility", "private", "--no-embed")
    assert run.code == 0 and "pv1 is private to scope default" in run.err
    command = next(line for line in run.err.splitlines() if "read it back with: " in line).split("with: ")[1]
    assert command == "eidetic show pv1 --scope default --visibility private"
    shown = cli(*shlex.split(command)[1:])
    assert shown.code == 0 and "My plan for the offsite" in shown.out
    plain = cli("show", "pv1")  # the contract's default for scripts holds: default/public
    assert plain.code == 1 and "--visibility private" in plain.err
    public = cli("remember", "Deploys run on Tuesdays", "--id", "d1", "--no-embed")
    assert public.err == ""
    as_json = cli("remember", "More plans", "--id", "pv2", "--scope", "me", "--visibility", "private", "--json")
    assert "eidetic show pv2 --scope me --visibility private" in as_json.err_json["info"]


def test_with_scope_and_visibility_configured_your_private_records_need_no_flags(cli, store, env):
    config = env / "home" / ".config" / "eidetic" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('scope = "alice"\nvisibility = "private"\n')
    run = cli("remember", "My plan for the offsite", "--id", "pv1", "--no-embed")
    assert run.code == 0 and run.err == ""  # written alice/private, and read as alice/private
    assert cli("show", "pv1").code == 0
    config.write_text('scope = "bob"\nvisibility = "private"\n')
    other = cli("show", "pv1", "--json")
    missing = cli("show", "pv9", "--json")
    assert other.code == 1 and other.err_json["message"] == "no record 'pv1' in reach of scope bob/private"
    assert other.err_json["remediation"] == missing.err_json["remediation"]  # nothing says it exists
    assert "pv1" not in cli("list", "--json").out


def test_a_typo_on_a_terminal(env):
    environment = {**os.environ, "HOME": str(env / "home"), "XDG_CONFIG_HOME": str(env / "home" / ".config")}
    run = run_in_terminal("recal", "deploy day", env=environment, cwd=env / "work")
    assert run.code == 1 and run.out == ""
    assert "error: unknown verb 'recal'" in run.err
    assert "hint: did you mean 'recall'? run: eidetic recall 'deploy day'" in run.err
    assert "Traceback" not in run.err


def test_a_private_record_on_a_terminal(env):
    environment = {**os.environ, "HOME": str(env / "home"), "XDG_CONFIG_HOME": str(env / "home" / ".config")}
    environment |= {"EIDETIC_DATA_DIR": str(env / "store"), "EIDETIC_EMBEDDER": "none"}
    run = run_on_terminal("remember", "My plan", "--id", "pv1", "--visibility", "private", env=environment, columns=80)
    assert run.code == 0
    assert run.out.index("new        pv1") < run.out.index("pv1 is private to scope default; read it back with:")
