"""Capture reads only transcripts: a session-end payload's ``transcript_path`` is read when it is a
regular file in Claude Code's own transcript folder and no symlink, through the real hook command
(``eidetic-hook``, in-process and through the daemon); ``eidetic capture FILE`` reads any regular
file it is given, never a FIFO or a device."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import hook_payloads as payload
from conftest import Run, console_script, run_process

SAID = "Please remember that the deploy freeze starts on the first Friday of December."
KEPT = "The deploy freeze starts on the first Friday of December."


@pytest.fixture
def ending(env, monkeypatch, tmp_path):
    """A repository with capture on, the lean hook script, and a transcript's words ready to write."""
    with payload.hook_world(env, monkeypatch) as (repo, runtime):
        monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
        monkeypatch.setenv("EIDETIC_CAPTURE", "private")
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        script = console_script(tmp_path / "bin", "eidetic-hook", "eidetic.hooks.client:main")
        yield repo, script
        if list((runtime / "eidetic").glob("hook-*.sock")):
            run_process("hooks", "stop")


def words(repo: Path, session: str) -> str:
    return payload.transcript_line("user", SAID, session, repo, "2026-11-30T10:00:00.000Z") + "\n"


def end(script: Path, repo: Path, transcript: str, session: str) -> Run:
    """The session-end hook as Claude Code runs it, the payload on stdin."""
    body = json.loads(payload.session_end(repo, Path("/"), session=session))
    body["transcript_path"] = transcript
    proc = subprocess.run(
        [str(script), "claude", "session-end"],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def log_lines() -> list[str]:
    logs = list((Path(os.environ["XDG_RUNTIME_DIR"]) / "eidetic").glob("hook-*.log"))
    return logs[0].read_text().splitlines() if logs else []


def captured(cli) -> list[str]:
    items = cli("list", "--visibility", "private", "--json").json["items"]
    return [item["text"] for item in items if item.get("metadata", {}).get("source") == "capture"]


def hostile(kind: str, env: Path, repo: Path, session: str) -> tuple[str, str]:
    """A transcript_path of ``kind`` whose file (when it has one) holds a capturable statement,
    and what the log line must say."""
    projects = env / "home" / ".claude" / "projects"
    folder = projects / "-work"
    folder.mkdir(parents=True, exist_ok=True)
    outside = env / "notes" / f"{session}.jsonl"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text(words(repo, session))
    if kind == "symlink out":  # in the folder, naming a file elsewhere
        (folder / f"{session}.jsonl").symlink_to(outside)
        return str(folder / f"{session}.jsonl"), "a symbolic link"
    if kind == "symlink in":  # even to a real transcript beside it: a link is never read
        (folder / "real.jsonl").write_text(words(repo, session))
        (folder / f"{session}.jsonl").symlink_to(folder / "real.jsonl")
        return str(folder / f"{session}.jsonl"), "a symbolic link"
    if kind == "fifo":  # reading it would wait for a writer forever
        os.mkfifo(folder / f"{session}.jsonl")
        return str(folder / f"{session}.jsonl"), "a FIFO"
    if kind in ("/dev/zero", "/dev/null"):
        return kind, "a character device"
    if kind == "outside":
        return str(outside), "outside " + str(projects)
    if kind == "dot-dot":
        return str(folder / ".." / ".." / ".." / ".." / "notes" / f"{session}.jsonl"), "outside "
    if kind == "folder link":  # a folder in the transcripts folder that leads out of it
        (projects / "escape").symlink_to(outside.parent, target_is_directory=True)
        return str(projects / "escape" / f"{session}.jsonl"), "outside "
    if kind == "folder":
        return str(folder), "a folder"
    raise AssertionError(kind)


KINDS = ["symlink out", "symlink in", "fifo", "/dev/zero", "/dev/null", "outside", "dot-dot", "folder link", "folder"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_session_end_payload_naming_no_transcript_of_claudes_stores_nothing(ending, env, cli, kind):
    repo, script = ending
    transcript, why = hostile(kind, env, repo, "s-" + kind.replace("/", "").replace(" ", "-"))
    started = time.monotonic()
    run = end(script, repo, transcript, "s1")
    assert run.code == 0 and run.out == "" and run.err == ""
    assert time.monotonic() - started < 60  # a FIFO is never waited on
    line = log_lines()[-1]
    assert "session-end: transcript" in line and "refused" in line and why in line, line
    assert "nothing captured" in line and "[in-process," in line
    assert captured(cli) == []


def test_the_same_words_in_claudes_own_transcript_are_captured(ending, env, cli):
    """The control: what the refusals above keep out is captured from where Claude Code writes."""
    repo, script = ending
    transcript = payload.transcript_file(env / "home", "s-real")
    transcript.write_text(words(repo, "s-real"))
    assert end(script, repo, str(transcript), "s-real").code == 0
    assert "captured 1 of 1" in log_lines()[-1]
    assert captured(cli) == [KEPT]


def test_a_relative_transcript_path_is_refused(ending, env, cli):
    repo, script = ending
    transcript = payload.transcript_file(env / "home", "s-rel")
    transcript.write_text(words(repo, "s-rel"))
    run = end(script, repo, os.path.relpath(transcript, repo), "s-rel")
    assert run.code == 0 and "no absolute transcript_path" in log_lines()[-1]
    assert captured(cli) == []


def test_claude_config_dir_moves_the_transcript_folder(ending, env, cli, monkeypatch):
    """Claude Code writes its transcripts under $CLAUDE_CONFIG_DIR/projects when that is set."""
    repo, script = ending
    config = env / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    default = payload.transcript_file(env / "home", "s-default")
    default.write_text(words(repo, "s-default"))
    end(script, repo, str(default), "s-default")
    assert "outside " + str(config / "projects") in log_lines()[-1] and captured(cli) == []
    moved = config / "projects" / "-work" / "s-moved.jsonl"
    moved.parent.mkdir(parents=True)
    moved.write_text(words(repo, "s-moved"))
    end(script, repo, str(moved), "s-moved")
    assert "captured 1 of 1" in log_lines()[-1] and captured(cli) == [KEPT]


def test_the_daemon_refuses_the_same_and_serves_on(ending, env, cli, monkeypatch):
    repo, script = ending
    monkeypatch.setenv("EIDETIC_HOOK_DAEMON", "1")
    end(script, repo, "/dev/null", "s-start")  # starts the daemon, answers in-process meanwhile
    deadline = time.monotonic() + 120
    while not list((Path(os.environ["XDG_RUNTIME_DIR"]) / "eidetic").glob("hook-*.sock")):
        assert time.monotonic() < deadline, "the hook daemon did not start"
        time.sleep(0.2)
    time.sleep(1)
    for kind in ("fifo", "symlink out", "outside"):
        transcript, why = hostile(kind, env, repo, "d-" + kind.replace(" ", "-"))
        assert end(script, repo, transcript, "d1").code == 0
        line = log_lines()[-1]
        assert "[daemon," in line and why in line and "nothing captured" in line, line
    assert captured(cli) == []
    real = payload.transcript_file(env / "home", "d-real")
    real.write_text(words(repo, "d-real"))
    end(script, repo, str(real), "d-real")
    assert "captured 1 of 1" in log_lines()[-1] and "[daemon," in log_lines()[-1]
    assert captured(cli) == [KEPT]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder"])
def test_capture_of_a_named_fifo_or_device_is_an_error_not_a_hang(env, store, kind):
    named = {"fifo": env / "pipe.jsonl", "/dev/zero": Path("/dev/zero"), "folder": env}[kind]
    if kind == "fifo":
        os.mkfifo(named)
    run = run_process("capture", str(named), timeout=60)  # a process: a hang fails the test, not the run
    what = {"fifo": "a FIFO", "/dev/zero": "a character device", "folder": "a folder"}[kind]
    assert run.code == 1 and what in run.err and "hint:" in run.err and "Traceback" not in run.err


def test_capture_reads_any_regular_file_it_is_named_even_through_a_symlink(cli, env, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    notes = env / "elsewhere" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text(f"User: {SAID}\n")
    link = env / "notes-link.txt"
    link.symlink_to(notes)
    run = cli("capture", str(link), "--json")
    assert run.code == 0 and run.json["written"] == 1 and [i["text"] for i in run.json["items"]] == [KEPT]
