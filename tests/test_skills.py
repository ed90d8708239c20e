"""The recall and remember agent skills: ``eidetic skills install`` and the wrapper scripts,
run with bash in a git repository with a culture.yaml, the CLI found on PATH (a shim) or
through ``uv run`` from the checkout."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from eidetic.frontmatter import split
from eidetic.locations import culture_nick

SKILLS = Path(__file__).resolve().parents[1] / "src" / "eidetic" / "skills"
FILES = ["recall/SKILL.md", "recall/scripts/recall.sh", "remember/SKILL.md", "remember/scripts/remember.sh"]


def _shim(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def repo(env, monkeypatch, cli):
    """A git repository with a culture.yaml naming the agent ``lobes``, the skills installed,
    and an ``eidetic`` shim first on PATH."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    root = env / "repo"
    (root / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "culture.yaml").write_text("agents:\n  - suffix: lobes\n    backend: claude\n")
    monkeypatch.chdir(root / "src")
    run = cli("skills", "install", "--json")
    assert run.code == 0, run.err
    _shim(env / "bin", "eidetic", f'exec "{sys.executable}" -m eidetic "$@"')
    monkeypatch.setenv("PATH", f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return root


def wrapper(
    root: Path, verb: str, *args: str, cwd: Path | None = None, stdin: str | None = None, path: str | None = None
) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=path) if path is not None else None
    return subprocess.run(
        ["bash", str(root / ".claude" / "skills" / verb / "scripts" / f"{verb}.sh"), *args],
        input=stdin,
        text=True,
        capture_output=True,
        check=False,
        cwd=cwd or root / "src" / "deep",
        env=env,
        timeout=60,
    )


def eidetic(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "eidetic", *args], text=True, capture_output=True, check=False, cwd=cwd, timeout=60
    )


def test_install_copies_the_skills_and_refuses_to_overwrite_changes(cli, env, monkeypatch):
    root = env / "proj"
    (root / "a" / "b").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root / "a" / "b")
    first = cli("skills", "install", "--json")
    assert first.code == 0, first.err
    target = root / ".claude" / "skills"
    assert first.json == {"target": str(target), "skills": ["recall", "remember"], "written": FILES, "unchanged": []}
    for rel in FILES:
        assert (target / rel).read_bytes() == (SKILLS / rel).read_bytes()
    for rel in FILES[1::2]:
        assert (target / rel).stat().st_mode & stat.S_IXUSR
    assert cli("skills", "install", "--json").json["unchanged"] == FILES

    (target / "recall" / "SKILL.md").write_text("our own version")
    refused = cli("skills", "install", "--json")
    assert refused.code == 1 and "recall/SKILL.md" in refused.err_json["message"]
    assert (target / "recall" / "SKILL.md").read_text() == "our own version"
    forced = cli("skills", "install", "--force")
    assert forced.code == 0 and "1 file(s) written, 3 unchanged" in forced.out
    assert (target / "recall" / "SKILL.md").read_bytes() == (SKILLS / "recall" / "SKILL.md").read_bytes()

    elsewhere = env / "plain"
    elsewhere.mkdir()
    assert cli("skills", "install", str(elsewhere), "--json").json["target"] == str(elsewhere / ".claude" / "skills")
    assert cli("skills", "install", str(env / "missing"), "--json").code == 1


def test_skill_files_have_front_matter_telling_when_to_use_them():
    for skill in ("recall", "remember"):
        meta, body = split((SKILLS / skill / "SKILL.md").read_text())
        assert meta["name"] == skill and "Use when" in meta["description"]
        assert f".claude/skills/{skill}/scripts/{skill}.sh" in body


def test_the_wrappers_share_one_implementation():
    def shared(name: str) -> str:
        text = (SKILLS / name).read_text()
        return text[text.index("# --- shared") : text.index("# --- end of the shared part")]

    assert shared("recall/scripts/recall.sh") == shared("remember/scripts/remember.sh")


@pytest.mark.slow
def test_no_flag_remember_is_private_and_no_flag_recall_finds_it(repo):
    stored = wrapper(repo, "remember", '{"id": "mine", "text": "the lighthouse key is under the mat"}', "--json")
    assert stored.returncode == 0, stored.stderr
    public = eidetic("remember", '{"id": "shared", "text": "the lighthouse opens at dawn"}', cwd=repo)
    assert public.returncode == 0, public.stderr

    mine = [
        json.loads(line)
        for line in eidetic("export", "--scope", "lobes", "--visibility", "private", cwd=repo).stdout.splitlines()
    ]
    assert {d["id"]: (d["scope"]["name"], d["scope"]["visibility"]) for d in mine} == {
        "mine": ("lobes", "private"),
        "shared": ("default", "public"),
    }
    assert not any("key is under" in p.read_text() for p in (repo / ".eidetic").rglob("*.md"))  # not committed

    found = wrapper(repo, "recall", "lighthouse", "--json")
    assert found.returncode == 0, found.stderr
    assert sorted(item["id"] for item in json.loads(found.stdout)["items"]) == ["mine", "shared"]

    other = wrapper(repo, "recall", "lighthouse", "--scope", "someone", "--visibility", "private", "--json")
    assert [item["id"] for item in json.loads(other.stdout)["items"]] == ["shared"]
    default = eidetic("recall", "lighthouse", "--json", cwd=repo)
    assert [item["id"] for item in json.loads(default.stdout)["items"]] == ["shared"]


@pytest.mark.slow
def test_an_explicit_scope_is_forwarded_verbatim(repo):
    assert wrapper(repo, "remember", '{"id": "team", "text": "team note"}', "--scope", "team").returncode == 0
    assert (
        wrapper(
            repo, "remember", '{"id": "eq", "text": "equals form"}', "--scope=crew", "--visibility=private"
        ).returncode
        == 0
    )
    assert (
        wrapper(repo, "remember", '{"id": "pub", "text": "my public note"}', "--visibility", "public").returncode == 0
    )
    scopes = {}
    for flags in ([], ["--scope", "crew", "--visibility", "private"]):
        for line in eidetic("export", *flags, cwd=repo).stdout.splitlines():
            record = json.loads(line)
            scopes[record["id"]] = (record["scope"]["name"], record["scope"]["visibility"])
    assert scopes == {"team": ("team", "public"), "eq": ("crew", "private"), "pub": ("lobes", "public")}


@pytest.mark.slow
def test_the_recall_wrapper_answers_nothing_relevant_unless_told_otherwise(repo):
    notes = "".join(f'{{"id": "l{i}", "text": "the lighthouse {word}"}}\n' for i, word in enumerate(("opens", "shuts")))
    assert wrapper(repo, "remember", stdin=notes).returncode == 0
    query = "lighthouse yeast protein assays"  # one word every record shares, the rare ones absent
    floored = json.loads(wrapper(repo, "recall", query, "--json").stdout)
    assert (floored["items"], floored["below_floor"]) == ([], 2)
    for off in (("--relevance-floor", "off"), ("--relevance-floor=off",)):
        shown = json.loads(wrapper(repo, "recall", query, *off, "--json").stdout)
        assert len(shown["items"]) == 2 and "below_floor" not in shown, off
    kept = json.loads(wrapper(repo, "recall", "lighthouse opens", "--json").stdout)
    assert [item["id"] for item in kept["items"]] == ["l0"] and kept["below_floor"] == 1


def test_without_culture_yaml_no_scope_is_added(repo, env):
    bare = env / "bare"
    bare.mkdir()
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    assert wrapper(repo, "remember", '{"id": "anon", "text": "no agent here"}', cwd=bare).returncode == 0
    record = json.loads(eidetic("export", cwd=bare).stdout)
    assert (record["id"], record["scope"]) == ("anon", {"name": "default", "visibility": "public"})


def test_without_eidetic_on_path_the_wrapper_uses_uv_from_the_checkout(repo, env):
    (repo / "pyproject.toml").write_text("[project]\nname = 'checkout'\n")
    log = env / "uv.log"
    # a stand-in for uv: records its arguments, then runs what follows "eidetic"
    uv = _shim(
        env / "uvbin",
        "uv",
        f'echo "$@" > "{log}"\nwhile [ "$1" != eidetic ]; do shift; done\nshift\n'
        f'exec "{sys.executable}" -m eidetic "$@"',
    )
    path = f"{uv.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    if shutil.which("eidetic", path=path):
        pytest.skip("an eidetic is installed system-wide")
    run = wrapper(repo, "recall", "anything", "--json", path=path)
    assert run.returncode == 0, run.stderr
    assert log.read_text().split() == [
        "run",
        "--project",
        str(repo),
        "eidetic",
        "recall",
        "--scope",
        "lobes",
        "--visibility",
        "private",
        "--relevance-floor",
        "auto",
        "anything",
        "--json",
    ]
    uv.unlink()
    missing = wrapper(repo, "recall", "anything", path=f"/usr/bin{os.pathsep}/bin")
    if shutil.which("uv", path=f"/usr/bin{os.pathsep}/bin") is None:
        assert missing.returncode == 2 and "eidetic not found" in missing.stderr


CULTURES = [
    "agents:\n  - suffix: lobes\n    backend: claude\n",
    "suffix: top\nnick: n\n",
    "nick: onlynick\n",
    'agents:\n- nick: n1\n  suffix: "s1"  # comment\n- suffix: s2\n',
    "name: x\nagents:\n  - backend: claude\n    config:\n      suffix: deep\n    nick: realnick\n  - suffix: b\nsuffix: t\n",
    "agents: []\nsuffix: fromtop\n",
    "agents:\n  - lobes\nsuffix: t2\n",
    "agents:\n  -   suffix: 'quoted'\n",
    "suffix: ~\nnick: fallback\n",
    "# c\nagents:\r\n  - suffix: crlf\r\n",
    "server:\n  suffix: nested\n",
    "agents:\n  - suffix: two words\n",
]


@pytest.mark.parametrize("culture", CULTURES)
def test_the_wrappers_read_culture_yaml_as_eidetic_does(tmp_path, culture):
    script = (SKILLS / "recall" / "scripts" / "recall.sh").read_text()
    parser = script[script.index("culture_suffix() {") : script.index("\n}\n", script.index("culture_suffix() {")) + 3]
    (tmp_path / "culture.yaml").write_text(culture)
    (tmp_path / "a" / "b").mkdir(parents=True)
    run = subprocess.run(
        ["bash", "-c", parser + "culture_suffix"],
        text=True,
        capture_output=True,
        check=False,
        cwd=tmp_path / "a" / "b",
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (culture_nick(tmp_path / "a" / "b") or "")
