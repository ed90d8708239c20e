"""README.md and the guide it hands on to (docs/guide.md) cannot rot: every shell example of the
README and then of the guide runs as written, in the order written, in one
sandbox (a fresh home folder, a git repository as the current folder, the files a reader would
already have), each exiting 0, some with checks of what the README says they do. The few that
cannot run here are listed with where they are tested instead."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO
from readme_examples import GUIDE, Example, shell_examples

pytestmark = pytest.mark.slow  # every README example as a process

EXAMPLES = shell_examples()
BIN = Path(sys.executable).parent  # where this environment's eidetic and memory-recall are

# Sections and programs the sandbox does not run, and why.
ELSEWHERE = {
    "Install": ".ci/run runs these on a clean machine (they install from the package registry)",
    "Development set-up": ".ci/run runs these; test_ci_runs_the_readme_set_up checks it does",
}
NOT_HERE = {"claude": "Claude Code is not installed here; `eidetic mcp` itself is tested in tests/test_mcp.py"}
UNTIL_INTERRUPTED = {"eidetic watch"}  # run for a moment, then Ctrl-C


@dataclass
class Sandbox:
    home: Path
    project: Path
    env: dict[str, str]


def agent_memory(folder: Path, name: str, description: str, text: str) -> None:
    """A coding agent's memory folder as the agent leaves it: one file per memory and MEMORY.md."""
    folder.mkdir(parents=True)
    slug = name.lower().replace(" ", "_")
    (folder / f"{slug}.md").write_text(
        f"---\nname: {name}\ndescription: {description}\ntype: feedback\n---\n\n{text}\n", encoding="utf-8"
    )
    (folder / "MEMORY.md").write_text(f"# Memory\n\n- [{name}]({slug}.md) — {description}\n", encoding="utf-8")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    root = tmp_path_factory.mktemp("readme")
    home, project = root / "home", root / "shop"
    home.mkdir()
    project.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("EIDETIC_", "XDG_")) and k not in ("VISUAL", "EDITOR")
    }
    env.update({"HOME": str(home), "PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "VISUAL": "true"})
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    notes = [
        {
            "id": "note-7",
            "text": "Backups of the orders database run nightly at 02:00",
            "metadata": {"source": "runbook", "priority": 3},
        },
        {"id": "standup", "text": "The standup is at 09:30; deploy questions go there", "links": ["deploy-friday"]},
    ]
    (project / "notes.ndjson").write_text("".join(json.dumps(n) + "\n" for n in notes), encoding="utf-8")
    old = home / "old" / ".eidetic" / "memory"
    old.mkdir(parents=True)
    envelope = {
        "id": "e1",
        "hash": "-",
        "content": "The kiln needs a 30 A circuit",
        "scope": {"name": "default", "visibility": "public"},
        "metadata": {"type": "note", "record_metadata": {}, "recall_count": 2, "lifecycle": "active"},
    }
    (old / "default__public.jsonl").write_text(json.dumps(envelope) + "\n", encoding="utf-8")
    projects = home / ".claude" / "projects"
    agent_memory(
        projects / "-home-me-shop" / "memory",
        "Deploy checklist",
        "what to check before a deploy",
        "Run the migrations first.",
    )
    this_project = projects / str(project).replace("/", "-") / "memory"
    agent_memory(
        this_project, "Deploy checklist", "before every deploy", "Tag the release, then deploy checklist items."
    )
    return Sandbox(home, project, env)


def run(example: Example, box: Sandbox) -> subprocess.CompletedProcess:
    command = ["bash", "-e", "-o", "pipefail", "-c", example.command]
    if example.command.split("#")[0].strip() in UNTIL_INTERRUPTED:
        proc = subprocess.Popen(  # SIGINT as a terminal gives it, even when the runner's is ignored
            command,
            cwd=box.project,
            env=box.env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        return subprocess.CompletedProcess(command, proc.returncode, out, err)
    return subprocess.run(command, cwd=box.project, env=box.env, text=True, capture_output=True, timeout=180)


def items(result: subprocess.CompletedProcess) -> list[str]:
    return [item["id"] for item in json.loads(result.stdout)["items"]]


# What some examples promise, checked after they run: (words of the command, check).
CHECKS = {
    'recall "friday deploys" --mode keyword --json': lambda r, box: "deploy-friday" in items(r)[:2],
    'recall "standup" --depth 2 --json': lambda r, box: {"standup", "deploy-friday"} <= set(items(r)),
    "eidetic show deploy-day": lambda r, box: "Deploys run on Tuesdays" in r.stdout and "decision" in r.stdout,
    "--as-of 2026-02-01": lambda r, box: "id: release-day" in r.stdout and "release-wed" not in r.stdout,
    "eidetic show release-day": lambda r, box: "(superseded)" in r.stdout and "active -> shadowed" in r.stdout,
    "eidetic forget note-7 && eidetic restore note-7": lambda r, box: "note-7" in r.stdout + r.stderr,
    "export --all > backup.ndjson": lambda r, box: "note-7" in (box.project / "backup.ndjson").read_text(),
    "eidetic import me.ndjson --backend sqlite --db team.sqlite": lambda r, box: (
        box.project / "team.sqlite"
    ).is_file(),
    "eidetic import ~/old/.eidetic/memory": lambda r, box: '"imported": 1' in r.stdout or "1" in r.stdout,
    "eidetic completion bash >": lambda r, box: (
        "complete" in (box.home / ".local/share/bash-completion/completions/eidetic").read_text()
    ),
    "eidetic skills install": lambda r, box: (box.project / ".claude/skills/recall/SKILL.md").is_file(),
    "memory-recall deploy --top-k 3 --json": lambda r, box: (
        json.loads(r.stdout)["results"][0]["id"] == "deploy_checklist"
    ),
    "eidetic remember --memory-dir ~/.claude/projects/-home-me-shop/memory": lambda r, box: (
        "- [Kiln schedule](kiln_schedule.md) — cone 6 firing times"
        in (box.home / ".claude/projects/-home-me-shop/memory/MEMORY.md").read_text()
    ),
}


def test_every_check_names_an_example():
    for words in CHECKS:
        assert any(words in e.command for e in EXAMPLES), f"no README or guide example contains {words!r}"


def test_the_readme_installs_first():
    sections = [e.section for e in EXAMPLES]
    assert sections[0] == "Install" and "eidetic demo" in EXAMPLES[sections.count("Install") - 1].command


def test_the_guide_runs_after_the_readme():
    files = [e.file for e in EXAMPLES]
    assert files[0] == "README.md" and files[-1] == "docs/guide.md"
    assert files == sorted(files, key=["README.md", "docs/guide.md"].index)  # one sequence, README first


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{Path(e.file).stem}-line{e.line}" for e in EXAMPLES])
def test_readme_example_runs(example: Example, sandbox: Sandbox):
    if example.section in ELSEWHERE:
        pytest.skip(ELSEWHERE[example.section])
    if example.program in NOT_HERE:
        pytest.skip(NOT_HERE[example.program])
    result = run(example, sandbox)
    assert result.returncode == 0, (
        f"{example.file} line {example.line}: {example.command}\n{result.stdout}\n{result.stderr}"
    )
    assert "Traceback" not in result.stderr
    for words, check in CHECKS.items():
        if words in example.command:
            assert check(result, sandbox), (
                f"{example.file} line {example.line}: {example.command}\n{result.stdout}\n{result.stderr}"
            )


def test_guide_python_example_runs(sandbox: Sandbox):
    block = re.search(r"^## Python\n.*?^```python\n(.*?)^```$", GUIDE.read_text(), re.DOTALL | re.MULTILINE)
    assert block
    result = subprocess.run(
        [sys.executable, "-c", block.group(1)],
        cwd=sandbox.project,
        env=sandbox.env,
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert any(line.startswith("n1 ") for line in result.stdout.splitlines()), result.stdout


def test_ci_runs_the_readme_set_up():
    """.ci/run installs and tests as the README says (it adds only --quiet), and runs its Install."""
    ci = (REPO / ".ci" / "run").read_text().replace(" --quiet", "")
    for example in EXAMPLES:
        if example.section == "Development set-up":
            for part in example.command.split(" && "):
                assert part.strip() in ci, f"{part!r} of README line {example.line} is not in .ci/run"
    assert "readme_examples.py Install" in ci


def test_the_install_puts_every_console_script_on_path(tmp_path):
    """The Install's link line, run as written over a virtual environment's bin folder, puts each of
    pyproject's console scripts in ~/.local/bin: ``eidetic-hook`` too, the command a team's agent
    hooks run by name (docs/hooks.md)."""
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    venv_bin = tmp_path / ".local" / "share" / "eidetic" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    for name in scripts:
        (venv_bin / name).write_text("#!/bin/sh\n")
        (venv_bin / name).chmod(0o755)
    link = next(e.command for e in EXAMPLES if e.section == "Install" and "ln -sf" in e.command)
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", link], env={**os.environ, "HOME": str(tmp_path)})
    assert run.returncode == 0
    linked = {path.name: path.resolve() for path in (tmp_path / ".local" / "bin").iterdir()}
    assert linked == {name: venv_bin / name for name in scripts}
