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
from profiles import sized

pytestmark = pytest.mark.slow  # killed writer processes


def _state(database) -> tuple[dict[str, str], set[str]]:
    """id -> text from the database, and the ids keyword search finds for the batch tag."""
    with Memory.open(backend="sqlite", db=database) as memory:
        texts = {r.id: r.text for _, r in memory.iter_records(Access(include_archived=True, include_shadowed=True))}
        found = memory.recall("zzqversion", mode="keyword", top_k=10**6, depth=0, record=False)
        return texts, {h.record.id for h in found.items}


class KillMoments:
    """When to kill a batch, as fractions of an uninterrupted run's time: seeded draws over
    ``[low, high]``, moved toward the outcome not seen yet (as early as the start, as late as
    twice ``high``). Where the commit falls in a run
    differs from machine to machine; a test that needs kills on both sides of it must not
    depend on where."""

    def __init__(self, seed: int, low: float, high: float) -> None:
        self.rng = random.Random(seed)
        self.low, self.high = low, high
        self.outcomes: set[bool] = set()
        self.latest_uncommitted = low  # the latest kill that found nothing written
        self.earliest_committed = high  # the earliest kill that found the batch whole

    def next(self) -> float:
        if self.outcomes == {True}:  # every kill came after the commit: kill earlier
            return self.rng.uniform(0.0, self.earliest_committed)
        if self.outcomes == {False}:  # every kill came before it: kill later
            return self.rng.uniform(self.latest_uncommitted, 2 * self.high)
        return self.rng.uniform(self.low, self.high)

    def saw(self, fraction: float, committed: bool) -> None:
        self.outcomes.add(committed)
        if committed:
            self.earliest_committed = min(self.earliest_committed, fraction)
        else:
            self.latest_uncommitted = max(self.latest_uncommitted, fraction)

    def enough(self, kills: int, least: int) -> bool:
        return kills >= least and self.outcomes == {True, False}


def test_sigkill_never_half_writes_a_batch(env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    database = env / "crash.sqlite"
    command = [sys.executable, "-m", "eidetic", "remember", "--backend", "sqlite", "--db", str(database), "--no-embed"]
    base = "".join(json.dumps({"id": f"r{i}", "text": f"record {i} base"}) + "\n" for i in range(1000))
    subprocess.run(command, input=base, text=True, check=True, capture_output=True)
    rng = random.Random(5)
    moments = KillMoments(5, 0.3, 1.6)  # a loaded machine runs some batches slower
    span = None
    for round_no in range(1, 41):
        if moments.enough(round_no - 2, sized(ci=6, soak=19)):
            break
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
        fraction = moments.next()
        time.sleep(fraction * span)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(database) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        after, tagged = _state(database)
        written = [after.get(r["id"]) == r["text"] for r in batch]
        assert all(written) or not any(written), f"round {round_no}: a batch was half written"
        if not any(written):
            assert after == before
        moments.saw(fraction, all(written))
        assert tagged == {rid for rid, text in after.items() if "zzqversion" in text}, (
            f"round {round_no}: the keyword index differs from the database"
        )
    assert moments.outcomes == {True, False}  # kills landed both before and after a commit


# a remember whose bulk threshold is low, so a small batch into a small table takes the path a
# bulk remember of 10,000 records or more takes (its indexes dropped, then built after its rows)
LOW_BULK = (
    "import sys; import eidetic.index.database as d; d.BULK_ROWS = 50; "
    "from eidetic.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def _indexes(database) -> list[tuple[str, str]]:
    """The docs table's indexes, name and SQL, as the database holds them."""
    with sqlite3.connect(database) as conn:
        return sorted(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docs'"))


def test_a_bulk_batch_builds_the_docs_indexes_after_its_rows_and_a_kill_leaves_all_or_nothing(env, monkeypatch):
    """A batch larger than the table goes in without the docs table's indexes, which are built
    after its rows in the same transaction: killed at any moment, the database holds the batch
    whole with every index, or none of it with every index; never a table without them."""
    from eidetic.index import schema

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    rng = random.Random(9)
    batch = [{"id": f"b{i}", "text": f"bulk {i} zzqversion {rng.random()}"} for i in range(3000)]
    payload = "".join(json.dumps(r) + "\n" for r in batch)
    expected = None
    span = 0.0
    moments = KillMoments(9, 0.05, 1.0)  # the commit comes well before the process ends
    for round_no in range(40):
        if moments.enough(round_no - 2, sized(ci=5, soak=12)):
            break
        database = env / f"bulk{round_no}.sqlite"
        command = [sys.executable, "-c", LOW_BULK, "remember", "--backend", "sqlite", "--db", str(database)]
        subprocess.run([*command, "--no-embed", '{"id": "seed", "text": "seed"}'], check=True, capture_output=True)
        if expected is None:
            expected = _indexes(database)
            assert {name for name, _ in expected} == set(schema.DOCS_INDEXES)
        if round_no < 2:  # uninterrupted bulk batches (the second warm): kills are spread over its span
            started = time.perf_counter()
            subprocess.run([*command, "--no-embed"], input=payload, text=True, check=True, capture_output=True)
            span = time.perf_counter() - started
        else:
            proc = subprocess.Popen(
                [*command, "--no-embed"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            proc.stdin.write(payload)
            proc.stdin.close()
            fraction = moments.next()
            time.sleep(fraction * span)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        with sqlite3.connect(database) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert _indexes(database) == expected, f"round {round_no}: the docs table's indexes differ"
        after, tagged = _state(database)
        written = [after.get(r["id"]) == r["text"] for r in batch]
        assert all(written) or not any(written), f"round {round_no}: a batch was half written"
        assert set(after) - {r["id"] for r in batch} == {"seed"}
        if round_no >= 2:
            moments.saw(fraction, all(written))
        assert tagged == {rid for rid, text in after.items() if "zzqversion" in text}
    assert moments.outcomes == {True, False}  # kills landed both before and after a commit


def test_a_bulk_batch_that_fails_after_its_rows_leaves_the_table_and_its_indexes_as_they_were(cli, env, monkeypatch):
    """An error while the indexes are built (here: one of them cannot be) rolls the rows and
    the dropped indexes back together."""
    from eidetic.index import database as record_database
    from eidetic.index import schema

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setattr(record_database, "BULK_ROWS", 5)
    database = env / "failing.sqlite"
    where = ("--backend", "sqlite", "--db", str(database))
    assert cli("remember", *where, "--no-embed", '{"id": "seed", "text": "seed"}').code == 0
    before = _indexes(database)
    indexes = schema.DOCS_INDEXES
    broken = {**indexes, "docs_norm": "CREATE INDEX docs_norm ON docs(no_such_column)"}
    monkeypatch.setattr(schema, "DOCS_INDEXES", broken)
    batch = "".join(json.dumps({"id": f"f{i}", "text": f"failing {i}"}) + "\n" for i in range(20))
    with pytest.raises(sqlite3.OperationalError, match="no_such_column"):
        cli("remember", *where, "--no-embed", stdin=batch)
    assert _indexes(database) == before
    assert set(_state(database)[0]) == {"seed"}
    monkeypatch.setattr(schema, "DOCS_INDEXES", indexes)
    assert cli("remember", *where, "--no-embed", stdin=batch).code == 0  # the same batch, with every index built
    assert _indexes(database) == before and len(_state(database)[0]) == 21
