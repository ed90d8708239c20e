"""`eidetic hooks install|uninstall|status claude`: eidetic's hooks in a Claude Code settings file,
every other byte kept, and exactly them removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hook_payloads as payload
from conftest import console_script, ndjson, run_process
from eidetic.hooks import claude_settings

SETTINGS = [
    # a team's settings: unknown keys, other hooks, unicode, odd spacing, tabs
    '{\n\t"model": "opus",\n\t"env": {"É": "ünïcode \\u00e9"},\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t'
    '{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}\n\t\t],\n\t\t'
    '"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]\n\t},\n\t"x-future": [1, 2.50, null]\n}\n',
    '{"permissions": {"allow": ["Bash(ls)"]}, "hooks": {}}',  # one line, empty hooks
    "{\n}\n",
    '{\n  "statusLine": {"type": "command", "command": "echo hi"}\n}',  # no final newline
]


@pytest.fixture
def project(env, on_path):
    """A repository's shared settings file, on a machine where eidetic-hook is on PATH (README, Install)."""
    root = env / "work"
    (root / ".git").mkdir()
    return root / ".claude" / "settings.json"


@pytest.fixture
def on_path(env, monkeypatch):
    """``eidetic-hook`` on PATH, as README.md's Install puts it there."""
    bin_dir = env / "bin"
    console_script(bin_dir, "eidetic-hook", "eidetic.hooks.client:main")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


@pytest.fixture
def off_path(monkeypatch):
    """A PATH without ``eidetic-hook`` (a virtual environment never put on it)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


@pytest.mark.parametrize("original", SETTINGS)
def test_install_then_uninstall_gives_back_the_file_byte_for_byte(cli, project, original):
    project.parent.mkdir()
    project.write_bytes(original.encode())
    run = cli("hooks", "install", "claude", "--json")
    assert run.code == 0, run.err
    assert run.json["added"] == ["SessionEnd", "SessionStart", "UserPromptSubmit"]
    text = project.read_text()
    data, before = json.loads(text), json.loads(original)
    for key, value in before.items():  # everything else is still there, unchanged
        if key != "hooks":
            assert data[key] == value
    for event, groups in before.get("hooks", {}).items():
        assert data["hooks"][event][: len(groups)] == groups
    assert set(claude_settings.installed(text)) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    command = data["hooks"]["UserPromptSubmit"][-1]["hooks"][0]
    assert command["type"] == "command" and claude_settings.OURS.search(command["command"]).group(2) == "prompt"
    assert cli("hooks", "install", "claude", "--json").json["added"] == []  # twice: nothing more
    assert project.read_text() == text
    removed = cli("hooks", "uninstall", "claude", "--json")
    assert removed.code == 0 and removed.json["removed"] == ["SessionEnd", "SessionStart", "UserPromptSubmit"]
    assert project.read_bytes() == original.encode()


@pytest.mark.parametrize("original", SETTINGS)
def test_uninstall_after_other_edits_removes_only_eidetics_hooks(cli, project, env, original):
    project.parent.mkdir()
    project.write_text(original)
    assert cli("hooks", "install", "claude").code == 0
    edited = project.read_text().replace("{", '{"added-later": true, ', 1)
    project.write_text(edited)
    (env / "state" / "hooks" / "installs.json").unlink()  # e.g. a teammate's clone: no record
    assert cli("hooks", "uninstall", "claude").code == 0
    left = json.loads(project.read_text())
    expected = json.loads(original)
    assert left == {"added-later": True, **expected} or left == {
        "added-later": True,
        **{k: v for k, v in expected.items() if v != {}},
    }
    assert claude_settings.installed(project.read_text()) == {}


def test_a_new_settings_file_is_made_and_removed_again(cli, project, env):
    run = cli("hooks", "install", "claude", "--user", "--json")
    user = env / "home" / ".claude" / "settings.json"
    assert run.code == 0 and run.json["path"] == str(user) and not project.exists()
    assert set(json.loads(user.read_text())["hooks"]) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    status = cli("hooks", "status", "claude", "--json").json
    by_file = {item["path"]: item for item in status["files"]}
    assert set(by_file[str(user)]["hooks"]) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    assert by_file[str(project)]["exists"] is False and status["daemon"]["running"] is False
    assert cli("hooks", "uninstall", "claude", "--user").code == 0
    assert not user.exists() and not user.parent.exists()  # ~/.claude/, made by install, went with it


OURS_FIRST = claude_settings.with_hooks("{}", "eidetic-hook").strip()[1:-1]  # '"hooks": {...eidetic's...}'
DEEP = 5000


@pytest.mark.parametrize(
    "bad, why",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": {"SessionStart": {}}}', '"hooks"'),
        ('{"a": ' + "[" * DEEP + "]" * DEEP + "}", "not valid JSON (nested too deeply"),  # a RecursionError before
        ("[" * DEEP + "]" * DEEP, "not valid JSON (nested too deeply"),
        ('{"env": ' + '{"a": ' * 250 + "1" + "}" * 250 + "}", "not valid JSON (nested more than 200 levels"),
        # Claude Code reads the last "hooks": install said "already installed" from the first
        ("{" + OURS_FIRST + ', "hooks": {"PreToolUse": []}}', 'the key "hooks" appears twice in the top-level object'),
        ('{"hooks": {"SessionStart": [], "Stop": [], "SessionStart": []}}', 'the key "SessionStart" appears twice'),
        ('{"hooks": {"Stop": [{"hooks": [{"command": "a", "command": "b"}]}]}}', 'the key "command" appears twice'),
        ("\ufeff{}", "not valid JSON"),
    ],
)
def test_a_malformed_settings_file_is_an_error_and_never_written(cli, project, bad, why):
    project.parent.mkdir()
    project.write_text(bad)
    for action in ("install", "uninstall"):
        run = cli("hooks", action, "claude")
        assert run.code == 1 and why in run.err and "nothing was written" in run.err
        assert run.err.count("\n") == 2 and run.err.startswith("error: ") and "Traceback" not in run.err
        assert project.read_text() == bad
    assert why in cli("hooks", "status", "claude").out


def test_a_key_repeated_outside_hooks_is_left_as_claude_code_reads_it(cli, project):
    original = '{"model": "sonnet", "model": "opus"}\n'  # not eidetic's to judge: kept byte for byte
    project.parent.mkdir()
    project.write_text(original)
    assert cli("hooks", "install", "claude").code == 0
    assert project.read_text().startswith('{"model": "sonnet", "model": "opus", "hooks": ')
    assert cli("hooks", "uninstall", "claude").code == 0 and project.read_text() == original


def test_a_symlink_to_nothing_is_refused_not_followed_into_a_new_file(cli, project, env):
    target = env / "dotfiles" / "claude" / "settings.json"
    project.parent.mkdir()
    project.symlink_to(target)
    for action in ("install", "uninstall"):
        run = cli("hooks", action, "claude")
        assert run.code == 1 and "symbolic link to" in run.err and "nothing was written" in run.err
    assert not (env / "dotfiles").exists() and project.is_symlink()
    loop = project.with_name("settings.local.json")
    loop.symlink_to(loop)
    run = cli("hooks", "install", "claude", "--local")
    assert run.code == 1 and "symbolic links" in run.err and loop.is_symlink()  # a loop: unreadable


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/null"])
def test_a_settings_path_that_is_no_regular_file_is_refused_without_hanging(env, project, kind):
    project.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(project)
    elif kind == "folder":
        project.mkdir()
    where = ["--file", "/dev/null"] if kind == "/dev/null" else []
    for action in ("install", "uninstall", "status"):
        run = run_process("hooks", action, "claude", *where, cwd=project.parent.parent, timeout=60)  # a hang fails
        what = {"fifo": "a FIFO", "folder": "a folder", "/dev/null": "a character device"}[kind]
        assert what in (run.err if action != "status" else run.out) and "Traceback" not in run.err
        assert run.code == (0 if action == "status" else 1)
    assert os.path.exists(project) == (kind != "/dev/null")


def test_uninstall_removes_the_folders_install_made_and_only_while_empty(cli, project, env):
    assert cli("hooks", "install", "claude").code == 0 and project.is_file()
    assert cli("hooks", "uninstall", "claude").code == 0
    assert not project.parent.exists() and (env / "work").is_dir()  # .claude/ went, the repository stayed
    assert cli("hooks", "install", "claude").code == 0
    (project.parent / "commands").mkdir()  # something of the user's put there since
    assert cli("hooks", "uninstall", "claude").code == 0
    assert not project.exists() and (project.parent / "commands").is_dir()
    deep = env / "elsewhere" / "a" / "b" / "settings.json"
    assert cli("hooks", "install", "claude", "--file", str(deep)).code == 0
    assert cli("hooks", "uninstall", "claude", "--file", str(deep)).code == 0
    assert not (env / "elsewhere").exists()
    (env / "kept").mkdir()  # a folder that was there before install is not install's to remove
    assert cli("hooks", "install", "claude", "--file", str(env / "kept" / "s.json")).code == 0
    assert cli("hooks", "uninstall", "claude", "--file", str(env / "kept" / "s.json")).code == 0
    assert (env / "kept").is_dir() and not (env / "kept" / "s.json").exists()


def test_install_writes_through_a_symlink_to_the_file(cli, project, env):
    real = env / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    project.parent.mkdir()
    project.symlink_to(real)
    assert cli("hooks", "install", "claude").code == 0
    assert project.is_symlink() and len(claude_settings.installed(real.read_text())) == 3
    assert cli("hooks", "uninstall", "claude").code == 0
    assert real.read_text() == '{"model": "opus"}\n' and project.is_symlink()


def test_the_installed_command_answers_as_claude_code_runs_it(cli, project, monkeypatch):
    """Through a shell, the payload on stdin: whichever form install chose here."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setenv("EIDETIC_HOOK_DAEMON", "0")
    monkeypatch.setenv("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="eh-", dir="/tmp"))
    text = "Deploys to production run on Tuesdays after the standup"
    assert cli("remember", "--json", stdin=ndjson({"id": "deploy-day", "type": "decision", "text": text})).code == 0
    assert cli("hooks", "install", "claude").code == 0
    command = json.loads(project.read_text())["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    run = _shell(command, payload.prompt(project.parent.parent, "when do deploys to production run?"), project)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert "deploy-day" in json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("original", SETTINGS[:2])
def test_install_moves_an_earlier_installs_commands_to_eidetic_hook(cli, project, env, monkeypatch, original):
    project.parent.mkdir()
    project.write_text(original)
    earlier = claude_settings.with_hooks(original, "eidetic hook")  # what the earlier install wrote
    project.write_text(earlier)
    claude_settings.remember_install(env / "state", project, original, earlier)
    run = cli("hooks", "install", "claude", "--json")
    assert run.code == 0 and run.json["added"] == []
    assert run.json["updated"] == ["SessionEnd", "SessionStart", "UserPromptSubmit"]
    assert project.read_text() == earlier.replace('"eidetic hook claude ', '"eidetic-hook claude ')
    assert cli("hooks", "install", "claude", "--json").json["updated"] == []  # twice: nothing more
    wrapped = project.read_text().replace('"eidetic-hook claude prompt"', '"cd /tmp && eidetic hook claude prompt"')
    project.write_text(wrapped)
    assert cli("hooks", "install", "claude").code == 0 and project.read_text() == wrapped  # a person's own: kept
    project.write_text(wrapped.replace('"cd /tmp && eidetic hook claude prompt"', '"eidetic-hook claude prompt"'))
    assert cli("hooks", "uninstall", "claude").code == 0
    assert project.read_bytes() == original.encode()  # the file before any install, byte for byte


def _shell(command: str, stdin: str, project: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["/bin/sh", "-c", command], input=stdin, capture_output=True, text=True, cwd=project.parent.parent, timeout=90
    )


def _commands(path: Path) -> set[str]:
    return {command for found in claude_settings.installed(path.read_text()).values() for command in found}


def test_a_shared_settings_file_never_gets_a_path_of_this_machine(cli, env, off_path):
    """A teammate's machine has no /this/venv/bin/eidetic-hook: without the script on PATH, the
    team's file is refused, with the reason and both ways out; yours alone gets the path."""
    (env / "work" / ".git").mkdir()
    shared = env / "work" / ".claude" / "settings.json"
    run = cli("hooks", "install", "claude")
    assert run.code == 1 and "not on PATH" in run.err and "shared with the team" in run.err
    assert "--local" in run.err and "ln -sf" in run.err and "nothing was written" in run.err
    assert not shared.exists() and not shared.parent.exists()
    assert cli("hooks", "install", "claude", "--local").code == 0  # settings.local.json: one person's
    local = shared.with_name("settings.local.json")
    assert all(command.startswith("/") for command in _commands(local))
    status = cli("hooks", "status", "claude", "--json").json
    assert all(item["problems"] == [] for item in status["files"])  # the path runs here


def test_status_says_when_a_command_cannot_run_here_and_install_makes_it_portable(cli, env, monkeypatch, off_path):
    (env / "work" / ".git").mkdir()
    shared = env / "work" / ".claude" / "settings.json"
    shared.parent.mkdir()
    here = claude_settings.with_hooks('{"model": "opus"}\n', "/opt/venv-of-a-teammate/bin/eidetic-hook")
    shared.write_text(here)  # what an earlier install on a teammate's machine committed
    status = cli("hooks", "status", "claude")
    assert status.code == 0 and "/opt/venv-of-a-teammate/bin/eidetic-hook is no program on this machine" in status.out
    assert (
        "SessionEnd, SessionStart, UserPromptSubmit:" in status.out and "hint: put eidetic-hook on PATH" in status.out
    )
    bare = here.replace("/opt/venv-of-a-teammate/bin/eidetic-hook", "eidetic-hook")
    shared.write_text(bare)
    problems = cli("hooks", "status", "claude", "--json").json["files"][0]["problems"]
    assert problems == [
        "SessionEnd, SessionStart, UserPromptSubmit: 'eidetic-hook' is not on PATH here, so the hook does nothing"
    ]
    real = Path(sys.executable).parent / "eidetic-hook"
    shared.write_text(here.replace("/opt/venv-of-a-teammate/bin/eidetic-hook", str(real)))
    problems = cli("hooks", "status", "claude", "--json").json["files"][0]["problems"]
    assert len(problems) == 1 and "a path of this machine: on a teammate's the hook does nothing" in problems[0]
    bin_dir = env / "bin"
    console_script(bin_dir, "eidetic-hook", "eidetic.hooks.client:main")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    run = cli("hooks", "install", "claude", "--json")
    assert run.code == 0 and run.json["updated"] == ["SessionEnd", "SessionStart", "UserPromptSubmit"]
    assert shared.read_text() == bare  # only the commands' strings changed
    assert cli("hooks", "status", "claude", "--json").json["files"][0]["problems"] == []


def test_a_user_settings_file_linked_into_a_dotfiles_repository_is_shared(cli, env, off_path):
    dotfiles = env / "dotfiles"
    (dotfiles / ".git").mkdir(parents=True)
    (dotfiles / "claude.json").write_text("{}\n")
    user = env / "home" / ".claude" / "settings.json"
    user.parent.mkdir()
    user.symlink_to(dotfiles / "claude.json")
    run = cli("hooks", "install", "claude", "--user")
    assert run.code == 1 and "shared with the team" in run.err
    assert (dotfiles / "claude.json").read_text() == "{}\n" and user.is_symlink()
    (dotfiles / ".git").rmdir()  # a link to a file of this machine alone: the path is fine there
    assert cli("hooks", "install", "claude", "--user").code == 0 and user.is_symlink()
    assert len(_commands(dotfiles / "claude.json")) == 3


def test_settings_with_comments_are_refused_with_the_reason(cli, project):
    commented = '{\n  // the team\'s model\n  "model": "opus",\n  "hooks": {"Stop": []}\n}\n'
    project.parent.mkdir()
    project.write_text(commented)
    run = cli("hooks", "install", "claude")
    assert run.code == 1 and "has a comment at line 2 column 3" in run.err
    assert "Claude Code ignores a settings file with comments" in run.err and "nothing was written" in run.err
    assert project.read_text() == commented
    text = '{"model": "opus // not a comment"}\n'  # inside a string it is text
    project.write_text(text)
    assert cli("hooks", "install", "claude").code == 0
    assert json.loads(project.read_text())["model"] == "opus // not a comment"


def test_a_read_only_settings_file_is_never_written(cli, project):
    """Read-only on purpose: neither install nor uninstall replaces it (not even as root)."""
    project.parent.mkdir()
    project.write_text('{"model": "opus"}\n')
    project.chmod(0o444)
    run = cli("hooks", "install", "claude")
    assert run.code == 1 and "is read-only (mode 444)" in run.err and "nothing was written" in run.err
    assert project.read_text() == '{"model": "opus"}\n' and project.stat().st_mode & 0o777 == 0o444
    project.chmod(0o644)
    assert cli("hooks", "install", "claude").code == 0
    installed = project.read_text()
    project.chmod(0o444)
    run = cli("hooks", "uninstall", "claude")
    assert run.code == 1 and "is read-only" in run.err and project.read_text() == installed


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux's sysfs")
def test_a_folder_without_write_permission_is_an_error_not_a_traceback(cli, env):
    """sysfs makes no new file for anyone, root included: as a folder a user may not write in."""
    path = Path("/sys/kernel/claude-settings.json")
    for action in ("install", "uninstall"):
        run = cli("hooks", action, "claude", "--file", str(path))
        assert run.code == (1 if action == "install" else 0), run.err
        assert "Traceback" not in run.err and not path.exists()
    run = cli("hooks", "install", "claude", "--file", str(path))
    assert "cannot write in /sys/kernel: permission denied" in run.err and "nothing was written" in run.err
