"""Exact search on the postgres backend through eidetic's own trigram filter (schema 5), against
a real server: both routes (the walk by length, the GIN filter) give exactly the walk's answer
for every query, hostile and non-ASCII ones included; the route is picked from the server's
statistics; every write path keeps the trigrams in step; and older stores are upgraded."""

from __future__ import annotations

import sys

import pytest

from conftest import fresh_database, ndjson
from eidetic.docsql.searches import DocSearches
from eidetic.ranking.access import Access
from eidetic.ranking.filters import Filters
from eidetic.records import Record, Scope
from eidetic.stores.postgres import SCHEMA_VERSION, PostgresStore, exact, trigrams
from pg_store import columns, downgrade, ids, put, rec

PUBLIC = Access()
NONE = Filters()


@pytest.fixture
def dsn(postgres_dsn, request):
    return fresh_database(postgres_dsn, f"x_{abs(hash(request.node.nodeid)):x}")


@pytest.fixture
def store(dsn):
    s = PostgresStore(dsn)
    yield s
    s.close()


def analysed(dsn: str) -> PostgresStore:
    """The store after ANALYZE, opened afresh (a store reads the column's statistics once a
    minute), its session planning as for a big table: a small one is cheaper to scan than to
    look up, so the server would not use the indexes whose use these tests observe."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE eidetic_docs")
    store = PostgresStore(dsn)
    store.conn.execute("SET enable_seqscan = off")
    return store


def filter_scans(store: PostgresStore) -> int:
    """How often the GIN trigram index has been scanned, this session's scans included."""
    conn = store.conn
    conn.execute("SELECT pg_stat_force_next_flush()")
    return conn.execute(
        "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'eidetic_docs_trigrams'"
    ).fetchone()[0]


def walked(store: PostgresStore, query: str, case_sensitive: bool, access=PUBLIC, filters=NONE, limit=10, offset=0):
    """The answer of the plain walk by length over the same session (no trigrams): what exact
    search must return."""
    return DocSearches(store._session).exact(query, case_sensitive, access, filters, limit, offset)


def in_step(dsn: str) -> int:
    """Assert every row's trigrams are those of its text (NULL where Python cannot fold it as
    the server would); returns how many rows."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id, text, trigrams FROM eidetic_docs").fetchall()
    for rid, text, grams in rows:
        expected = trigrams.column(text)
        if expected is None:
            assert grams is None, rid
        else:
            assert sorted(grams or []) == [int(g) for g in expected[1:-1].split(",") if g] and grams is not None, rid
    return len(rows)


def unicode_check(dsn: str, query: str, case_sensitive: bool) -> set[str]:
    """The records whose text contains ``query`` by the server's plain check, written out here:
    Python lower-cases the query, the server's Unicode case mapping the text."""
    import psycopg

    check = "strpos(text, %s) > 0" if case_sensitive else "strpos(lower(text COLLATE pg_unicode_fast), %s) > 0"
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f"SELECT id FROM eidetic_docs WHERE {check}", (query if case_sensitive else query.lower(),))
        return {rid for (rid,) in rows}


# -- folding: what is indexed and what is checked agree ------------------------------------------

TEXTS = {
    "strasse": "Die Straße ist lang",
    "upper-strasse": "DIE STRASSE IST LANG",
    "istanbul": "İstanbul im Winter",
    "lower-istanbul": "istanbul in summer",
    "greek": "ΟΔΟΣ ΑΓΙΟΥ ΝΙΚΟΛΑΟΥ",
    "greek-mid": "ΟΔΟΣΑ ΚΑΙ ΑΛΛΑ",
    "rocket": "deploy 🚀🚀 now, then 🎉",
    "kelvin": "300 \u212aelvin is warm",
    "newer": "\ua7cbamma ray burst",  # U+A7CB: newer than Python 3.11's Unicode tables, lowered by the server
    "symbols": "100% of_the \\path\\ 'quoted' \"double\" a_b%c",
    "dotted": "Iİıi mixed dots",
}
QUERIES = [
    "straße",
    "STRASSE",
    "strasse",
    "İSTANBUL",
    "i̇stanbul",
    "istanbul",
    "ΔΟΣ",
    "δος",
    "δοσ",
    "οδοσα",
    "🚀🚀 n",
    "🎉",
    "kelvin",
    "\u212aELVIN",
    "\u0264amma",  # the server lowers U+A7CB to this
    "100%",
    "f_t",
    "a_b%c",
    "\\path\\",
    "'quoted'",
    '"double"',
    "% of",
    "iİı",
    "ii̇ı",
    "mixed",
    "nothing like this anywhere",
]


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_the_filter_finds_exactly_what_the_walk_finds_in_any_script(dsn, case_sensitive):
    """Every query against every text, both routes: the filter route (statistics say every
    trigram is rare, so it is asked at once) returns exactly the walk's answer."""
    first = PostgresStore(dsn)
    put(first, *[rec(rid, text) for rid, text in TEXTS.items()])
    first.close()
    store = analysed(dsn)
    assert in_step(dsn) == len(TEXTS)
    for query in QUERIES:
        expected = walked(store, query, case_sensitive)
        assert store.exact(query, case_sensitive, PUBLIC, NONE, 10) == expected, query
        assert set(ids(store, expected)) == unicode_check(dsn, query, case_sensitive), query
    insensitive = {q: ids(store, store.exact(q, False, PUBLIC, NONE, 10)) for q in QUERIES}
    if not case_sensitive:  # the server's Unicode case mapping, found through the filter
        assert insensitive["STRASSE"] == ["upper-strasse"] and insensitive["straße"] == ["strasse"]
        assert insensitive["İSTANBUL"] == ["istanbul"] and insensitive["istanbul"] == ["lower-istanbul"]
        assert insensitive["ΔΟΣ"] == ["greek"] and insensitive["δοσ"] == ["greek-mid"]
        assert insensitive["\u212aELVIN"] == ["kelvin"] and insensitive["🚀🚀 n"] == ["rocket"]
        assert insensitive["\u0264amma"] == ["newer"]  # its row has no trigrams: always checked
        assert insensitive["a_b%c"] == ["symbols"] and insensitive["% of"] == ["symbols"]
    store.close()


def test_folding_maps_each_character_alone_so_substrings_keep_their_trigrams():
    """A text's trigrams hold every trigram of any substring of it, whatever the case."""
    text = "ΟΔΟΣ İstanbul Straße 🚀 ΑΣ"
    grams = set(trigrams.of_query(text) or [])
    for start in range(len(text)):
        for end in range(start + 3, len(text) + 1):
            part = trigrams.of_query(text[start:end])
            assert part is None or set(part) <= grams, text[start:end]
            lowered = trigrams.of_query(text[start:end].lower())
            assert lowered is None or set(lowered) <= grams, text[start:end]
    assert trigrams.of_query("ab") is None and trigrams.of_query("\ua7cbxy") is None
    assert trigrams.column("ab") == "{}" and trigrams.column("\ua7cb is new") is None


# -- hostile queries ---------------------------------------------------------------------------


def test_hostile_queries_through_the_filter(store, dsn):
    put(
        store,
        rec("pct", "a 100% match of %s and %% and _ under_score"),
        rec("slash", "C:\\Users\\x and \\\\server\\share"),
        rec("quote", "it's \"quoted\" and it''s doubled; DROP TABLE eidetic_docs; --"),
        rec("long", "word " * 2000),
    )
    store = analysed(dsn)
    hostile = [
        "100%",
        "%s and",
        "%% and",
        "_ under",
        "under_score",
        "\\Users\\",
        "\\\\server",
        "it's",
        "it''s",
        '"quoted"',
        "DROP TABLE eidetic_docs; --",
        "'); DROP TABLE eidetic_docs; --",
        "word " * 500,
        "word " * 2001,  # longer than any text
        "x" * 10_000,
        "%_%_%_%",
    ]
    for query in hostile:
        for case_sensitive in (False, True):
            assert store.exact(query, case_sensitive, PUBLIC, NONE, 10) == walked(store, query, case_sensitive), query
    assert ids(store, store.exact("it''s", True, PUBLIC, NONE, 10)) == ["quote"]
    assert ids(store, store.exact("word " * 500, False, PUBLIC, NONE, 10)) == ["long"]
    assert store.exact("word " * 2001, False, PUBLIC, NONE, 10) == []
    assert store.count() == 4  # nothing was dropped
    store.close()


# -- the route ---------------------------------------------------------------------------------


def _corpus() -> list[Record]:
    """400 short records that all say "the deploy runbook" and hold every trigram of "runbook
    the deploy" but not that phrase, which only three long ones do; one rare word."""
    records = [rec(f"c{i:03d}", f"step {i}: the deploy runbook, look to it", type="note") for i in range(400)]
    records += [rec("rare", "the deploy runbook mentions zanzibar once", type="lesson")]
    records += [rec(f"l{i}", "padding " * 40 + f"runbook the deploy {i}", type="lesson") for i in range(3)]
    return records


def test_the_route_follows_the_statistics_and_both_give_the_walks_answer(dsn):
    first = PostgresStore(dsn)
    put(first, *_corpus())
    assert exact.TrigramStats(first).get() is None  # never analysed: no statistics yet
    assert exact.plan(trigrams.of_query("zanzibar") or [], None)[1] == exact.UNKNOWN_WALK
    first.close()
    store = analysed(dsn)
    stats = exact.TrigramStats(store).get()
    assert stats is not None and stats[1] == 404
    rare, common = trigrams.of_query("zanzibar") or [], trigrams.of_query("the deploy") or []
    assert exact.plan(rare, stats)[1] == 0  # a trigram rarer than the statistics track: the filter
    keys, walk = exact.plan(common, stats)
    assert len(keys) == exact.KEYS and walk == int(exact.WALK_SHARE * 404)  # in every row: walk first

    scans = filter_scans(store)
    assert ids(store, store.exact("zanzibar", False, PUBLIC, NONE, 10)) == ["rare"]
    assert filter_scans(store) == scans + 1  # the filter answered

    scans = filter_scans(store)
    found = store.exact("the deploy", False, PUBLIC, NONE, 10, offset=5)
    assert found == walked(store, "the deploy", False, limit=10, offset=5) and len(found) == 10
    assert filter_scans(store) == scans  # the walk found them among the shortest texts

    scans = filter_scans(store)  # under 3 characters: no trigram, the walk alone
    found = store.exact("st", False, PUBLIC, NONE, 5)
    assert len(found) == 5 and found == walked(store, "st", False, limit=5)
    assert trigrams.of_query("z1") is None and ids(store, store.exact("z1", False, PUBLIC, NONE, 5)) == []
    assert filter_scans(store) == scans

    phrase = "runbook the deploy"  # common trigrams, a phrase only the long texts hold: walk, then filter
    assert exact.plan(trigrams.of_query(phrase) or [], stats)[1] > 0
    scans = filter_scans(store)
    found = store.exact(phrase, False, PUBLIC, NONE, 10)
    assert ids(store, found) == ["l0", "l1", "l2"] and found == walked(store, phrase, False)
    assert filter_scans(store) == scans + 1
    store.close()


def test_the_filter_applies_scope_lifecycle_filters_and_pages(dsn):
    """The filter route admits exactly what the walk admits: another scope's private records,
    archived ones, type and metadata filters, and pages by limit and offset."""
    first = PostgresStore(dsn)
    put(
        first,
        *_corpus(),
        *[rec(f"z{i}", f"zanzibar note {i}", metadata={"priority": i % 3}) for i in range(12)],
        rec("secret", "zanzibar vault code", scope=Scope("a", "private")),
        rec("gone", "zanzibar archived", lifecycle="archived"),
    )
    first.close()
    store = analysed(dsn)
    mine, theirs = Access(Scope("a", "private")), Access(Scope("b", "private"))
    every = Access(Scope("a", "private"), include_archived=True)
    for access in (PUBLIC, mine, theirs, every):
        for filters in (NONE, Filters.build(["priority>=1"]), Filters.build(types=["lesson"])):
            for limit, offset in ((5, 0), (5, 5), (3, 11), (50, 0)):
                got = store.exact("zanzibar", False, access, filters, limit, offset)
                assert got == walked(store, "zanzibar", False, access, filters, limit, offset)
    secret = store.by_ids(["secret"])["secret"].doc
    assert secret not in dict(store.exact("zanzibar vault", False, theirs, NONE, 50))
    assert secret not in dict(store.exact("zanzibar vault", False, PUBLIC, NONE, 50))
    assert secret in dict(store.exact("zanzibar vault", False, mine, NONE, 50))
    store.close()


def test_rows_without_trigrams_are_always_checked_and_a_rebuild_fills_them(dsn):
    """A row an older eidetic wrote after the upgrade (its COPY leaves ``trigrams`` NULL) is
    found by the filter as any other; ``index --rebuild`` computes its trigrams."""
    import psycopg

    first = PostgresStore(dsn)
    put(first, rec("new", "zanzibar spice market"), *[rec(f"o{i}", f"other note {i}") for i in range(50)])
    first.close()
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE eidetic_docs SET trigrams = NULL WHERE id = 'new'")
    store = analysed(dsn)
    assert exact.plan(trigrams.of_query("zanzibar") or [], exact.TrigramStats(store).get())[1] == 0
    assert ids(store, store.exact("spice market", False, PUBLIC, NONE, 10)) == ["new"]
    with pytest.raises(AssertionError):
        in_step(dsn)
    store.rebuild()  # fills them in
    assert in_step(dsn) == 51
    assert ids(store, store.exact("spice market", False, PUBLIC, NONE, 10)) == ["new"]
    store.close()


# -- every write path keeps the trigrams in step -------------------------------------------------


def test_every_write_path_keeps_the_trigrams_in_step(cli, env, dsn, monkeypatch, postgres_dsn, request):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setenv("EIDETIC_BACKEND", "postgres")
    monkeypatch.setenv("EIDETIC_PG_DSN", dsn)

    def found(query: str) -> list[str]:
        run = cli(
            "recall", query, "--mode", "exact", "--no-record", "--json", "--include-archived", "--include-shadowed"
        )
        assert run.code == 0, run.err
        return [item["id"] for item in run.json["items"]]

    assert cli("remember", '{"id": "r1", "text": "the walrus sings"}').code == 0
    assert cli("remember", '{"id": "r1", "text": "the narwhal dances"}').code == 0  # an update
    assert found("narwhal") == ["r1"] and found("walrus") == []
    script = env / "editor.py"  # a real editor substitute: run as $EDITOR with the file to edit
    script.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\np.write_text(p.read_text().replace('dances', 'waltzes'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    assert cli("edit", "r1").code == 0
    assert found("waltzes") == ["r1"] and found("dances") == []
    assert cli("remember", '{"id": "r2", "text": "narwhal tusks", "supersedes": "r1"}').code == 0
    assert cli("forget", "r2").code == 0 and cli("restore", "r2").code == 0
    (env / "in.ndjson").write_text(ndjson({"id": "imp", "text": "imported okapi"}))
    assert cli("import", str(env / "in.ndjson")).code == 0
    sqlite = env / "from.sqlite"
    assert (
        cli("remember", "--backend", "sqlite", "--db", str(sqlite), '{"id": "mig", "text": "migrated quokka"}').code
        == 0
    )
    assert cli("migrate", "--from", "sqlite", "--from-db", str(sqlite), "--to", "postgres", "--to-dsn", dsn).code == 0
    assert in_step(dsn) == 4
    assert found("okapi") == ["imp"] and found("quokka") == ["mig"] and found("narwhal") == ["r2", "r1"]
    assert cli("index", "--rebuild").code == 0
    assert in_step(dsn) == 4


# -- schema version 5 --------------------------------------------------------------------------


def _v4_store(dsn: str) -> list[Record]:
    """A store at schema version 4, as the previous eidetic left it, holding records."""
    records = [rec(f"n{i:03d}", f"note {i} about the deploy") for i in range(300)]
    records += [rec("rare", "the zanzibar runbook"), rec("newer", "\ua7cbamma ray")]
    first = PostgresStore(dsn)
    put(first, *records)
    first.close()
    downgrade(dsn, 4)
    assert "trigrams" not in columns(dsn)
    return records


def test_a_version_4_store_is_upgraded_and_backfilled(dsn, monkeypatch):
    import psycopg

    monkeypatch.setattr(trigrams, "BACKFILL_BATCH", 64)  # several batches
    _v4_store(dsn)
    store = PostgresStore(dsn)
    assert ids(store, store.exact("zanzibar", False, PUBLIC, NONE, 10)) == ["rare"]  # a read upgrades it
    assert in_step(dsn) == 302
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()[0] == str(SCHEMA_VERSION)
        indexes = {
            name for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'eidetic_docs'")
        }
        assert {"eidetic_docs_trigrams", "eidetic_docs_untrigrammed"} <= indexes
    assert exact.TrigramStats(store).get() is not None  # analysed after the backfill
    assert ids(store, store.exact("\u0264amma", False, PUBLIC, NONE, 10)) == ["newer"]
    store.close()


def test_two_processes_opening_a_version_4_store_at_once_upgrade_it_once(dsn):
    """Two eidetic processes open the old store at the same moment: one upgrades it, the other
    waits for it, and both answer."""
    import subprocess
    import sys

    _v4_store(dsn)
    script = (
        "import sys; from eidetic.stores.postgres import PostgresStore\n"
        "from eidetic.ranking.access import Access; from eidetic.ranking.filters import Filters\n"
        "s = PostgresStore(sys.argv[1]); print(len(s.exact('deploy', False, Access(), Filters(), 500)))"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, dsn], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0] and outputs == ["300", "300"]
    assert in_step(dsn) == 302


def test_a_newer_schema_is_refused(dsn):
    import psycopg

    from eidetic.errors import ENV_ERROR, EideticError

    put(PostgresStore(dsn), rec("r1", "kept"))
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE eidetic_meta SET value = %s WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(EideticError) as caught:
        PostgresStore(dsn).count()
    assert caught.value.code == ENV_ERROR and "newer than this eidetic understands" in caught.value.message
