"""Every relative link of the repository's markdown files leads somewhere: to a file that exists
and, with a ``#fragment``, to a heading of it (GitHub's anchors). The README hands a newcomer on
to docs/ by links, so a moved section or a renamed heading must not leave one dangling."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+).+?\1")


def markdown_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
    return [REPO / name for name in listed.stdout.split()]


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, inline code blanked: links in code are examples."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        lines.append("" if fenced else INLINE_CODE.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            base = slug(heading.group(1))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for number, line in enumerate(prose(path.read_text(encoding="utf-8")), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: and the like
                continue
            name, _, fragment = target.partition("#")
            linked = (path.parent / name).resolve() if name else path
            where = f"{path.relative_to(REPO)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append(f"{where} (no such heading in {linked.name})")
    return broken


def test_the_slug_is_githubs():
    assert slug("Web viewer and MCP over HTTP: `eidetic serve`") == "web-viewer-and-mcp-over-http-eidetic-serve"
    assert slug("Embedding throughput (`benchmarks/embed_speed.py`)") == "embedding-throughput-benchmarksembed_speedpy"


def test_a_dangling_link_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr("test_docs_links.REPO", tmp_path)
    (tmp_path / "a.md").write_text("# Top\n\n[ok](#top) [gone](b.md) [no heading](a.md#nowhere)\n`[code](c.md)`\n")
    assert broken_links(tmp_path / "a.md") == [
        "a.md:3: b.md (no such file)",
        "a.md:3: a.md#nowhere (no such heading in a.md)",
    ]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(path: Path):
    assert broken_links(path) == []
