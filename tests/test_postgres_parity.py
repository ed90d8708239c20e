"""The postgres backend gives back what the embedded backends give back.

Metadata numbers: jsonb normalises them (1e300 and 1e16 came back as ints, -0.0 as 0.0) and
reorders keys, so recall, get, export and ``migrate`` disagreed with sqlite and files. Metadata
is a json column since schema version 3: these tests pin the round trip, exactly (types, signs,
key order), through the public API, against sqlite, across ``migrate`` and across the upgrade
of a store written before. And a recall racing forget/restore must not fail.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
import traceback
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import fresh_database
from eidetic.index.analyzer import query_terms
from eidetic.memory import Memory
from eidetic.ranking.access import Access
from eidetic.ranking.filters import Filters
from eidetic.records import Record
from eidetic.stores.postgres import SCHEMA_VERSION, PostgresStore

TRICKY = {
    "big": 1e300,
    "neg": -0.0,
    "one": 1.0,
    "int": 2**62,
    "tiny": 5e-324,
    "nested": {"x": [1.5, -0.0]},
    "wide": 2**64 + 1,
    "zeta": "last key first",
    "alpha": True,
}


def same(a: Any, b: Any) -> bool:
    """Equal, and equal in type, sign and key order: ``==`` alone holds 1 == 1.0 == True and
    0.0 == -0.0, and ignores the order of keys."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture
def pg_dsn(env, postgres_dsn, request, monkeypatch) -> str:
    """A fresh database, and no embedder: these tests rank by keyword only."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    return fresh_database(postgres_dsn, f"parity_{abs(hash(request.node.nodeid)):x}")


@pytest.fixture
def pg(pg_dsn) -> Iterator[Memory]:
    memory = Memory.open(backend="postgres", dsn=pg_dsn)
    yield memory
    memory.close()


@pytest.fixture
def lite(env, monkeypatch) -> Iterator[Memory]:
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    memory = Memory.open(backend="sqlite", db=env / "parity.sqlite")
    yield memory
    memory.close()


def test_tricky_numbers_come_back_exactly_from_recall_get_and_export(pg: Memory) -> None:
    pg.remember([{"id": "n1", "text": "numbers round trip", "metadata": TRICKY}])
    [hit] = pg.recall("numbers", mode="keyword", record=False).items
    [(exported, _)] = list(pg.export_all())
    for metadata in (hit.record.metadata, pg.get("n1").metadata, exported.metadata):
        assert same(metadata, TRICKY), metadata
        assert type(metadata["big"]) is float and metadata["big"] == 1e300
        assert math.copysign(1, metadata["neg"]) == -1 and math.copysign(1, metadata["nested"]["x"][1]) == -1
        assert type(metadata["one"]) is float and type(metadata["int"]) is int


def test_a_process_wide_json_loader_does_not_change_metadata(pg: Memory) -> None:
    """An application embedding eidetic may set its own psycopg JSON loader (Decimal floats,
    say); the store keeps ``json.loads`` on its own connections."""
    from psycopg.types.json import set_json_loads

    pg.remember([{"id": "n1", "text": "numbers round trip", "metadata": TRICKY}])
    set_json_loads(lambda data: json.loads(data, parse_float=Decimal))
    try:
        with Memory.open(backend="postgres", dsn=pg.location) as other:
            assert same(other.get("n1").metadata, TRICKY)
    finally:
        set_json_loads(json.loads)


_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_KEYS = st.text(_CHARS, max_size=6)
_LEAVES = (
    st.none()
    | st.booleans()
    | st.text(_CHARS, max_size=12)
    | st.integers(-(2**63), 2**63 - 1)
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([-0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1.0, 1e16])
)
_VALUES = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=12
)
_METADATA = st.dictionaries(_KEYS, _VALUES, max_size=6)
_SERIAL = itertools.count()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(metadata=_METADATA)
def test_any_metadata_comes_back_from_postgres_as_from_sqlite(pg: Memory, lite: Memory, metadata: dict) -> None:
    n = next(_SERIAL)  # a fresh id and keyword per example: the stores live across examples
    record = {"id": f"p{n}", "text": f"parity sample zq{n}x", "metadata": metadata}
    lite.remember([record])
    pg.remember([record])
    expected = lite.get(record["id"]).metadata
    assert same(expected, metadata)  # sqlite is the reference: it gives back what it was given
    assert same(pg.get(record["id"]).metadata, expected)
    [hit] = pg.recall(f"zq{n}x", mode="keyword", record=False).items
    assert same(hit.record.metadata, expected)


def test_migrate_between_sqlite_and_postgres_keeps_numbers_exact(cli, env, pg_dsn: str) -> None:
    source, back = env / "source.sqlite", env / "back.sqlite"
    with Memory.open(backend="sqlite", db=source) as memory:
        memory.remember([{"id": "n1", "text": "numbers round trip", "metadata": TRICKY}])
    there = cli(
        "migrate", "--from", "sqlite", "--from-db", str(source), "--to", "postgres", "--to-dsn", pg_dsn, "--json"
    )
    assert there.code == 0, there.err
    with Memory.open(backend="postgres", dsn=pg_dsn) as memory:
        assert same(memory.get("n1").metadata, TRICKY)
    home = cli("migrate", "--from", "postgres", "--from-dsn", pg_dsn, "--to", "sqlite", "--to-db", str(back), "--json")
    assert home.code == 0, home.err
    with Memory.open(backend="sqlite", db=back) as memory:
        assert same(memory.get("n1").metadata, TRICKY)
    again = cli(
        "migrate", "--from", "sqlite", "--from-db", str(source), "--to", "postgres", "--to-dsn", pg_dsn, "--json"
    )
    assert again.json["written"] == 0  # what arrived is what was sent: nothing to rewrite


def _metadata_column(dsn: str) -> tuple[str, str]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        version = conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()[0]
        kind = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'eidetic_docs' "
            "AND column_name = 'metadata'"
        ).fetchone()[0]
    return version, kind


def test_a_version_2_store_is_upgraded_in_place_to_exact_metadata(pg_dsn: str) -> None:
    """A store at schema version 2 (metadata as jsonb: written, then taken back to version 2,
    ``pg_store``) is upgraded by the next eidetic that opens it: its rows keep the values they
    had, new writes come back exactly, and the keyword ranking is unchanged."""
    import psycopg

    from pg_store import downgrade

    terms = query_terms("deploy zanzibar")
    first = PostgresStore(pg_dsn)
    with first.lock():
        first.write(
            [(None, Record(id=f"c{i}", text=f"deploy the service number {i}")) for i in range(20)]
            + [(None, Record(id="old", text="deploy the zanzibar service", metadata=TRICKY))]
        )
    before = first.keyword(terms, Access(), Filters(), 10)
    first.close()
    downgrade(pg_dsn, 2)  # jsonb normalises the values, as it did when version 2 stores were written
    with psycopg.connect(pg_dsn) as conn:
        stored = conn.execute("SELECT metadata FROM eidetic_docs WHERE id = 'old'").fetchone()[0]
    assert _metadata_column(pg_dsn) == ("2", "jsonb")
    assert type(stored["big"]) is int and stored["neg"] == 0 and math.copysign(1, stored["neg"]) == 1  # jsonb's

    upgraded = PostgresStore(pg_dsn)
    assert same(upgraded.by_ids(["old"])["old"].record.metadata, stored)  # the first read migrates
    assert _metadata_column(pg_dsn) == (str(SCHEMA_VERSION), "json")
    assert upgraded.keyword(terms, Access(), Filters(), 10) == before
    with upgraded.lock():
        upgraded.write(
            [
                (None, Record(id="new", text="written after the upgrade", metadata=TRICKY)),
                (None, Record(id="old", text="deploy the zanzibar service", metadata=TRICKY)),
            ]
        )
    found = upgraded.by_ids(["new", "old"])
    assert same(found["new"].record.metadata, TRICKY) and same(found["old"].record.metadata, TRICKY)
    upgraded.close()


def test_recall_while_hits_are_forgotten_and_restored(pg_dsn: str) -> None:
    """Forget and restore rewrite a record under a new doc number; a recall (of each ranking
    path) that ranked the old number must still answer, with or without that record."""
    ids = [f"d{i}" for i in range(12)]
    with Memory.open(backend="postgres", dsn=pg_dsn) as memory:
        memory.remember([{"id": rid, "text": f"deploy the payment service {rid}"} for rid in ids])
    failures: list[str] = []
    recalls = 0
    stop = threading.Event()

    def churn() -> None:
        with Memory.open(backend="postgres", dsn=pg_dsn) as writer:
            while not stop.is_set():
                for rid in ids:
                    try:
                        writer.set_lifecycle(rid, "archived")
                        writer.set_lifecycle(rid, "active")
                    except Exception:  # noqa: BLE001 - reported below
                        failures.append(traceback.format_exc())

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        with Memory.open(backend="postgres", dsn=pg_dsn) as reader:
            deadline = time.monotonic() + 5
            for mode, query in itertools.cycle(
                [("keyword", "deploy payment"), ("exact", "payment"), ("fields", "deploy payment")]
            ):
                if time.monotonic() > deadline:
                    break
                try:
                    reader.recall(query, mode=mode, top_k=10, record=False)
                except Exception:  # noqa: BLE001 - reported below
                    failures.append(traceback.format_exc())
                recalls += 1
    finally:
        stop.set()
        thread.join()
    assert recalls > 10
    assert not failures, f"{len(failures)} failures in {recalls} recalls; first:\n{failures[0]}"
