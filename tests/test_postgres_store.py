"""The postgres backend against a real server (pgserver: PostgreSQL 18 + pgvector), no mocks.

One server for the session; each test gets a database of its own, so tests never see each other's
records and the schema is created from nothing every time.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest

from eidetic.clocks import parse_history
from eidetic.errors import ENV_ERROR, EideticError
from eidetic.index.analyzer import query_terms
from eidetic.ranking.access import Access
from eidetic.ranking.filters import Filters
from eidetic.records import Record, Scope
from eidetic.stores.base import IndexedRecord
from eidetic.stores.postgres import SCHEMA_VERSION, PostgresStore
from pg_server import start_postgres
from pg_store import ids, put, rec
from scratch import temporary_root

pytestmark = pytest.mark.server  # the session's PostgreSQL, and one of its own where a test stops it

PUBLIC = Access()
A_PRIVATE = Access(Scope("a", "private"))
B_PRIVATE = Access(Scope("b", "private"))
NONE = Filters()


@pytest.fixture(scope="module")
def server(postgres_dsn):
    """The session's PostgreSQL: each test gets a database of its own on it (``dsn``)."""
    return postgres_dsn


@pytest.fixture
def dsn(server):
    """A new, empty database on the module's server."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return make_conninfo(server, dbname=name)


@pytest.fixture
def store(dsn):
    s = PostgresStore(dsn)
    yield s
    s.close()


def unit(vector):
    import numpy as np

    v = np.asarray(vector, dtype=np.float32)
    return v / np.linalg.norm(v)


# -- schema ------------------------------------------------------------------------------------


def test_reads_never_create_the_schema_and_the_first_write_does(store, dsn):
    import psycopg

    assert not store.exists()
    assert store.count() == 0 and store.all_records() == [] and store.usage(["x"]) == {}
    assert store.keyword(["x"], PUBLIC, NONE, 5) == [] and store.exact("x", False, PUBLIC, NONE, 5) == []
    assert not store.exists()
    put(store, rec("r1", "hello world"))
    assert store.exists() and store.count() == 1
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()[0] == str(SCHEMA_VERSION)


def test_an_older_schema_is_upgraded_in_place_keeping_its_records(dsn):
    """A store at schema version 1 (written, then taken back to version 1: ``pg_schema``) is
    upgraded by the next eidetic that opens it: same records, same keyword ranking, and the
    impact index now carries the term frequencies that keyword() reads from it."""
    import psycopg

    from pg_store import downgrade

    first = PostgresStore(dsn)
    put(
        first,
        *[rec(f"c{i}", f"deploy the service number {i}") for i in range(30)],
        rec("rare", "deploy the zanzibar service"),
    )
    terms = query_terms("deploy zanzibar")
    before = ids(first, first.keyword(terms, PUBLIC, NONE, 10))
    first.close()
    downgrade(dsn, 1)
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()[0] == "1"
    upgraded = PostgresStore(dsn)
    assert upgraded.count() == 31
    put(upgraded, rec("later", "a record written after the upgrade"))  # the first write migrates
    assert ids(upgraded, upgraded.keyword(terms, PUBLIC, NONE, 10)) == before
    upgraded.close()
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()[0] == str(SCHEMA_VERSION)
        index = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'eidetic_postings_impact'").fetchone()[
            0
        ]
        assert "INCLUDE (doc, tf_name, tf_description, tf_text, tf_context)" in index


def test_a_store_of_schema_4_gains_the_clocks_keeping_its_records(dsn):
    """The version 6 step adds the event clock and the history to a store written before them:
    its records read back without either, and then carry both."""
    from pg_store import downgrade

    first = PostgresStore(dsn)
    put(first, rec("old", "written before the clocks"))
    first.close()
    downgrade(dsn, 4)
    upgraded = PostgresStore(dsn)
    [item] = upgraded.all_records()
    assert (item.record.history, item.record.valid_until, item.record.occurred) == ((), None, None)
    changed = item.record.with_changes(valid_until="2027-01-01", history=parse_history(HISTORY))
    with upgraded.lock():
        upgraded.write([(item, changed)])
    [again] = upgraded.all_records()
    assert again.record.valid_until == "2027-01-01" and [c.to_dict() for c in again.record.history] == HISTORY
    upgraded.close()


HISTORY = [{"at": "2026-03-01T10:00:00+00:00", "from": "active", "to": "archived"}]


def test_concurrent_first_writers_create_the_schema_once(dsn):
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        s = PostgresStore(dsn)
        try:
            put(s, rec(f"w{n}", f"writer {n} was here"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert PostgresStore(dsn).count() == 4


def test_key_and_location_name_the_server_without_credentials(server):
    from psycopg.conninfo import make_conninfo

    s = PostgresStore(make_conninfo(server, password="hunter2-secret", user="postgres"))
    assert s.backend == "postgres"
    assert "hunter2" not in s.key and "hunter2" not in s.location and "postgres" in s.key
    assert s.key == PostgresStore(server).key


# -- writes ------------------------------------------------------------------------------------


def test_replace_gets_a_new_doc_and_drops_the_old_postings(store):
    put(store, rec("r1", "the walrus sings at dawn"))
    old = store.by_ids(["r1"])["r1"]
    with store.lock():
        store.write([(old, rec("r1", "the narwhal dances at dusk"))])
    new = store.by_ids(["r1"])["r1"]
    assert new.doc > old.doc and new.record.text == "the narwhal dances at dusk"
    assert store.keyword(query_terms("walrus"), PUBLIC, NONE, 5) == []
    assert ids(store, store.keyword(query_terms("narwhal"), PUBLIC, NONE, 5)) == ["r1"]
    assert store.count() == 1 and store.by_docs([old.doc]) == {}
    assert store.current(old).text == "the narwhal dances at dusk"


def test_write_is_atomic(store):
    import psycopg

    put(store, rec("r1", "first"))
    with pytest.raises(psycopg.DataError), store.lock():  # postgres refuses NUL characters in text
        store.write([(None, rec("r2", "second")), (None, rec("r3", "third\x00nul bytes are rejected by postgres"))])
    assert [i.record.id for i in store.all_records()] == ["r1"]


def test_records_round_trip_and_come_back_by_id(store):
    r = rec(
        "Zeta",
        "text é",
        type="lesson",
        name="n",
        description="d",
        metadata={"a": [1, 2.5, True, None]},
        created="2026-01-02T03:04:05+00:00",
        updated="2026-01-03",
        added_by="bob",
        supersedes="old",
        links=["x", "y"],
        lifecycle="shadowed",
    )
    put(store, r, rec("alpha", "a"), rec("Beta", "b"))
    assert store.by_ids(["Zeta"])["Zeta"].record == r
    assert [i.record.id for i in store.all_records()] == ["Beta", "Zeta", "alpha"]  # code point order
    assert store.ids_by_hash([r.hash]) == {r.hash: [("Zeta", Scope())]}
    doc = store.by_ids(["Zeta"])["Zeta"].doc
    assert store.ranking_facts([doc]) == {doc: ("Zeta", "2026-01-02T03:04:05+00:00", None, None, None)}
    assert store.texts([doc]) == {doc: "text é"}


def test_delete_removes_record_postings_usage_and_vectors(store):
    import psycopg

    put(store, rec("r1", "secret token abc"), rec("r2", "other note"))
    store.sync_vectors("m", None, lambda rows: {h: unit([1, 0, i]) for i, (_, h) in enumerate(rows)})
    store.bump_usage({"r1": 1.0}, "2026-01-01T00:00:00+00:00")
    item = store.by_ids(["r1"])["r1"]
    store.delete(item)
    assert store.by_ids(["r1"]) == {} and store.usage(["r1"]) == {}
    assert store.keyword(query_terms("secret"), PUBLIC, NONE, 5) == []
    with psycopg.connect(store.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM eidetic_postings WHERE doc = %s", (item.doc,)).fetchone()[0] == 0
        assert (
            conn.execute("SELECT count(*) FROM eidetic_embeddings WHERE hash = %s", (item.record.hash,)).fetchone()[0]
            == 0
        )


def test_lock_serialises_writers_and_is_released_on_errors(dsn):
    first, second = PostgresStore(dsn), PostgresStore(dsn)
    order: list[str] = []
    with first.lock():
        with first.lock():  # nested use by one store is fine
            pass
        t = threading.Thread(target=lambda: (second.lock().__enter__(), order.append("second")))
        t.start()
        t.join(0.5)
        order.append("first done")
    t.join(5)
    assert order == ["first done", "second"]
    second.close()  # closing the connection releases its session lock
    with pytest.raises(RuntimeError), first.lock():
        raise RuntimeError("boom")
    third = PostgresStore(dsn)
    with third.lock():
        pass


# -- keyword -----------------------------------------------------------------------------------


def test_rare_term_ranks_first(store):
    put(
        store,
        *[rec(f"c{i}", f"deploy the service number {i}") for i in range(30)],
        rec("rare", "deploy the zanzibar service"),
    )
    hits = store.keyword(query_terms("deploy zanzibar"), PUBLIC, NONE, 5)
    assert ids(store, hits)[0] == "rare"
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert len(store.keyword(query_terms("deploy"), PUBLIC, NONE, 10, offset=25)) == 6


def test_pages_of_one_query_come_from_its_proven_ranking_until_a_write(store, dsn):
    put(store, *[rec(f"c{i}", f"deploy the service number {i}") for i in range(30)])
    terms = query_terms("deploy service")
    whole = store.keyword(terms, PUBLIC, NONE, 30)
    assert store.keyword(terms, PUBLIC, NONE, 10, offset=10) == whole[10:20]  # a later page, same order
    other = PostgresStore(dsn)  # another client writes a record that ranks first
    put(other, rec("new", "deploy service deploy service"))
    other.close()
    assert ids(store, store.keyword(terms, PUBLIC, NONE, 1)) == ["new"]


def test_bm25_matches_the_formula(store):
    import math

    put(store, rec("a", "apple banana"), rec("b", "apple apple cherry date"), rec("c", "elder"))
    scores = dict(store.keyword(["appl"], PUBLIC, NONE, 5))
    n, df, avg = 3, 2, (2 + 4 + 1) / 3
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    docs = {i.record.id: i.doc for i in store.all_records()}
    for rid, tf, length in (("a", 1, 2), ("b", 2, 4)):
        expected = 2.0 * idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))  # context weight 2
        assert scores[docs[rid]] == pytest.approx(expected, rel=1e-6)


def test_private_records_do_not_shift_public_scores(store):
    put(store, rec("p1", "kubernetes upgrade notes"), rec("p2", "upgrade the database"))
    before = store.keyword(query_terms("kubernetes upgrade"), PUBLIC, NONE, 5)
    put(store, *[rec(f"s{i}", "kubernetes kubernetes upgrade", Scope("a", "private")) for i in range(20)])
    assert store.keyword(query_terms("kubernetes upgrade"), PUBLIC, NONE, 5) == before
    assert store.keyword(query_terms("kubernetes upgrade"), B_PRIVATE, NONE, 5) == before
    mine = ids(store, store.keyword(query_terms("kubernetes upgrade"), A_PRIVATE, NONE, 30))
    assert set(mine) == {"p1", "p2", *(f"s{i}" for i in range(20))}


def test_filters_and_lifecycle_apply_inside_keyword(store):
    put(
        store,
        rec("n1", "gamma ray", type="note", metadata={"priority": 3, "source": "docs"}),
        rec("n2", "gamma burst", type="lesson", metadata={"priority": 1}),
        rec("n3", "gamma old", lifecycle="archived"),
    )
    terms = query_terms("gamma")
    assert set(ids(store, store.keyword(terms, PUBLIC, NONE, 5))) == {"n1", "n2"}
    assert ids(store, store.keyword(terms, PUBLIC, Filters.build(["priority=3"]), 5)) == ["n1"]
    assert ids(store, store.keyword(terms, PUBLIC, Filters.build(source="docs"), 5)) == ["n1"]
    assert ids(store, store.keyword(terms, PUBLIC, Filters.build(types=["lesson"]), 5)) == ["n2"]
    assert "n3" in ids(store, store.keyword(terms, Access(include_archived=True), NONE, 5))


def test_many_excluded_candidates_still_fill_the_page(store, monkeypatch):
    from eidetic.stores.postgres import keyword

    monkeypatch.setattr(keyword, "KEYWORD_DEPTH", 4)  # force the candidate window to grow
    put(
        store,
        *[rec(f"x{i:02d}", "comet " * 3, lifecycle="archived") for i in range(20)],
        *[rec(f"y{i}", "comet tail and a long body of words") for i in range(3)],
    )
    assert set(ids(store, store.keyword(["comet"], PUBLIC, NONE, 5))) == {"y0", "y1", "y2"}


def _bm25(records: list[Record], terms: list[str]) -> dict[str, float]:
    """Exhaustive BM25 of lone public records, computed here from the formula (per-field idf,
    weights name 1, description 1, context 2; a lone record's text field is empty)."""
    import math

    from eidetic.index.analyzer import analyze

    fields = [
        (1.0, [Counter(analyze(r.name or "")) for r in records]),
        (1.0, [Counter(analyze(r.description or "")) for r in records]),
        (2.0, [Counter(analyze(r.text)) for r in records]),
    ]
    n = len(records)
    scores: dict[str, float] = {}
    for weight, counts in fields:
        average = sum(sum(c.values()) for c in counts) / n
        for term in terms:
            df = sum(1 for c in counts if c[term])
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for r, c in zip(records, counts):
                if c[term]:
                    tf, length = c[term], sum(c.values())
                    scores[r.id] = scores.get(r.id, 0.0) + weight * idf * tf * 2.2 / (
                        tf + 1.2 * (0.25 + 0.75 * length / average)
                    )
    return scores


def _same_top(store: PostgresStore, hits, expected: dict[str, float], limit: int, offset: int = 0) -> None:
    """``hits`` are the BM25 top ``offset:offset+limit`` of ``expected``: the same scores, and the
    same records but for those tied with the page's last score."""
    best = sorted(expected.items(), key=lambda item: -item[1])[offset : offset + limit]
    assert [s for _, s in hits] == pytest.approx([s for _, s in best], rel=1e-9)
    last = best[-1][1]
    assert {rid for rid, (_, s) in zip(ids(store, hits), hits) if s > last * (1 + 1e-9)} == {
        rid for rid, s in best if s > last * (1 + 1e-9)
    }


def test_keyword_is_exhaustive_bm25_with_a_tiny_depth(store, monkeypatch):
    """The threshold algorithm against exhaustive BM25 computed here, over records whose lengths
    drift (short ones first, then long ones, then deletions: impacts written against older
    averages), with common and rare terms mixed. Depth and scored candidates are tiny, so every
    query goes through several rounds and both bounds decide when to stop."""
    import random

    from eidetic.stores.postgres import keyword

    monkeypatch.setattr(keyword, "KEYWORD_DEPTH", 3)
    monkeypatch.setattr(keyword, "KEYWORD_SCORED", 2)
    rng = random.Random(5)
    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(300)]
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf: a few common words, many rare

    def text(length: int) -> str:
        return " ".join(rng.choices(words, weights=weights, k=length))

    records = [
        rec(f"s{i:03d}", text(rng.randint(3, 12)), type=("note", "lesson")[i % 2], name=text(2) if i % 5 == 0 else None)
        for i in range(150)
    ]
    put(store, *records)
    longer = [
        rec(
            f"l{i:03d}",
            text(rng.randint(20, 60)),
            type=("note", "lesson")[i % 2],
            description=text(4) if i % 7 == 0 else None,
        )
        for i in range(150)
    ]
    for start in range(0, len(longer), 50):
        put(store, *longer[start : start + 50])
    records += longer
    gone = {r.id for r in records[::9]}
    for item in store.by_ids(gone).values():
        store.delete(item)
    records = [r for r in records if r.id not in gone]
    lessons = [r for r in records if r.type == "lesson"]
    for query in (
        ["waa", "wab"],
        ["waa", "wkz"],
        ["wab", "wac", "wlb"],
        ["wad", "wjq", "wka", "waa"],
        ["wbz", "wcd"],
        ["waa"],
        ["wae", "waf", "wag", "wah", "wai"],
    ):
        expected = _bm25(records, query)
        _same_top(store, store.keyword(query, PUBLIC, NONE, 10), expected, 10)
        _same_top(store, store.keyword(query, PUBLIC, NONE, 5, offset=5), expected, 5, offset=5)
        in_lessons = {rid: s for rid, s in _bm25(records, query).items() if rid in {r.id for r in lessons}}
        _same_top(store, store.keyword(query, PUBLIC, Filters.build(types=["lesson"]), 10), in_lessons, 10)


def test_thread_members_and_their_own_counts_are_what_recall_reads_for_context(store):
    """A keyword entry holds a record's own words; recall reads a thread member's place, the
    live members around a place and their counts to add its window's words at query time."""
    thread = {"thread": "chat-1"}
    put(
        store,
        rec("t1", "When did we ship the lighthouse release?", metadata=thread, created="2026-01-01"),
        rec("t2", "Yes, last Tuesday!", metadata=thread, created="2026-01-02"),
        rec("t3", "Unrelated later turn", metadata=thread, created="2026-01-03"),
        rec("t4", "Another later turn", metadata=thread, created="2026-01-04"),
        rec("lone", "lighthouse keeper", metadata={}),
    )
    terms = query_terms("lighthouse")
    assert set(ids(store, store.keyword(terms, PUBLIC, NONE, 5))) == {"t1", "lone"}  # own words only
    docs = {rid: item.doc for rid, item in store.by_ids(["t1", "t2", "t3", "t4", "lone"]).items()}
    places = store.thread_places(list(docs.values()))
    assert set(places) == {docs[r] for r in ("t1", "t2", "t3", "t4")}
    t2 = places[docs["t2"]]
    around = store.thread_around([t2[:3]], PUBLIC, 3)
    assert [member[2] for member in around] == ["t1", "t3", "t4"]
    counts = store.keyword_counts([docs["t1"], docs["lone"]], terms, PUBLIC)
    (term,) = terms
    assert counts[docs["t1"]][0][2:] == [{term: 1}, {term: 1}]  # text (a member) and context
    assert counts[docs["lone"]][0][2:] == [{}, {term: 1}]
    old = store.by_ids(["t1"])["t1"]
    with store.lock():
        store.write([(old, old.record.with_changes(lifecycle="archived"))])  # lends nothing now
    assert [member[2] for member in store.thread_around([t2[:3]], PUBLIC, 3)] == ["t3", "t4"]
    assert store.rebuild()["records"] == 5
    assert set(ids(store, store.keyword(terms, PUBLIC, NONE, 5))) == {"lone"}


def test_rebuild_reproduces_the_scores(store):
    put(store, *[rec(f"r{i}", f"note {i} about {'alpha ' * (i % 3)} beta") for i in range(10)])
    before = store.keyword(query_terms("alpha beta"), PUBLIC, NONE, 10)
    result = store.rebuild()
    assert result == {"store": store.location, "index": store.location, "records": 10, "unparseable": 0}
    assert dict(store.keyword(query_terms("alpha beta"), PUBLIC, NONE, 10)) == pytest.approx(dict(before))


# -- exact and fields --------------------------------------------------------------------------


def test_exact_is_case_insensitive_and_shortest_first(store):
    put(
        store,
        rec("long", "the Quick brown fox jumps over the lazy dog"),
        rec("short", "QUICK brown"),
        rec("none", "slow"),
        rec("accent", "Café ÉCLAIR"),
    )
    hits = store.exact("quick brown", False, PUBLIC, NONE, 5)
    assert ids(store, hits) == ["short", "long"]
    assert hits[0][1] == pytest.approx(1.0) and hits[1][1] == pytest.approx(11 / 43)
    assert store.exact("quick brown", True, PUBLIC, NONE, 5) == []
    assert ids(store, store.exact("éclair", False, PUBLIC, NONE, 5)) == ["accent"]
    assert ids(store, store.exact("brown", False, PUBLIC, NONE, 1, offset=1)) == ["long"]
    assert ids(store, store.exact("brown", False, PUBLIC, Filters.build(["k=v"]), 5)) == []


def test_fields_candidates(store):
    put(
        store,
        rec("f1", "body text", name="deploy-checklist", type="feedback", updated="2026-01-01"),
        rec("f2", "nothing here", description="About the Deploy"),
        rec("f3", "unrelated"),
    )
    rows = store.fields_candidates(["deploy checklist"], PUBLIC, NONE)
    assert [(r[1], r[7], r[8]) for r in rows] == [("f1", None, None)]
    assert {r[1] for r in store.fields_candidates(["deploy"], PUBLIC, NONE)} == {"f1", "f2"}
    assert {r[1] for r in store.fields_candidates([], PUBLIC, NONE)} == {"f1", "f2", "f3"}


# -- the no-leak rule --------------------------------------------------------------------------


def test_no_search_method_leaks_a_private_record(store):
    import numpy as np

    secret = rec("secret", "the vault password is swordfish", Scope("a", "private"))
    put(store, secret, rec("pub", "public note about a vault"))
    vectors = {secret.hash: unit([1, 0, 0]), rec("x", "public note about a vault").hash: unit([0, 1, 0])}
    store.sync_vectors("m", None, lambda rows: {h: vectors[h] for _, h in rows})
    doc = store.by_ids(["secret"])["secret"].doc
    q = np.asarray(unit([1, 0, 0]))
    for access in (PUBLIC, B_PRIVATE, Access(Scope("a", "public")), Access(Scope("b", "private"), scope_only=True)):
        assert doc not in dict(store.keyword(query_terms("vault swordfish"), access, NONE, 10))
        assert doc not in dict(store.exact("swordfish", False, access, NONE, 10))
        assert doc not in {r[0] for r in store.fields_candidates(["swordfish"], access, NONE)}
        assert doc not in store.nearest("m", q, access, NONE, 10)
        assert doc not in store.cosines("m", q, access, [doc])
    assert doc in dict(store.keyword(query_terms("swordfish"), A_PRIVATE, NONE, 10))
    assert doc in dict(store.exact("swordfish", False, A_PRIVATE, NONE, 10))
    assert doc in {r[0] for r in store.fields_candidates(["swordfish"], A_PRIVATE, NONE)}
    assert doc in store.nearest("m", q, A_PRIVATE, NONE, 10)
    assert store.cosines("m", q, A_PRIVATE, [doc])[doc] == pytest.approx(1.0, abs=1e-6)


# -- vectors -----------------------------------------------------------------------------------


def test_nearest_and_cosines_match_numpy(store):
    import numpy as np

    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    records = [rec(f"v{i:03d}", f"vector record {i}") for i in range(300)]
    put(store, *records)
    by_hash = {r.hash: matrix[i] for i, r in enumerate(records)}
    calls: list[int] = []

    def vectors_for(rows):
        calls.append(len(rows))
        return {h: by_hash[h] for _, h in rows}

    store.sync_vectors("m16", None, vectors_for)
    store.sync_vectors("m16", None, vectors_for)  # nothing new: no work
    assert calls == [300]
    docs = [store.by_ids([r.id])[r.id].doc for r in records]
    q = unit(rng.standard_normal(16))
    exact = matrix @ q
    truth = {docs[i] for i in np.argsort(-exact)[:10]}
    found = store.nearest("m16", q, PUBLIC, NONE, 10)
    assert len(found) == 10 and len(truth & set(found)) >= 9
    for doc, score in found.items():
        assert score == pytest.approx(float(exact[docs.index(doc)]), abs=1e-5)
    cos = store.cosines("m16", q, PUBLIC, docs[:50])
    assert cos == pytest.approx({docs[i]: float(exact[i]) for i in range(50)}, abs=1e-5)
    put(store, rec("late", "a record written after the first sync"))
    store.sync_vectors("m16", PUBLIC, lambda rows: {h: unit(np.ones(16)) for _, h in rows})
    assert store.status()["vectors"] == [{"model": "m16", "partition": "public", "rows": 301, "graph_rows": 301}]


def test_nearest_applies_filters(store):
    put(store, *[rec(f"v{i}", f"vec {i}", metadata={"keep": i % 2 == 0}) for i in range(40)])
    store.sync_vectors("m", None, lambda rows: {h: unit([1, i / 40, 0]) for i, (_, h) in enumerate(rows)})
    found = store.nearest("m", unit([1, 0, 0]), PUBLIC, Filters.build(["keep=true"]), 5)
    records = store.by_docs(list(found))
    assert len(found) == 5 and all(item.record.metadata["keep"] for item in records.values())


# -- usage -------------------------------------------------------------------------------------


def test_usage_bumps_from_threads_and_processes_lose_nothing(store, dsn):
    put(store, rec("hot", "often recalled"))
    store.set_usage("hot", 0.0, None)

    def bump_many() -> None:
        s = PostgresStore(dsn)
        for i in range(50):
            s.bump_usage({"hot": 1.0, "warm": 0.5}, f"2026-01-01T00:00:{i:02d}+00:00")
        s.close()

    threads = [threading.Thread(target=bump_many) for _ in range(4)]
    script = (
        "import sys; from eidetic.stores.postgres import PostgresStore; s = PostgresStore(sys.argv[1])\n"
        "for i in range(50): s.bump_usage({'warm': 0.5, 'hot': 1.0}, '2026-01-02T00:00:00+00:00')"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, dsn], cwd=str(Path(__file__).parent)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.wait(60) == 0 for p in procs)
    usage = store.usage(["hot", "warm"])
    assert usage["hot"] == (300.0, "2026-01-02T00:00:00+00:00")
    assert usage["warm"][0] == pytest.approx(150.0)
    store.forget_usage("hot")
    assert "hot" not in store.usage(["hot"])


# -- errors ------------------------------------------------------------------------------------


def test_connection_failure_names_the_host_not_the_password():
    s = PostgresStore("postgresql://eidetic:hunter2-secret@127.0.0.1:1/teamdb?connect_timeout=2")
    with pytest.raises(EideticError) as caught:
        s.exists()
    error = caught.value
    assert error.code == ENV_ERROR
    assert "127.0.0.1:1/teamdb" in error.message and "hunter2" not in error.message + error.remediation
    assert "EIDETIC_PG_DSN" in error.remediation


def test_a_server_lost_mid_session_is_an_environment_error_and_the_store_reconnects(tmp_path):
    import psycopg
    from psycopg.conninfo import make_conninfo

    dsn, stop = start_postgres(tmp_path, where=temporary_root())
    stopped = False
    try:
        s = PostgresStore(make_conninfo(dsn, password="hunter2-secret"))
        put(s, rec("r1", "kept across reconnects"))

        def lost(call) -> EideticError:
            with pytest.raises(EideticError) as caught:
                call()
            error = caught.value
            assert error.code == ENV_ERROR and s.target.host in error.message
            assert "hunter2" not in error.message + error.remediation
            return error

        with psycopg.connect(dsn, autocommit=True) as admin:  # what a server restart does to a session
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                "AND datname = current_database()"
            )
        assert "lost the connection" in lost(lambda: s.keyword(["kept"], PUBLIC, NONE, 5)).message
        assert s.count() == 1  # the next call connects afresh
        # vectors after a reconnect: the new session knows the pgvector type too
        s.sync_vectors("m", None, lambda rows: {h: unit([1, 0, 0]) for _, h in rows})
        doc = s.by_ids(["r1"])["r1"].doc
        assert s.cosines("m", unit([1, 0, 0]), PUBLIC, [doc]) == pytest.approx({doc: 1.0})
        stop()
        stopped = True
        lost(s.count)
        assert "cannot connect" in lost(s.count).message
    finally:
        if not stopped:
            stop()


def test_malformed_dsn_is_an_environment_error_without_the_dsn():
    with pytest.raises(EideticError) as caught:
        PostgresStore("host=x password=hunter2 nonsense")
    assert caught.value.code == ENV_ERROR and "hunter2" not in caught.value.message


def test_status_of_an_empty_and_a_filled_store(store):
    assert store.status()["records"] == 0
    put(store, rec("r1", "x y z"))
    status = store.status()
    assert status["backend"] == "postgres" and status["records"] == 1 and status["current"] is True
    assert status["unparseable"] == [] and status["conflicts"] == [] and status["vectors"] == []
    assert store.broken() == [] and store.file_of(IndexedRecord(1, None, rec("r1", "x"))) is None


def test_kept_postings_never_hide_another_writers_change(dsn, monkeypatch):
    """A long-running reader keeps common terms' postings between searches; every change another
    process commits is still seen, even one that leaves the term's counts as they were (a
    metadata edit: same text, a new doc) or touches only another term."""
    from eidetic.stores.postgres import keyword

    monkeypatch.setattr(keyword, "KEYWORD_DEPTH", 2)  # cut short: lists kept at more than one depth
    reader, writer = PostgresStore(dsn), PostgresStore(dsn)
    try:
        put(writer, *(rec(f"r{i}", "walrus " * (1 + i % 3) + f"tusk{i}") for i in range(8)))
        terms = query_terms("walrus")
        before = ids(reader, reader.keyword(terms, PUBLIC, NONE, 8))
        assert sorted(before) == [f"r{i}" for i in range(8)]
        assert ids(reader, reader.keyword(terms, PUBLIC, NONE, 8)) == before  # served again, same order

        put(writer, rec("r0", "walrus tusk0", metadata={"edited": True}))  # same text and counts
        again = reader.keyword(terms, PUBLIC, NONE, 8)
        assert sorted(ids(reader, again)) == sorted(before)
        assert reader.by_docs([doc for doc, _ in again])  # every doc read is a live one
        r0 = [item for item in reader.by_docs([doc for doc, _ in again]).values() if item.record.id == "r0"]
        assert r0 and r0[0].record.metadata == {"edited": True}

        put(writer, rec("r9", "walrus walrus walrus walrus walrus"))  # a new best match
        assert ids(reader, reader.keyword(terms, PUBLIC, NONE, 1)) == ["r9"]
        with writer.lock():
            writer.delete(writer.by_ids(["r9"])["r9"])
        assert "r9" not in ids(reader, reader.keyword(terms, PUBLIC, NONE, 10))
    finally:
        reader.close()
        writer.close()
