"""``eidetic completion``: the scripts are sourced in real shells and asked to complete, the way
a person's TAB asks them. bash drives the function the script registers through COMP_WORDS;
fish (when installed) through ``complete -C``; zsh (when installed) is syntax-checked."""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import pytest

from eidetic.cli.main import build_parser
from eidetic.query import MODES, exposed_options, flag_of
from eidetic.stores.backends import NAMES

# Completes each line's words (the last one is the word under the cursor, maybe empty) with the
# function the script registered for the command, as bash does on TAB; prints a marker after each.
BASH_DRIVER = r"""
source "$1"
command="$2"
shift 2
function=$(complete -p "$command" | sed -E 's/.* -F ([^ ]+) .*/\1/')
while IFS= read -r line; do
    read -r -a COMP_WORDS <<< "$line"
    [[ "$line" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE="$line"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    "$function" "$command" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"
    echo "<end>"
done
"""


def script(cli, tmp_path: Path, shell: str, *extra: str) -> Path:
    run = cli("completion", shell, *extra)
    assert run.code == 0 and run.err == "", run.err
    path = tmp_path / f"eidetic.{shell}"
    path.write_text(run.out)
    return path


def bash_complete(path: Path, lines: list[str], command: str = "eidetic", cwd: Path | None = None) -> list[list[str]]:
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "driver", str(path), command],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr
    answers = proc.stdout.split("<end>\n")[:-1]
    assert len(answers) == len(lines), proc.stdout
    return [sorted(word for word in answer.splitlines() if word) for answer in answers]


def every_parser(parser: argparse.ArgumentParser, words: tuple[str, ...] = ("eidetic",)):
    """(the words that reach it, its parser) for the command and every verb at every depth."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from every_parser(child, (*words, name))


def long_flags(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(flag for action in parser._actions for flag in action.option_strings if flag.startswith("--"))


def test_bash_completes_verbs_flags_and_choices(cli, env):
    path = script(cli, env, "bash")
    parsers = list(every_parser(build_parser()))
    verbs = sorted(words[1] for words, _ in parsers if len(words) == 2)
    lines = [
        "eidetic rec",
        "eidetic recall --mo",
        "eidetic recall deploys --mode ",
        "eidetic recall --backend ",
        "eidetic overview --visibility ",
        "eidetic migrate --from sqlite --to ",
        "eidetic completion ",
        "eidetic ",
    ] + [" ".join(words) + " --" for words, _ in parsers]
    answers = bash_complete(path, lines)
    assert answers[0] == ["recall"]
    assert answers[1] == ["--mode"]
    assert answers[2] == sorted(MODES)
    assert answers[3] == answers[5] == sorted(NAMES)
    assert answers[4] == ["private", "public"]
    assert answers[6] == ["bash", "fish", "zsh"]
    assert answers[7] == verbs and {"recall", "remember", "completion", "explain", "skills"} <= set(verbs)
    for (words, parser), answer in zip(parsers, answers[8:]):
        assert answer == long_flags(parser), words  # every flag of every verb, and nothing else
    recall_flags = answers[8 + [words for words, _ in parsers].index(("eidetic", "recall"))]
    assert {flag_of(option.name) for option in exposed_options()} <= set(recall_flags)  # RecallQuery's fields


def test_bash_completes_folders_for_folder_options(cli, env):
    path = script(cli, env, "bash")
    (env / "work" / "notes-dir").mkdir()
    (env / "work" / "notes-file.md").write_text("x")
    answers = bash_complete(path, ["eidetic recall --memory-dir notes", "eidetic import notes"], cwd=env / "work")
    assert answers == [["notes-dir"], ["notes-dir", "notes-file.md"]]  # a folder option: folders only


def test_memory_recall_has_its_own_script(cli, env):
    path = script(cli, env, "bash", "--command", "memory-recall")
    answers = bash_complete(path, ["memory-recall --li", "memory-recall --to"], command="memory-recall")
    assert answers == [["--limit"], ["--top-k"]]


def test_zsh_script_is_valid_zsh(cli, env):
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed on this machine")
    for extra in ((), ("--command", "memory-recall")):
        path = script(cli, env, "zsh", *extra)
        assert path.read_text().startswith("#compdef ")
        proc = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr


def test_fish_completes_verbs_flags_and_choices(cli, env):
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed on this machine")
    path = script(cli, env, "fish")
    proc = subprocess.run(["fish", "--no-execute", str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    asks = ["eidetic rec", "eidetic recall --mo", "eidetic recall --mode ", "eidetic index --backend "]
    program = f"source {path}\n" + "".join(f"complete -C '{ask}'\necho '<end>'\n" for ask in asks)
    proc = subprocess.run(
        ["fish", "--no-config", "-c", program], capture_output=True, text=True, timeout=60, env={"HOME": str(env)}
    )
    assert proc.returncode == 0, proc.stderr
    answers = [sorted(line.split("\t")[0] for line in part.splitlines()) for part in proc.stdout.split("<end>\n")]
    assert answers[:4] == [["recall"], ["--mode"], sorted(MODES), sorted(NAMES)]


def test_completion_refuses_an_unknown_shell(cli):
    run = cli("completion", "powershell", "--json")
    assert run.code == 1 and run.out == ""
    assert "invalid choice: 'powershell'" in run.err_json["message"]
