"""Writing into a coding agent's memory folder (one holding MEMORY.md), laid out as Claude Code
lays it out: flat files with the front matter the agent reads, a MEMORY.md line per memory kept
right through update, forget, restore, supersede and purge, hostile names kept inside the
folder, and nothing of eidetic's (lock, staging) in it, not even after a killed writer."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import yaml

from conftest import run_process, snapshot
from eidetic import frontmatter

INDEX = """# Memory Index

## User
- [User role](user_role.md) — senior backend dev, new to React

## Feedback
- [Testing approach](feedback_testing.md) — integration tests hit a real database
"""


@pytest.fixture
def agent(env, monkeypatch):
    """A project and its agent memory folder under ~/.claude/projects, as the agent writes it."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    project = env / "work" / "shop"
    project.mkdir()
    folder = env / "home" / ".claude" / "projects" / str(project).replace("/", "-") / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(INDEX)
    (folder / "user_role.md").write_text(
        "---\nname: User role\ndescription: senior backend dev, new to React\ntype: user\n---\n"
        "The user is a senior backend developer, new to React.\n"
    )
    (folder / "feedback_testing.md").write_text(
        "---\nname: Testing approach\ndescription: integration tests hit a real database\ntype: feedback\n---\n"
        "Integration tests must hit a real database, not mocks.\n"
    )
    return project, folder


def remember(cli, folder: Path, *records: dict, code: int = 0):
    run = cli("remember", "--memory-dir", str(folder), stdin="\n".join(json.dumps(r) for r in records))
    assert run.code == code, run.err
    return run


def entries(folder: Path) -> list[str]:
    return [line for line in (folder / "MEMORY.md").read_text().splitlines() if line.startswith("- [")]


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def tree(*roots: Path) -> dict[Path, bytes | None]:
    """Every file (its bytes) and folder (None) under ``roots``."""
    return {p: p.read_bytes() if p.is_file() else None for root in roots for p in root.rglob("*")}


def memory_recall(*args: str) -> dict:
    from eidetic.cli import memory_recall as tool

    out = io.StringIO()
    with redirect_stdout(out):
        assert tool.main([*args, "--json"]) == 0
    return json.loads(out.getvalue())


KILN = {
    "id": "kiln",
    "name": "Kiln schedule",
    "description": "cone 6 firing times for the glaze kiln",
    "type": "reference",
    "text": "Cone 6: ramp 150C an hour to 600C, then full power.",
}


def test_remember_writes_a_flat_file_the_agent_reads_and_its_index_line(cli, agent):
    project, folder = agent
    remember(cli, folder, KILN)
    assert names(folder) == ["MEMORY.md", "feedback_testing.md", "kiln_schedule.md", "user_role.md"]
    data, body = frontmatter.split((folder / "kiln_schedule.md").read_text())
    assert list(data)[:3] == ["name", "description", "type"]  # what the agent reads, first
    assert yaml.safe_load((folder / "kiln_schedule.md").read_text().split("---")[1]) == data
    assert (data["name"], data["description"], data["type"], data["id"]) == (
        "Kiln schedule",
        "cone 6 firing times for the glaze kiln",
        "reference",
        "kiln",
    )
    assert data["scope"] == {"name": "default", "visibility": "public"} and data["created"] and body == KILN["text"]
    index = (folder / "MEMORY.md").read_text()
    assert index == INDEX + "- [Kiln schedule](kiln_schedule.md) — cone 6 firing times for the glaze kiln\n"

    hits = cli("recall", "kiln", "--mode", "keyword", "--memory-dir", str(folder), "--json").json["items"]
    assert [h["id"] for h in hits] == ["kiln"] and hits[0]["name"] == "Kiln schedule"
    found = memory_recall("kiln", "--project-root", str(project))  # the agent's own folder, resolved
    assert [(r["name"], r["type"], r["path"]) for r in found["results"]] == [
        ("Kiln schedule", "reference", str(folder / "kiln_schedule.md"))
    ]
    assert cli("index", "--memory-dir", str(folder), "--json").json["stores"][0]["records"] == 3  # MEMORY.md is none
    sidecar = folder.parent / ".memory.eidetic"
    assert [p.name for p in sidecar.iterdir()] == [".eidetic.lock"]  # beside the folder, not in it

    assert remember(cli, folder, KILN).out and (folder / "MEMORY.md").read_text() == index  # unchanged: untouched


def test_update_forget_restore_supersede_and_purge_keep_memory_md_right(cli, agent):
    _, folder = agent
    remember(cli, folder, KILN)
    custom = (folder / "MEMORY.md").read_text().replace("cone 6 firing times for the glaze kiln", "my own words")
    (folder / "MEMORY.md").write_text(custom)
    remember(cli, folder, {**KILN, "text": "Cone 6: ramp 100C an hour."})  # same title and hook
    assert (folder / "MEMORY.md").read_text() == custom  # the user's wording is kept
    assert "100C" in (folder / "kiln_schedule.md").read_text()

    remember(cli, folder, {**KILN, "description": "cone 6 and cone 10 schedules"})
    assert entries(folder)[-1] == "- [Kiln schedule](kiln_schedule.md) — cone 6 and cone 10 schedules"
    remember(cli, folder, {"id": "user_role", "name": "User role", "description": "staff engineer", "text": "Staff."})
    assert (folder / "MEMORY.md").read_text().splitlines()[3] == "- [User role](user_role.md) — staff engineer"
    assert (folder / "MEMORY.md").read_text().startswith("# Memory Index\n\n## User\n")
    assert (folder / "MEMORY.md").read_text().splitlines()[5:7] == [
        "## Feedback",
        "- [Testing approach](feedback_testing.md) — integration tests hit a real database",
    ]

    assert cli("forget", "kiln", "--memory-dir", str(folder)).code == 0
    assert "kiln_schedule.md" not in (folder / "MEMORY.md").read_text()
    assert "lifecycle: archived" in (folder / "kiln_schedule.md").read_text()
    assert cli("restore", "kiln", "--memory-dir", str(folder)).code == 0
    assert entries(folder)[-1] == "- [Kiln schedule](kiln_schedule.md) — cone 6 and cone 10 schedules"

    remember(cli, folder, {"id": "kiln-2", "name": "Kiln schedule v2", "supersedes": "kiln", "text": "Cone 6 only."})
    assert [line.split("](")[1].split(")")[0] for line in entries(folder)] == [
        "user_role.md",
        "feedback_testing.md",
        "kiln_schedule_v2.md",  # the shadowed record's line went
    ]

    secret = {"id": "oops", "name": "Deploy token", "description": "tok-9f8e7d", "text": "the token is tok-9f8e7d"}
    remember(cli, folder, secret)
    before = (folder / "MEMORY.md").read_text()
    run = cli("forget", "oops", "--purge", "--yes", "--memory-dir", str(folder), "--json")
    assert run.code == 0 and run.json["path"] == str(folder / "deploy_token.md")
    assert not (folder / "deploy_token.md").exists()
    assert (folder / "MEMORY.md").read_text() == before.replace("- [Deploy token](deploy_token.md) — tok-9f8e7d\n", "")
    assert not any("tok-9f8e7d" in p.read_text() for p in folder.parent.rglob("*") if p.is_file())


HOSTILE = [
    ({"id": "a", "name": "../../escape"}, "escape.md"),
    ({"id": "b", "name": "/etc/passwd"}, "etc_passwd.md"),
    ({"id": "c", "name": "CON"}, "con-2.md"),
    ({"id": "d", "name": "MEMORY"}, "memory-2.md"),
    ({"id": "e", "name": ".hidden"}, "hidden.md"),
    ({"id": "f", "name": "Café ☕ déjà vu"}, "cafe_deja_vu.md"),
    ({"id": "jp-1", "name": "日本語のメモ"}, "jp-1.md"),
    ({"id": "../../../g"}, "g.md"),
    ({"id": "h", "name": "evil](x.md) [y\n- [z](user_role.md)"}, "evil_x_md_y_-_z_user_role_md.md"),
    ({"id": "i", "name": "twin"}, "twin-2.md"),  # Twin.md is taken, in another letter case
    ({"id": "j", "name": "twin"}, "twin-3.md"),
    ({"id": "k", "name": "x" * 1000}, "x" * 64 + ".md"),
    ({"id": "l", "name": "COM1.md"}, "com1_md.md"),
    ({"id": "m", "name": "feedback_testing"}, "feedback_testing-2.md"),
]


def test_hostile_names_stay_in_the_folder_as_distinct_flat_files(cli, agent, env):
    _, folder = agent
    (folder / "Twin.md").write_text("---\nname: Twin\n---\nthe hand-written twin\n")
    before = tree(env / "home", env / "work")
    records = [{**raw, "text": f"hostile record number {n}"} for n, (raw, _) in enumerate(HOSTILE)]
    remember(cli, folder, *records)
    expected = sorted([name for _, name in HOSTILE] + ["MEMORY.md", "Twin.md", "feedback_testing.md", "user_role.md"])
    assert names(folder) == expected
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9_-]*\.md", name) for _, name in HOSTILE)
    after = tree(env / "home", env / "work")
    changed = {path for path in after if path not in before or before[path] != after[path]}
    sidecar = folder.parent / ".memory.eidetic"  # the lock, beside the folder
    assert changed == {folder / name for _, name in HOSTILE} | {
        folder / "MEMORY.md",
        sidecar,
        sidecar / ".eidetic.lock",
    }
    assert set(before) <= set(after)

    from eidetic.stores.files.memory_md import target_of

    lines = entries(folder)
    assert (folder / "MEMORY.md").read_text().startswith(INDEX)
    assert [target_of(line) for line in lines[2:]] == [name for _, name in HOSTILE]
    assert lines[:2] == INDEX.splitlines()[3:4] + INDEX.splitlines()[6:7]  # the injected name added no line
    assert all(len(line) <= 150 for line in lines)
    exported = cli("export", "--memory-dir", str(folder)).out.splitlines()
    assert sorted(json.loads(line)["id"] for line in exported) == sorted(
        [r["id"] for r in records] + ["Twin", "feedback_testing", "user_role"]
    )


def test_reads_leave_no_trace_and_plain_stores_keep_their_layout(cli, agent, env):
    project, folder = agent
    before = snapshot(folder.parent)
    assert cli("recall", "database", "--mode", "keyword", "--memory-dir", str(folder)).code == 0
    assert memory_recall("database", "--project-root", str(project))["count"] == 1
    assert snapshot(folder.parent) == before and not (folder.parent / ".memory.eidetic").exists()

    plain = env / "plain"
    remember(cli, plain, KILN)
    from eidetic.records import record_path

    assert (plain / record_path("kiln")).is_file() and not (plain / "MEMORY.md").exists()
    assert (plain / ".eidetic.lock").exists() and not (env / ".plain.eidetic").exists()


@pytest.mark.parametrize("attack", ["symlink", "latin-1", "sidecar"])
def test_what_cannot_be_written_safely_is_refused_and_nothing_written(cli, agent, env, attack):
    _, folder = agent
    precious = env / "precious.md"
    precious.write_text(INDEX)
    if attack == "symlink":
        (folder / "MEMORY.md").unlink()
        (folder / "MEMORY.md").symlink_to(precious)
    elif attack == "latin-1":
        (folder / "MEMORY.md").write_bytes(INDEX.encode() + "- [Caf\xe9](cafe.md)\n".encode("latin-1"))
    else:
        (folder.parent / ".memory.eidetic").symlink_to(env)
    before = snapshot(folder) | snapshot(env / "home" / ".claude")
    run = remember(cli, folder, KILN, code=2)
    message = run.err.lower()
    assert {"symlink": "symlink", "latin-1": "utf-8", "sidecar": "symlink"}[attack] in message, run.err
    assert snapshot(folder) | snapshot(env / "home" / ".claude") == before and precious.read_text() == INDEX
    assert not (env / ".eidetic.lock").exists()
    hits = cli("recall", "kiln", "--mode", "keyword", "--memory-dir", str(folder), "--json").json["items"]
    assert hits == []


def test_a_memory_folder_on_its_own_file_system_is_refused_clearly(cli, agent):
    _, folder = agent
    if os.geteuid() != 0:
        pytest.skip("needs a tmpfs mount (root)")
    saved = {p.name: p.read_bytes() for p in folder.iterdir()}
    if subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(folder)], capture_output=True).returncode:
        pytest.skip("mounts are not permitted here")
    try:
        for name, data in saved.items():
            (folder / name).write_bytes(data)
        run = remember(cli, folder, KILN, code=2)
        assert "another file system" in run.err and "nothing of this batch was written" in run.err
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == saved
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_killed_writer_leaves_nothing_in_the_folder_and_a_rerun_completes(agent, env):
    _, folder = agent
    sidecar = folder.parent / ".memory.eidetic"
    batch = "\n".join(
        json.dumps({"id": f"n{i}", "name": f"Note {i}", "description": f"hook {i}", "text": f"note {i} " * 100})
        for i in range(200)
    )
    command = [sys.executable, "-m", "eidetic", "remember", "--memory-dir", str(folder), "--no-embed"]
    killed_mid_batch = False
    for _ in range(6):
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None
        proc.stdin.write(batch.encode())
        proc.stdin.close()
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if sidecar.is_dir() and any(name.startswith(".staging-") for name in os.listdir(sidecar)):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
        proc.wait()
        if proc.returncode == -signal.SIGKILL:
            killed_mid_batch = any(p.name.startswith(".staging-") for p in sidecar.iterdir())
            _check_folder(folder)
        if killed_mid_batch:
            break
        for path in folder.glob("note_*.md"):
            path.unlink()  # the kill came too late: start over
        (folder / "MEMORY.md").write_text(INDEX)
    assert killed_mid_batch, "no kill landed while the batch was being written"

    done = run_process("remember", "--memory-dir", str(folder), "--no-embed", stdin=batch)
    assert done.code == 0, done.err
    _check_folder(folder)
    assert not any(p.name.startswith(".staging-") for p in sidecar.iterdir())  # the next writer removed it
    lines = entries(folder)
    assert len(lines) == 202 and len(set(lines)) == 202
    assert all((folder / line.split("](")[1].split(")")[0]).is_file() for line in lines)


def _check_folder(folder: Path) -> None:
    """Only markdown files in the folder, each complete, and the user's index lines intact."""
    assert all(p.is_file() and p.suffix == ".md" and not p.name.startswith(".") for p in folder.iterdir())
    for path in folder.glob("*.md"):
        if path.name != "MEMORY.md":
            frontmatter.parse(path.read_text(), path.stem)
    assert (folder / "MEMORY.md").read_text().startswith(INDEX)


def test_a_deletion_that_fails_puts_memory_md_back(tmp_path):
    from eidetic.errors import EideticError
    from eidetic.stores.files.folder import RecordFolder

    root = tmp_path / "memory"
    (root / "stuck.md").mkdir(parents=True)  # a folder cannot be unlinked: the deletion fails
    (root / "MEMORY.md").write_text(INDEX)
    files = RecordFolder(root, tmp_path / ".memory.eidetic")
    with files.lock(), pytest.raises(EideticError) as failure:
        files.delete("stuck.md", [("MEMORY.md", "# rewritten\n")])
    assert "nothing of this batch was written" in failure.value.remediation
    assert (root / "MEMORY.md").read_text() == INDEX and (root / "stuck.md").is_dir()
    assert sorted(p.name for p in (tmp_path / ".memory.eidetic").iterdir()) == [".eidetic.lock"]
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md", "stuck.md"]


@pytest.mark.parametrize("renameat2", [True, False], ids=["rename-noreplace", "hard-link"])
def test_a_new_file_never_replaces_one_made_meanwhile(tmp_path, monkeypatch, renameat2):
    """Put in place by a rename that refuses a taken name, or (where the platform has none) by a
    hard link."""
    from eidetic.stores.files import durable
    from eidetic.stores.files.durable import _place_new

    if not renameat2:
        monkeypatch.setattr(durable, "_rename_noreplace", lambda *args: False)

    staging, folder = tmp_path / "staging", tmp_path / "memory"
    staging.mkdir()
    folder.mkdir()
    (staging / "0").write_text("eidetic's new record")
    (folder / "kiln.md").write_text("the agent's memory, written a moment ago")
    staging_fd, folder_fd = os.open(staging, os.O_RDONLY), os.open(folder, os.O_RDONLY)
    try:
        with pytest.raises(FileExistsError):
            _place_new(staging_fd, "0", folder_fd, "kiln.md")
        _place_new(staging_fd, "0", folder_fd, "kiln-2.md")
    finally:
        os.close(staging_fd)
        os.close(folder_fd)
    assert (folder / "kiln.md").read_text() == "the agent's memory, written a moment ago"
    assert (folder / "kiln-2.md").read_text() == "eidetic's new record"


def test_concurrent_writers_of_one_name_get_distinct_files_and_every_line(agent, env):
    """Three writers at once, each with its own cache folder: the lock beside the folder is
    still the one lock they share."""
    _, folder = agent
    procs = []
    for writer in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", "eidetic", "remember", "--memory-dir", str(folder), "--no-embed"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "EIDETIC_CACHE_DIR": str(env / f"cache-{writer}")},
        )
        assert proc.stdin is not None
        lines = (
            json.dumps({"id": f"w{writer}-{i}", "name": "Shared topic", "text": f"w{writer} r{i}"}) for i in range(8)
        )
        proc.stdin.write("\n".join(lines).encode())
        proc.stdin.close()
        procs.append(proc)
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read().decode() if proc.stderr else ""
    made = sorted(p.name for p in folder.glob("shared_topic*.md"))
    assert made == sorted(["shared_topic.md"] + [f"shared_topic-{n}.md" for n in range(2, 25)])
    lines = entries(folder)
    assert len(lines) == 26 and len({line.split("](")[1] for line in lines}) == 26
    ids = {frontmatter.parse((folder / name).read_text(), name).id for name in made}
    assert ids == {f"w{writer}-{i}" for writer in range(3) for i in range(8)}
