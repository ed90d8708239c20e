"""The sqlite backend under SIGKILL: a batch is one transaction (all of it or none of it), the
database stays intact, and the derived keyword index catches up with it on the next command."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from eidetic.memory import Memory
from eidetic.ranking.access import Access

pytestmark = pytest.mark.slow  # killed writer processes


def _state(database) -> tuple[dict[str, str], set[str]]:
    """id -> text from the database, and the ids keyword search finds for the batch tag."""
    with Memory.open(backend="sqlite", db=database) as memory:
        texts = {r.id: r.text for _, r in memory.iter_records(Access(include_archived=True, include_shadowed=True))}
        found = memory.recall("zzqversion", mode="keyword", top_k=10**6, depth=0, record=False)
        return texts, {h.record.id for h in found.items}


def test_sigkill_never_half_writes_a_batch(env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    database = env / "crash.sqlite"
    command = [sys.executable, "-m", "eidetic", "remember", "--backend", "sqlite", "--db", str(database), "--no-embed"]
    base = "".join(json.dumps({"id": f"r{i}", "text": f"record {i} base"}) + "\n" for i in range(1000))
    subprocess.run(command, input=base, text=True, check=True, capture_output=True)
    rng = random.Random(5)
    span = None
    outcomes = set()
    for round_no in range(1, 21):
        batch = [
            {"id": f"r{i}", "text": f"record {i} round {round_no} zzqversion"} for i in rng.sample(range(1000), 150)
        ]
        batch += [{"id": f"new{round_no}-{j}", "text": f"new {j} round {round_no} zzqversion"} for j in range(150)]
        payload = "".join(json.dumps(r) + "\n" for r in batch)
        if span is None:  # time one uninterrupted batch: kills are spread over that span
            started = time.perf_counter()
            subprocess.run(command, input=payload, text=True, check=True, capture_output=True)
            span = time.perf_counter() - started
            continue
        before, _ = _state(database)
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
            env=os.environ.copy(),
        )
        proc.stdin.write(payload)
        proc.stdin.close()
        time.sleep(rng.uniform(0.3 * span, 1.6 * span))  # a loaded machine runs some batches slower
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(database) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        after, tagged = _state(database)
        written = [after.get(r["id"]) == r["text"] for r in batch]
        assert all(written) or not any(written), f"round {round_no}: a batch was half written"
        if not any(written):
            assert after == before
        outcomes.add(all(written))
        assert tagged == {rid for rid, text in after.items() if "zzqversion" in text}, (
            f"round {round_no}: the keyword index differs from the database"
        )
    assert outcomes == {True, False}  # kills landed both before and after a commit
