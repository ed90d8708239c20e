"""The storage contract: every behaviour of remember, recall, lifecycle, traversal, scope and
usage, run unchanged against each backend (``files``, ``sqlite``, ``postgres``, ``neo4j``; the
``backend`` fixture points the CLI and ``Memory.open()`` at a fresh store of each)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from datetime import UTC

import pytest

from conftest import field_counts, ids, ndjson
from eidetic.memory import Memory
from eidetic.stores.base import RecordStore
from eidetic.stores.files.store import MarkdownStore
from eidetic.stores.graph import GraphStore
from eidetic.stores.postgres import PostgresStore
from eidetic.stores.sqlite import SqliteStore
from profiles import sized

CORPUS = (
    {"id": "nano", "text": "The Orin Nano draws 7W", "metadata": {"source": "discord", "priority": 3}},
    {"id": "agx", "text": "Jetson AGX power budget is 65W", "metadata": {"source": "docs", "priority": 1}},
    {"id": "cat", "text": "cat"},
    {"id": "hat", "text": "cat in the hat sat on a mat", "type": "story"},
    {"id": "ban1", "text": "banana split is sweet", "metadata": {"due": "2026-12-01", "done": True}},
    {"id": "ban2", "text": "banana banana bread", "metadata": {"due": "2026-10-01", "done": False}},
    {"id": "pie", "text": "apple cherry pie", "created": "2024-01-01T00:00:00+00:00"},
)


@pytest.fixture
def corpus(cli, backend):
    run = cli("remember", stdin=ndjson(*CORPUS))
    assert run.code == 0, run.err
    return backend


def test_every_backend_offers_the_storage_interface_and_nothing_more():
    """Every public method of a backend is one of ``RecordStore``'s, with its parameters (mypy
    checks their types where ``memory.stores`` opens each backend as a ``RecordStore``)."""

    def methods(cls: type) -> dict[str, list[tuple[str, object, object]]]:
        return {
            name: [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]
            for name, method in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")
        }

    interface = methods(RecordStore)
    for backend in (MarkdownStore, SqliteStore, PostgresStore, GraphStore):
        assert methods(backend) == interface, backend.__name__


def test_exact_and_keyword_rank_alike_on_every_backend(cli, corpus):
    hits = cli("recall", "cat", "--mode", "exact", "--json").json["items"]
    assert [h["id"] for h in hits] == ["cat", "hat"]
    assert hits[0]["score"] == pytest.approx(1.0 * (1 + 0.25 * (hits[0]["signal"] - 0.5)))
    assert ids(cli("recall", "ORIN nano", "--mode", "exact", "--json")) == ["nano"]
    assert ids(cli("recall", "Orin", "--mode", "exact", "--case-sensitive", "--json")) == ["nano"]
    assert ids(cli("recall", "orin", "--mode", "exact", "--case-sensitive", "--json")) == []
    assert ids(cli("recall", "banana", "--mode", "keyword", "--json")) == ["ban2", "ban1"]
    assert ids(cli("recall", "gamma", "--mode", "keyword", "--json")) == []
    # hybrid without an embedder is keyword, and says so
    run = cli("recall", "banana", "--json")
    assert ids(run) == ["ban2", "ban1"] and run.json["embedder"]["online"] is False


def test_json_items_carry_the_whole_record_and_ranking_facts(cli, corpus):
    item = cli("recall", "orin", "--mode", "keyword", "--json").json["items"][0]
    assert item["id"] == "nano" and item["metadata"] == {"source": "discord", "priority": 3}
    assert item["scope"] == {"name": "default", "visibility": "public"}
    assert item["lifecycle"] == "active" and item["tier"] == "primary" and item["depth"] == 0
    for key in ("score", "signal", "recall_count", "last_recall", "created", "links", "supersedes"):
        assert key in item


def test_filters_are_typed_and_pushed_down(cli, corpus):
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", "priority=3", "--json")) == ["nano"]
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", "priority>=1", "--json")) == ["nano", "agx"]
    assert ids(cli("recall", "w", "--mode", "exact", "--source", "docs", "--json")) == ["agx"]
    assert ids(cli("recall", "draws", "--mode", "exact", "--filter", "priority=3", "--json")) == ["nano"]
    assert ids(cli("recall", "draws", "--mode", "exact", "--filter", "priority=1", "--json")) == []
    assert ids(cli("recall", "cat", "--mode", "exact", "--type", "story", "--json")) == ["hat"]
    assert ids(cli("recall", "banana", "--mode", "keyword", "--filter", "done=true", "--json")) == ["ban1"]
    assert ids(cli("recall", "banana", "--mode", "keyword", "--filter", "due<=2026-11-01", "--json")) == ["ban2"]
    assert ids(cli("recall", "pie", "--mode", "keyword", "--until", "2025-01-01", "--json")) == ["pie"]
    assert ids(cli("recall", "pie", "--mode", "keyword", "--since", "2025-01-01", "--json")) == []


def test_upsert_replaces_and_an_unchanged_remember_writes_nothing(cli, backend):
    with Memory.open() as memory:
        assert memory.remember([{"id": "x", "text": "first version about otters"}]).written == 1
        assert memory.remember([{"id": "x", "text": "second version about beavers"}]).written == 1
        assert memory.remember([{"id": "x", "text": "second version about beavers"}]).written == 0
        assert [h.record.id for h in memory.recall("otters", mode="keyword").items] == []
        [hit] = memory.recall("beavers", mode="keyword").items
        assert hit.record.text == "second version about beavers" and hit.record.updated is not None
        assert sum(1 for _ in memory.iter_records(_public())) == 1


def test_a_write_names_each_records_file_as_file_of_does(cli, backend):
    """``RecordStore.write`` returns where each record it wrote lives, so remember's answer needs
    no read-back: the same as ``file_of`` of the stored copy (a file on the files backend,
    None elsewhere), for new records and rewritten ones; and remember's answer says the same."""
    from eidetic.records import Record, Scope

    with Memory.open() as memory:
        store = memory._stores.write_target(Scope())
        with store.lock():
            written = store.write([(None, Record(id=rid, text=f"where {rid} lives", scope=Scope())) for rid in "pq"])
        stored = store.by_ids(["p", "q"])
        assert written == {rid: store.file_of(stored[rid]) for rid in "pq"}
        assert (written["p"] is not None) == (backend == "files")
        with store.lock():
            again = store.write([(stored["p"], stored["p"].record.with_changes(text="where p lives now"))])
        assert again == {"p": store.file_of(store.by_ids(["p"])["p"])} and again["p"] == written["p"]
        answer = memory.remember(
            [
                {"id": "p", "text": "where p lives now"},  # unchanged
                {"id": "q", "text": "q moved on"},  # updated
                {"id": "r", "text": "a new one"},
                {"id": "s", "text": "a new one"},  # a duplicate of r
            ]
        )
    stored = store.by_ids(["p", "q", "r"])
    placed = {entry["id"]: (entry["status"], entry["path"], entry["store"]) for entry in answer.items}
    assert placed == {
        "p": ("unchanged", store.file_of(stored["p"]), store.location),
        "q": ("updated", store.file_of(stored["q"]), store.location),
        "r": ("new", store.file_of(stored["r"]), store.location),
        "s": ("duplicate", store.file_of(stored["r"]), store.location),
    }


def test_duplicates_are_per_scope_and_scope_never_moves(cli, backend):
    first = cli(
        "remember", "--json", stdin=ndjson({"id": "a", "text": "same words"}, {"id": "b", "text": "same words"})
    )
    assert first.json["duplicates"] == [{"id": "b", "duplicate_of": "a"}]
    other = cli("remember", "--json", "--scope", "team", stdin=ndjson({"id": "c", "text": "same words"}))
    assert other.json["duplicates"] == [] and other.json["ids"] == ["c"]
    moved = cli("remember", "--json", "--scope", "team", stdin=ndjson({"id": "a", "text": "moved"}))
    assert moved.code == 1 and "cannot move" in moved.err_json["message"]
    assert sorted(ids(cli("recall", "same words", "--mode", "exact", "--json"))) == ["a", "c"]


def test_a_bad_batch_writes_nothing(cli, backend):
    run = cli("remember", stdin=ndjson({"id": "ok", "text": "fine"}, {"id": "bad", "text": ""}))
    assert run.code == 1 and "line 2" in run.err
    assert ids(cli("recall", "fine", "--mode", "exact", "--json")) == []


def test_private_records_never_leave_their_scope(cli, backend):
    cli(
        "remember",
        "--scope",
        "alice",
        "--visibility",
        "private",
        stdin=ndjson({"id": "secret", "text": "alice private zebra note", "links": []}),
    )
    cli("remember", stdin=ndjson({"id": "pub", "text": "public zebra note", "links": ["secret"]}))
    for mode in ("exact", "keyword", "hybrid", "fields"):
        query = "zebra note"
        assert ids(cli("recall", query, "--mode", mode, "--json")) == ["pub"], mode
        assert ids(cli("recall", query, "--mode", mode, "--scope", "bob", "--visibility", "private", "--json")) == [
            "pub"
        ], mode
        assert ids(cli("recall", query, "--mode", mode, "--scope", "alice", "--json")) == ["pub"], mode
        mine = ids(cli("recall", query, "--mode", mode, "--scope", "alice", "--visibility", "private", "--json"))
        assert sorted(mine) == ["pub", "secret"], mode
    assert cli("forget", "secret", "--json").code == 1  # same error as a missing id
    with Memory.open() as memory:
        from eidetic.ranking.access import Access
        from eidetic.records import Scope

        assert [r.id for _, r in memory.iter_records(Access(Scope("bob", "private")))] == ["pub"]
        overview = memory.overview(Access(Scope("bob", "private")))
        assert sum(store.records for store in overview) == 1


def test_private_bm25_statistics_do_not_move_public_scores(cli, backend):
    cli(
        "remember",
        stdin=ndjson({"id": "p1", "text": "walrus facts and figures"}, {"id": "p2", "text": "walrus walrus tusks"}),
    )
    before = cli("recall", "walrus", "--mode", "keyword", "--no-record", "--json").json["items"]
    cli(
        "remember",
        "--scope",
        "carol",
        "--visibility",
        "private",
        stdin=ndjson(*({"id": f"c{i}", "text": f"walrus private {i}"} for i in range(20))),
    )
    after = cli("recall", "walrus", "--mode", "keyword", "--no-record", "--json").json["items"]
    # a moment apart, freshness has aged a little (scores are not rounded): same ranking
    assert [h["id"] for h in after] == [h["id"] for h in before]
    assert [h["score"] for h in after] == pytest.approx([h["score"] for h in before], rel=1e-6)


def test_supersedes_shadows_at_once_and_sweep_archives(cli, backend):
    cli("remember", stdin=ndjson({"id": "old", "text": "the build uses make"}))
    cli("remember", stdin=ndjson({"id": "new", "text": "the build uses ninja now", "supersedes": "old"}))
    assert ids(cli("recall", "build", "--mode", "keyword", "--depth", "0", "--json")) == ["new"]
    shadowed = cli("recall", "build", "--mode", "keyword", "--depth", "0", "--include-shadowed", "--json")
    assert sorted(ids(shadowed)) == ["new", "old"]
    cli(
        "remember",
        stdin=ndjson(
            {"id": "ancient", "text": "the build once used scons", "created": "2020-01-01T00:00:00+00:00"},
            {
                "id": "kept",
                "text": "the build once used autotools",
                "created": "2020-01-01T00:00:00+00:00",
                "metadata": {"protected": True},
            },
        ),
    )
    sweep = cli("sweep", "--json").json
    assert {c["id"]: c["lifecycle"] for c in sweep["changed"]} == {"ancient": "archived"}
    assert ids(cli("recall", "build once", "--mode", "exact", "--json")) == ["kept"]


def test_both_clocks_are_kept_and_as_of_answers_as_the_store_stood(cli, backend):
    """The event clock and the dated history round-trip through the store; as of a moment a
    record is there once recorded, in the lifecycle it had, while valid (every backend)."""
    from datetime import datetime

    day = [datetime(2026, 3, d, tzinfo=UTC) for d in range(1, 6)]
    clock = {"occurred": "2026-02-20T10:00:00+00:00", "valid_from": "2026-02-20", "valid_until": "2026-03-05"}
    with Memory.open() as memory:
        memory.remember([{"id": "old", "text": "the gate code is 1234", **clock}], now=day[0])
        memory.remember([{"id": "new", "text": "the gate code is 9876", "supersedes": "old"}], now=day[2])
        memory.set_lifecycle("new", "archived", now=day[3])
        old = memory.get("old")
        assert (old.occurred, old.valid_from, old.valid_until) == tuple(clock.values())
        assert [c.to_dict() for c in old.history] == [{"at": day[2].isoformat(), "from": "active", "to": "shadowed"}]

        def then(moment: str, **flags: bool) -> list[tuple[str, str]]:
            found = memory.recall("gate code", mode="exact", as_of=moment, depth=0, **flags)
            return sorted((hit.record.id, hit.record.lifecycle) for hit in found.items)

        assert then("2026-02-28") == []  # nothing recorded yet
        assert then("2026-03-02") == [("old", "active")]  # superseded later: active then
        assert then("2026-03-03T12:00:00Z", include_shadowed=True) == [("new", "active"), ("old", "shadowed")]
        assert then("2026-03-04T12:00:00Z", include_archived=True) == [("new", "archived")]
        assert then("2026-03-05T12:00:00Z", include_shadowed=True, include_archived=True) == [("new", "archived")]
    item = cli("recall", "gate code", "--mode", "exact", "--include-shadowed", "--depth", "0", "--json").json
    assert {i["id"]: i.get("valid_until") for i in item["items"]} == {"old": "2026-03-05"}


def test_forget_restore_and_purge(cli, backend):
    assert cli("remember", stdin=ndjson({"id": "pw", "text": "the wifi network is called hunter2"})).code == 0
    cli("recall", "wifi", "--mode", "keyword")  # some usage to purge too
    assert cli("forget", "pw").code == 0
    assert ids(cli("recall", "wifi", "--mode", "keyword", "--json")) == []
    assert ids(cli("recall", "wifi", "--mode", "keyword", "--include-archived", "--json")) == ["pw"]
    assert cli("restore", "pw").code == 0
    assert ids(cli("recall", "wifi", "--mode", "keyword", "--json")) == ["pw"]
    assert cli("forget", "pw", "--purge", "--yes").code == 0
    assert ids(cli("recall", "hunter2", "--mode", "exact", "--include-archived", "--json")) == []
    cli("remember", stdin=ndjson({"id": "pw", "text": "the wifi is now open"}))
    [item] = cli("recall", "wifi", "--mode", "keyword", "--no-record", "--json").json["items"]
    assert item["recall_count"] == 0 and item["last_recall"] is None


def test_links_are_traversed_breadth_first_within_scope(cli, backend):
    cli(
        "remember",
        stdin=ndjson(
            {"id": "a", "text": "root topic quasar", "links": ["b"]},
            {"id": "b", "text": "second hop", "links": ["c", "a"]},
            {"id": "c", "text": "third hop"},
        ),
    )
    one = cli("recall", "quasar", "--mode", "keyword", "--json").json
    assert [(i["id"], i["tier"], i["depth"]) for i in one["items"]] == [("a", "primary", 0), ("b", "traversal", 1)]
    assert one["items"][1]["score"] == pytest.approx(one["items"][0]["score"] * 0.5)
    assert one["items"][1]["via"] == "links" and one["items"][1]["parent"] == "a"
    two = cli("recall", "quasar", "--mode", "keyword", "--depth", "2", "--json").json
    assert [i["id"] for i in two["items"]] == ["a", "b", "c"]
    capped = cli("recall", "quasar", "--mode", "keyword", "--depth", "2", "--max-nodes", "1", "--json").json
    assert [i["id"] for i in capped["items"]] == ["a", "b"] and capped["truncated"] is True


def test_usage_is_reinforced_by_recall(cli, backend):
    cli(
        "remember",
        stdin=ndjson({"id": "u", "text": "usage probe narwhal", "links": ["v"]}, {"id": "v", "text": "linked"}),
    )
    for _ in range(2):
        cli("recall", "narwhal", "--mode", "keyword")
    cli("recall", "narwhal", "--mode", "keyword", "--no-record")
    items = cli("recall", "narwhal", "--mode", "keyword", "--no-record", "--json").json["items"]
    assert [(i["id"], i["recall_count"]) for i in items] == [("u", 2), ("v", 1)]
    assert items[0]["last_recall"] is not None


def test_fields_mode_scores_name_description_and_body(cli, backend):
    cli(
        "remember",
        stdin=ndjson(
            {
                "id": "f1",
                "name": "deploy checklist",
                "description": "steps before a release",
                "text": "tag, build, push",
                "type": "project",
            },
            {"id": "f2", "text": "we talked about the deploy once", "type": "user"},
        ),
    )
    items = cli("recall", "deploy", "--mode", "fields", "--json").json["items"]
    assert [i["id"] for i in items] == ["f1", "f2"] and items[0]["score"] > items[1]["score"]
    assert ids(cli("recall", "", "--mode", "fields", "--type", "project", "--json")) == ["f1"]


def test_hostile_ids_and_unicode_round_trip(cli, backend):
    weird = ["../../etc/passwd", "a/b\\c", "ünïcødé id", "x" * 200, "DROP TABLE docs; --", "%s %(x)s ?"]
    run = cli(
        "remember",
        "--json",
        stdin=ndjson(*({"id": rid, "text": f"hostile id probe {n}"} for n, rid in enumerate(weird))),
    )
    assert run.code == 0, run.err
    found = {
        i["id"] for i in cli("recall", "hostile id probe", "--mode", "exact", "--top-k", "10", "--json").json["items"]
    }
    assert found == set(weird)


def test_status_and_overview_count_what_is_stored(cli, corpus):
    index = cli("index", "--json").json["stores"]
    assert sum(s["records"] for s in index) == len(CORPUS) and all(s["current"] for s in index)
    overview = cli("overview", "--json").json["stores"]
    assert sum(s["records"] for s in overview) == len(CORPUS)
    assert cli("doctor", "--json").json["healthy"] is True
    assert cli("index", "--rebuild", "--json").code == 0
    assert ids(cli("recall", "banana", "--mode", "keyword", "--json")) == ["ban2", "ban1"]


def test_semantic_recall_with_the_real_model(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    cli(
        "remember",
        stdin=ndjson(
            {"id": "pet", "text": "The cat sleeps on the sofa all afternoon"},
            {"id": "money", "text": "Quarterly revenue grew five percent"},
            {"id": "code", "text": "The Rust compiler rejected the borrow"},
        ),
    )
    approx = cli("recall", "a kitten napping on the couch", "--mode", "approximate", "--json").json
    assert approx["embedder"]["online"] is True and approx["items"][0]["id"] == "pet"
    hybrid = cli("recall", "revenue kitten", "--json", "--explain").json["items"]
    assert {i["id"] for i in hybrid[:2]} == {"pet", "money"}
    assert hybrid[0]["explain"]["engine"] == "hybrid"


def _public():
    from eidetic.ranking.access import Access

    return Access()


def _spawn(args: list[str], stdin: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "eidetic", *args],
        stdin=subprocess.PIPE if stdin else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


# writer and recaller processes at once: 8 and 4 under EIDETIC_TEST_PROFILE=soak (tests/profiles.py)
WRITERS, RECALLERS = sized(ci=4, soak=8), sized(ci=2, soak=4)


def test_eight_writers_and_four_recallers_lose_nothing(cli, backend):
    """Concurrent processes (eight writers and four recallers when soaking, half as many in the
    suite's default run): every record remembered is there once, recalls never fail, and
    concurrent usage bumps add up exactly."""
    cli("remember", stdin=ndjson({"id": "hot", "text": "shared hot record walrus"}))
    writers = []
    for w in range(WRITERS):
        lines = ndjson(*({"id": f"w{w}-r{i}", "text": f"writer {w} record {i} quokka"} for i in range(100)))
        proc = _spawn(["remember", "--json", "--no-embed"], stdin=lines)
        proc.stdin.write(lines)
        proc.stdin.close()
        writers.append(proc)
    script = (
        "from eidetic.memory import Memory\n"
        "with Memory.open() as m:\n"
        "    for _ in range(10):\n"
        "        assert [h.record.id for h in m.recall('walrus', mode='keyword').items] == ['hot']\n"
    )
    recallers = [
        subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        for _ in range(RECALLERS)
    ]
    for proc in writers:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
        assert json.loads(proc.stdout.read())["upserted"] == 100
    for proc in recallers:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    with Memory.open() as memory:
        records = [r for _, r in memory.iter_records(_public())]
        assert len(records) == 100 * WRITERS + 1 and len({r.id for r in records}) == 100 * WRITERS + 1
        found = memory.recall(f"writer {WRITERS - 1} record 99", mode="exact", record=False).items
        assert [h.record.id for h in found] == [f"w{WRITERS - 1}-r99"]
        [hot] = memory.recall("walrus", mode="keyword", record=False).items
        assert hot.recall_count == 10 * RECALLERS


# -- listing (RecordStore.listing): the same order, filters, pages and scope on every backend ------


def _listed(memory, **options):
    result = memory.list_records(**options)
    return [item.record.id for item in result.items], result.total


def test_listing_sorts_filters_and_pages_alike(backend):
    from datetime import datetime

    def at(day):
        return datetime(2026, 3, day, tzinfo=UTC)

    batches = [
        (
            1,
            {
                "id": "b",
                "text": "zeta",
                "name": "banana",
                "created": "2025-03-01",
                "metadata": {"source": "chat", "n": 2},
            },
        ),
        (2, {"id": "a", "text": "Alpha text", "type": "lesson", "created": "2025-01-01T00:00:00+00:00"}),
        (3, {"id": "c", "text": "third", "name": "Émile", "created": "date-unknown", "links": ["a"]}),
        (4, {"id": "d", "text": "fourth", "name": "apple", "created": "2025-02-01", "metadata": {"n": 1}}),
        (5, {"id": "e", "text": "replaces d", "name": "Apple two", "supersedes": "d", "created": "2025-04-01"}),
    ]
    with Memory.open() as memory:
        for day, record in batches:
            memory.remember([record], now=at(day), embed=False)
        memory.remember([{"id": "p", "text": "alice only", "name": "aardvark"}], scope="alice", visibility="private")
        memory.set_lifecycle("b", "archived")
        store = memory.stores()[0]
        store.bump_usage({"c": 3, "a": 1}, "2026-03-10T00:00:00+00:00")
        assert _listed(memory) == (["e", "c", "a"], 3)  # newest write first; b archived, d shadowed
        # a lifecycle change is no write of the content: b keeps its place
        assert _listed(memory, include_archived=True, include_shadowed=True) == (["e", "d", "c", "a", "b"], 5)
        every = {"include_archived": True, "include_shadowed": True}
        assert _listed(memory, sort="created", **every)[0] == ["e", "b", "d", "a", "c"]  # unknown date: oldest
        assert _listed(memory, sort="created", reverse=True, **every)[0] == ["c", "a", "d", "b", "e"]
        # name (else text), ASCII letters folded: "Apple two" after "apple", "Émile" after every ASCII letter
        assert _listed(memory, sort="name", **every)[0] == ["a", "d", "e", "b", "c"]
        assert _listed(memory, sort="recalled")[0] == ["c", "a", "e"]
        assert _listed(memory, sort="name", limit=2, offset=1, **every) == (["d", "e"], 5)
        assert _listed(memory, types=["lesson"]) == (["a"], 1)
        assert _listed(memory, filters=["n>=1"], **every) == (["d", "b"], 2)
        assert _listed(memory, source="chat", include_archived=True) == (["b"], 1)
        assert _listed(memory, since="2025-02-01", until="2025-03-31", **every) == (["d", "b"], 2)
        # private records: only their own scope, private, sees them, and nobody else counts them
        assert _listed(memory, scope="bob", visibility="private")[1] == 3
        assert _listed(memory, scope="alice", visibility="private") == (["p", "e", "c", "a"], 4)
        assert _listed(memory, scope="alice", visibility="private", scope_only=True) == (["p"], 1)
        assert memory.list_records(types=["none"]).hidden == {}
        assert memory.list_records(source="chat").hidden == {"archived": 1}
        everything = memory.access(include_archived=True, include_shadowed=True)
        from eidetic.listing import Order
        from eidetic.ranking.filters import Filters

        rows, total = store.listing(everything, Filters(), Order("name", False), None, refers_to="a")
        assert [rid for _, rid, _ in rows] == ["c"] and total == 1
        rows, _ = store.listing(everything, Filters(), Order("name", False), None, refers_to="d")
        assert [rid for _, rid, _ in rows] == ["e"]
        assert store.listing(everything, Filters(), Order(), 10, 0, refers_to="p")[1] == 0


def test_admitted_records_and_their_vectors_follow_the_scope_rule(cli, backend, monkeypatch):
    """What ``consolidate`` reads: the active records in reach, and a row of zeros for a doc with
    no vector yet or out of reach (another scope's private record gives nothing, not even its vector)."""
    import numpy as np

    from eidetic.ranking.access import Access

    monkeypatch.delenv("EIDETIC_EMBEDDER")
    secret = {"id": "s", "text": "alice's plan", "scope": {"name": "alice", "visibility": "private"}}
    cli("remember", stdin=ndjson({"id": "a", "text": "the kiln fires at noon"}, {"id": "gone", "text": "old"}, secret))
    cli("remember", "--no-embed", stdin=ndjson({"id": "late", "text": "no vector yet"}))
    cli("forget", "gone")
    with Memory.open() as memory:
        (store,) = memory.stores()
        public = store.admitted(Access())
        assert [(r.id, r.scope.name, r.text) for r in public] == [
            ("a", "default", "the kiln fires at noon"),
            ("late", "default", "no vector yet"),
        ]
        alice = Access.of("alice", "private")
        docs = {r.id: r.doc for r in store.admitted(alice)}
        assert set(docs) == {"a", "late", "s"}
        model = memory._embedding.embedder()[0].name
        rows = store.vectors_of(model, Access(), [docs["a"], docs["late"], docs["s"]])
        assert rows.dtype == np.float32 and abs(float(np.linalg.norm(rows[0])) - 1) < 1e-3
        assert not rows[1].any() and not rows[2].any()  # no vector yet; out of reach
        assert store.vectors_of(model, alice, [docs["s"]]).any()


def test_equal_scores_come_in_id_order_on_every_backend(cli, backend):
    """Ties are broken by id, not by the order a backend stored or returned them, and a top k
    that cuts through a tie keeps the first ids."""
    made = "2026-01-05T10:00:00+00:00"  # the same age: the freshness blend moves none of them
    tied = [
        {"id": f"tie-{x}", "text": f"apple {word}", "created": made}
        for x, word in zip("dbca", ("one", "two", "six", "ten"))
    ]
    assert cli("remember", stdin=ndjson(*tied)).code == 0
    for mode in ("keyword", "exact"):
        assert ids(cli("recall", "apple", "--mode", mode, "--json")) == ["tie-a", "tie-b", "tie-c", "tie-d"], mode
        assert ids(cli("recall", "apple", "--mode", mode, "--top-k", "2", "--json")) == ["tie-a", "tie-b"], mode


def test_keyword_scores_are_bm25_over_every_partition_the_caller_may_read(backend):
    """A caller's keyword scores are BM25 under the statistics of the public records and its own
    private ones together, whatever partition holds a record; another scope's records never
    count. The expected scores are computed here from the records' words."""
    from eidetic.index.analyzer import query_terms
    from eidetic.ranking.bm25 import KeywordStats

    texts = {
        "p1": ("otters hold hands while they sleep", None),
        "p2": ("beavers build dams and otters swim past the dams", None),
        "m1": ("my otters notes: otters otters everywhere", "me"),
        "m2": ("beavers again, a long note about beavers and their many dams in winter", "me"),
        "o1": ("otters otters otters otters beavers", "other"),
    }
    records = [
        {"id": rid, "text": text, **({"scope": {"name": scope, "visibility": "private"}} if scope else {})}
        for rid, (text, scope) in texts.items()
    ]
    with Memory.open() as memory:
        memory.remember(records, embed=False)
        for scope, visibility, seen in (("me", "private", ("p1", "p2", "m1", "m2")), ("me", "public", ("p1", "p2"))):
            counts = {rid: field_counts(None, None, texts[rid][0], False) for rid in seen}
            terms = query_terms("otters beavers dams")
            union = sum(
                (
                    KeywordStats(
                        1, tuple(sum(f.values()) for f in c), {t: tuple(int(t in f) for f in c) for t in terms}
                    )
                    for c in counts.values()
                ),
                KeywordStats(),
            )
            result = memory.recall(
                "otters beavers dams", mode="keyword", scope=scope, visibility=visibility, explain=True, record=False
            )
            got = {hit.record.id: hit.explain["raw_score"] for hit in result.items}
            assert set(got) == set(seen)
            assert got == pytest.approx({rid: union.score(terms, counts[rid]) for rid in seen}, rel=1e-5)


def test_conversation_context_is_read_over_every_partition_the_caller_may_read(backend):
    """A thread member's context holds the words of its window among the turns the caller may
    read, whichever partition holds them: public turns borrow the caller's private neighbours'
    words for that caller only, and another scope's turns lend nothing. The expected scores are
    computed here from the turns' words."""
    from eidetic.index.analyzer import query_terms
    from eidetic.ranking.bm25 import KeywordStats, Scorer
    from eidetic.ranking.threads import AFTER, BEFORE
    from eidetic.ranking.windows import summed, windowed

    turns = [  # in thread order
        ("t1", "otters hold hands", None),
        ("t2", "they sleep in rafts", "me"),
        ("t3", "yes every single night", None),
        ("t4", "otters otters otters", "other"),
        ("t5", "rafts of otters drift", None),
    ]
    records = [
        {
            "id": rid,
            "text": text,
            "created": f"2026-01-0{i + 1}T00:00:00+00:00",
            "metadata": {"thread": "chat"},
            **({"scope": {"name": scope, "visibility": "private"}} if scope else {}),
        }
        for i, (rid, text, scope) in enumerate(turns)
    ] + [{"id": "lone", "text": "otters and beavers"}]
    terms = query_terms("otters rafts")
    answers = {}
    with Memory.open() as memory:
        memory.remember(records, embed=False)
        for scope, visibility, readers in (
            ("me", "private", ("me",)),
            ("me", "public", ()),
            ("other", "private", ("other",)),
        ):
            seen = [(rid, text) for rid, text, owner in turns if owner is None or owner in readers]
            own = {rid: field_counts(None, None, text, True) for rid, text in seen}
            own["lone"] = field_counts(None, None, "otters and beavers", False)
            stats = sum(
                (
                    KeywordStats(
                        1, tuple(sum(f.values()) for f in c), {t: tuple(int(t in f) for f in c) for t in terms}
                    )
                    for c in own.values()
                ),
                KeywordStats(),
            )
            scorer = Scorer(windowed(stats), terms)
            expected = {"lone": scorer.score(own["lone"], [sum(f.values()) for f in own["lone"]])}
            order = [rid for rid, _ in seen]
            for at, rid in enumerate(order):
                window = [
                    order[j]
                    for j in (*range(at - 1, at - BEFORE - 1, -1), *range(at + 1, at + AFTER + 1))
                    if 0 <= j < len(order)
                ]
                counts, lengths = summed(
                    (own[rid], [sum(f.values()) for f in own[rid]]),
                    [(own[n], [sum(f.values()) for f in own[n]]) for n in window],
                )
                score = scorer.score(counts, lengths)
                if score > 0:
                    expected[rid] = score
            result = memory.recall(
                "otters rafts", mode="keyword", scope=scope, visibility=visibility, explain=True, record=False, depth=0
            )
            got = {hit.record.id: hit.explain["raw_score"] for hit in result.items}
            assert got == pytest.approx(expected, rel=1e-5), (scope, visibility)
            answers[(scope, visibility)] = got
    mine, public, theirs = answers.values()
    assert {"t2", "t3"} <= set(mine) and "t3" in public  # t3 holds no query word: its neighbours do
    assert "t2" not in public and "t4" not in mine and "t4" in theirs
