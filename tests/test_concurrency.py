"""Several agents remembering into one store at once lose nothing and corrupt nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from eidetic import frontmatter
from profiles import sized

pytestmark = pytest.mark.slow  # concurrent writer processes

WRITERS = sized(ci=4, soak=8)  # processes at once (tests/profiles.py)


def test_eight_concurrent_writers_lose_nothing(store, env):
    """Eight writers when soaking, four in the suite's default run."""
    writers = []
    for w in range(WRITERS):
        lines = "".join(
            json.dumps({"id": f"w{w}-r{i}", "text": f"writer {w} record {i} quokka", "metadata": {"writer": w}}) + "\n"
            for i in range(200)
        )
        # Output to a file: each reports 200 records and their near-duplicates, more than a pipe holds
        # while nobody reads it.
        output = env / f"writer-{w}.json"
        proc = subprocess.Popen(
            [sys.executable, "-m", "eidetic", "remember", "--json"],
            stdin=subprocess.PIPE,
            stdout=output.open("w"),
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        writers.append((proc, lines, output))
    for proc, lines, _ in writers:
        proc.stdin.write(lines)
        proc.stdin.close()
    for proc, _, output in writers:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
        assert json.loads(output.read_text())["upserted"] == 200
    files = sorted(store.rglob("*.md"))
    assert len(files) == 200 * WRITERS
    for path in files:
        record = frontmatter.parse(path.read_text(), path.stem)
        assert record.id == path.stem and "quokka" in record.text
    assert not list(store.glob(".staging-*"))
    status = subprocess.run(
        [sys.executable, "-m", "eidetic", "index", "--json"], capture_output=True, text=True, env=os.environ.copy()
    )
    assert json.loads(status.stdout)["stores"][0]["records"] == 200 * WRITERS
    found = subprocess.run(
        [sys.executable, "-m", "eidetic", "recall", f"writer {WRITERS - 1} record 199", "--mode", "exact", "--json"],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert [i["id"] for i in json.loads(found.stdout)["items"]] == [f"w{WRITERS - 1}-r199"]
