"""`eidetic audit`: fresh / stale / dead-reference with reasons; read-only."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

from conftest import snapshot
from eidetic.audit import grade, references

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_references_are_repository_paths_only():
    text = (
        "See src/real.py:12, docs/y.md:3-9 and .github/workflows/ci.yml; not https://x.org/a/b.html, "
        "docs.python.org/3/x.html, /etc/hosts, ~/notes/a.md, e.g. or v1.2; src/real.py again."
    )
    assert references(text) == ["src/real.py", "docs/y.md", ".github/workflows/ci.yml"]


def test_grades_and_reasons():
    old = datetime(2025, 1, 1, tzinfo=UTC)
    assert grade(NOW, None, [], NOW, 6)[0] == "fresh"
    stale, reasons = grade(old, None, [], NOW, 6)
    assert stale == "stale" and "never recalled" in reasons[0] and "limit 6 months" in reasons[0]
    assert grade(old, "2026-05-20T00:00:00Z", [], NOW, 6)[0] == "fresh"  # recalled lately
    dead, reasons = grade(old, None, ["src/x.py"], NOW, 6)
    assert dead == "dead-reference" and len(reasons) == 2  # the worse grade, both reasons
    assert grade(None, None, [], NOW, 6)[0] == "stale"  # never dated, never recalled


def test_audit_command(cli, env):
    repo = env / "work"
    (repo / ".git").mkdir()
    (repo / "src").mkdir()
    (repo / "src" / "real.py").write_text("")
    folder = env / "memory"
    folder.mkdir()
    for stem, body in (
        ("alive", "Parser in src/real.py:12."),
        ("dead", "Parser moved from src/gone.py."),
        ("old", "An old note."),
        ("used", "An old note we still use."),
    ):
        (folder / f"{stem}.md").write_text(f"---\nname: {stem}\ntype: project\n---\n{body}\n")
    ancient = time.time() - 400 * 86400
    for stem in ("old", "used"):
        os.utime(folder / f"{stem}.md", (ancient, ancient))
    assert cli("recall", "still use", "--mode", "fields", "--memory-dir", str(folder)).code == 0
    before = snapshot(folder)
    run = cli("audit", "--memory-dir", str(folder), "--json")
    assert run.code == 0, run.err
    report = run.json
    grades = {m["id"]: m["grade"] for m in report["items"]}
    assert grades == {"alive": "fresh", "dead": "dead-reference", "old": "stale", "used": "fresh"}
    assert report["summary"] == {"fresh": 2, "stale": 1, "dead-reference": 1} and report["repo_root"] == str(repo)
    assert report["items"][0]["id"] == "dead" and report["items"][0]["missing"] == ["src/gone.py"]
    text = cli("audit", "--memory-dir", str(folder), "--stale-months", "24")
    assert "4 memories: 3 fresh, 0 stale, 1 dead-reference" in text.out
    shown = cli("audit", "--memory-dir", str(folder)).out  # the problems first, the fresh ones counted
    named = [line.split()[1] for line in shown.splitlines() if line and not line.startswith(" ")]
    assert named[:2] == ["dead", "old"] and "alive" not in named and "used" not in named
    assert "src/gone.py" in shown and "the 2 fresh ones are not listed (--json lists all)" in shown.splitlines()[-1]
    assert cli("audit", "--memory-dir", str(folder), "--stale-months", "0").code == 1
    assert snapshot(folder) == before  # read-only
