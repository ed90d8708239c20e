"""`memory-recall`, the seed 000 command line, as a real process over a coding agent's memory
folder: folder resolution, output shapes, read-only folders, usage kept out of the folder."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest

from conftest import snapshot


def memory_recall(*args, cwd=None):
    proc = subprocess.run(
        [sys.executable, "-m", "eidetic.cli.memory_recall", *args],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        cwd=cwd,
        timeout=120,
    )
    return proc


@pytest.fixture
def project(env):
    """A project folder and its agent memory folder under ~/.claude/projects."""
    root = env / "work" / "shop"
    root.mkdir()
    folder = env / "home" / ".claude" / "projects" / str(root).replace("/", "-") / "memory"
    folder.mkdir(parents=True)
    (folder / "deploy-checklist.md").write_text(
        "---\nname: deploy-checklist\ndescription: Steps before a deploy\ntype: feedback\n---\n"
        "Run the migration dry-run first. Then deploy.\n"
    )
    (folder / "glaze.md").write_text(
        "---\nname: glaze\ndescription: Kiln notes\ntype: reference\n---\nCone 6 glaze schedule.\n"
    )
    (folder / "MEMORY.md").write_text("- [deploy-checklist](deploy-checklist.md): deploy steps\n")
    (folder / "recall-stats.json").write_text("{}")
    return root, folder


def test_resolves_the_project_folder_and_prints_the_seed_json(project):
    root, folder = project
    proc = memory_recall("query", "deploy", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"terms", "dirs", "count", "results"}
    assert out["terms"] == ["deploy"] and out["dirs"] == [str(folder)] and out["count"] == 1
    hit = out["results"][0]
    seed = {"name", "type", "description", "path", "score", "recency_months", "usage_count", "snippet"}
    assert set(hit) == seed | {"id", "recall_count", "last_recall"}  # the seed's keys, and eidetic's names
    assert hit["name"] == "deploy-checklist" and hit["path"] == str(folder / "deploy-checklist.md")
    assert hit["score"] == pytest.approx((5 + 3 + 1 + 1.0) * 1.5, abs=0.01)  # fresh file: factor ~1.5
    assert "deploy" in hit["snippet"].lower() and hit["usage_count"] == 0
    again = json.loads(memory_recall("deploy", "--json", "--explain", "--project-root", str(root)).stdout)
    assert again["results"][0]["usage_count"] == again["results"][0]["recall_count"] == 1  # the first call counted
    assert again["results"][0]["last_recall"] is not None
    top = json.loads(memory_recall("deploy", "glaze", "--json", "--top-k", "1", "--memory-dir", str(folder)).stdout)
    assert top["count"] == 1  # --top-k is --limit
    assert again["results"][0]["breakdown"]["terms"]["deploy"] == {"name": 5.0, "description": 3.0, "body": 1.0}


def test_human_output_browse_and_all(project):
    root, folder = project
    text = memory_recall("glaze", "--memory-dir", str(folder)).stdout
    assert "glaze" in text and "[reference]" in text and "Kiln notes" in text and "Cone 6 glaze" in text
    assert str(folder / "glaze.md") in text
    browse = json.loads(memory_recall("--type", "reference", "--json", "--all").stdout)
    assert [r["name"] for r in browse["results"]] == ["glaze"] and browse["dirs"] == [str(folder)]
    none = memory_recall("--json", "--memory-dir", str(folder))
    assert none.returncode == 1 and "no query terms" in json.loads(none.stderr)["message"]
    assert memory_recall("-h").returncode == 0


def test_read_only_folder_is_never_written(project):
    _, folder = project
    before = snapshot(folder)
    for path in folder.iterdir():
        path.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        for args in (("deploy",), ("deploy", "--json"), ("glaze", "--explain")):
            proc = memory_recall(*args, "--memory-dir", str(folder))
            assert proc.returncode == 0, proc.stderr
        proc = memory_recall("deploy", "--json", "--no-record", "--memory-dir", str(folder))
        assert json.loads(proc.stdout)["results"][0]["usage_count"] == 2  # kept in the user's state
    finally:
        folder.chmod(stat.S_IRWXU)
        for path in folder.iterdir():
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert snapshot(folder) == before


def test_project_folders_named_the_agents_way_are_found(env):
    from eidetic.cli.memory_recall import memory_dir_for

    root = env / "work" / "my.site v2"
    root.mkdir(parents=True)
    projects = env / "home" / ".claude" / "projects"
    plain = projects / str(root).replace("/", "-") / "memory"
    strict = projects / re.sub(r"[^A-Za-z0-9]", "-", str(root)) / "memory"
    assert memory_dir_for(root) == plain  # neither exists: the documented form, reported as missing
    strict.mkdir(parents=True)
    assert memory_dir_for(root) == strict  # the agent's own naming (dots, spaces... as dashes)
    plain.mkdir(parents=True)
    assert memory_dir_for(root) == plain
    missing = memory_recall("deploy", "--json", cwd=root)
    assert missing.returncode == 0 and json.loads(missing.stdout)["count"] == 0


def test_bad_limits_are_clear_errors_and_write_nothing(project, env):
    _, folder = project
    before = snapshot(folder)
    for args in (("deploy", "--limit", "0"), ("deploy", "--stale-months", "0"), ("deploy", "--min-score", "x")):
        proc = memory_recall(*args, "--memory-dir", str(folder))
        assert proc.returncode in (1, 2) and proc.stdout == ""
        assert "limit" in proc.stderr or "stale-months" in proc.stderr or "min-score" in proc.stderr
    assert snapshot(folder) == before and not (env / "state").exists()
