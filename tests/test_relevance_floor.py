"""The relevance floor: "nothing relevant" is an answer. Real model, real stores (every backend
where the floor reads a store's statistics), small stores so it stays fast."""

from __future__ import annotations

import pytest

from conftest import ids, ndjson
from eidetic import Memory, RecallQuery
from eidetic.errors import EideticError
from eidetic.ranking import relevance

NOTES = (
    {"id": "deploy", "text": "Deploys run on Tuesdays, after the standup meeting"},
    {"id": "rollback", "text": "A failed deploy is rolled back with the release script"},
    {"id": "cat", "text": "The office cat sleeps on the sofa all afternoon"},
    {"id": "stocks", "text": "The stock market fell sharply after the interest rate announcement"},
    {"id": "garden", "text": "Tomatoes in the garden need water every morning in summer"},
    {"id": "lunch", "text": "Team lunch is on Fridays at the noodle place"},
)
UNRELATED = "protein folding of yeast mitochondria under oxidative stress"
AUTO = ("--relevance-floor", "auto", "--no-record", "--depth", "0", "--json")
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture
def notes(cli, backend, monkeypatch):
    """The notes in a fresh store of each backend, with the real model."""
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    run = cli("remember", stdin=ndjson(*NOTES))
    assert run.code == 0, run.err
    return backend


def test_an_unrelated_query_returns_nothing_with_the_floor_and_neighbours_without(cli, notes):
    for mode in ("hybrid", "approximate"):
        off = cli("recall", UNRELATED, "--mode", mode, "--no-record", "--depth", "0", "--json")
        assert off.code == 0 and len(off.json["items"]) == 5, mode  # always the top five, however unrelated
        assert "relevance_floor" not in off.json and not any(item["relevant"] for item in off.json["items"])  # judged
        on = cli("recall", UNRELATED, "--mode", mode, *AUTO)
        assert on.code == 0 and on.json["items"] == [], mode
        assert (on.json["relevance_floor"], on.json["below_floor"]) == (1.0, 5), mode
    text = cli("recall", UNRELATED, "--relevance-floor", "auto", "--no-record")
    assert "(nothing relevant: 5 hits fell below the relevance floor (--relevance-floor off shows them))" in text.out


def test_a_matching_query_keeps_its_record_and_drops_hits_far_below_it(cli, notes):
    query = "when do we deploy on tuesdays"
    for mode in ("hybrid", "approximate", "keyword"):
        everything = ids(cli("recall", query, "--mode", mode, "--no-record", "--depth", "0", "--json"))
        run = cli("recall", query, "--mode", mode, *AUTO).json
        hits = run["items"]
        assert hits[0]["id"] == "deploy" and hits[0]["relevance"] >= 1.0, mode  # the best reaches the line
        share = relevance.Calibration.of(mode, MODEL if mode != "keyword" else None).at(len(NOTES)).share
        assert all(hit["relevance"] >= share for hit in hits[1:]), mode  # each but the best its share
        assert [h["id"] for h in hits] == [rid for rid in everything if rid in ids_of(run)], mode  # order kept
        assert run["below_floor"] == len(everything) - len(hits), mode
        assert "cat" not in ids_of(run) and "stocks" not in ids_of(run), mode  # dropped one by one
    assert ids(cli("recall", query, "--mode", "approximate", *AUTO)) == ["deploy"]


def test_keyword_evidence_is_judged_against_the_query_s_own_idf(cli, notes):
    """A common word shared with a record is not enough when the query's rare words are absent."""
    query = "market for yeast protein assays"
    assert ids(cli("recall", query, "--mode", "keyword", "--no-record", "--json")) == ["stocks"]
    floored = cli("recall", query, "--mode", "keyword", *AUTO, "--explain").json
    assert floored["items"] == [] and floored["below_floor"] == 1
    assert ids(cli("recall", "stock market interest rate", "--mode", "keyword", *AUTO)) == ["stocks"]


def test_exact_matches_are_all_relevant_and_fields_keeps_its_own_floor(cli, notes):
    exact = cli("recall", "the", "--mode", "exact", "--top-k", "10", *AUTO).json
    assert len(exact["items"]) == 6 and "below_floor" not in exact and "relevance_floor" not in exact
    assert all("relevance" not in item for item in exact["items"])
    fields = cli("recall", "garden tomatoes", "--mode", "fields", *AUTO).json
    assert ids_of(fields) == ["garden"] and "below_floor" not in fields


def test_a_number_sets_another_line_on_the_same_scale(cli, notes):
    everything = cli("recall", UNRELATED, "--relevance-floor", "0", "--no-record", "--depth", "0", "--json").json
    assert len(everything["items"]) == 5 and everything["below_floor"] == 0
    values = [item["relevance"] for item in everything["items"]]
    assert all(0 <= value < 1 for value in values)
    loose = cli("recall", UNRELATED, "--relevance-floor", str(min(values)), "--no-record", "--json").json
    assert len(loose["items"]) >= 1  # the weakest hit sits exactly on that line
    strict = cli("recall", "when do we deploy on tuesdays", "--relevance-floor", "50", "--no-record", "--json").json
    assert strict["items"] == [] and strict["relevance_floor"] == 50


def test_explain_shows_how_each_hit_was_judged(cli, notes):
    hit = cli("recall", "deploy tuesdays", *AUTO, "--explain").json["items"][0]
    judged = hit["explain"]
    assert judged["relevance"] == hit["relevance"] and judged["relevance_floor"] == 1.0
    young = relevance.Calibration.of("hybrid", MODEL).at(len(NOTES))  # a store of six: its floors are lower
    assert judged["store_records"] == len(NOTES)
    assert (
        judged["cosine_floor"] == pytest.approx(young.semantic)
        and young.semantic < relevance.COSINE_FLOORS[MODEL]["hybrid"]
    )
    assert judged["keyword_floor"] == pytest.approx(young.keyword)
    assert judged["hit_share"] == pytest.approx(young.share)
    meaning = cli("recall", "deploy tuesdays", "--mode", "approximate", *AUTO, "--explain").json["items"][0]["explain"]
    assert meaning["store_records"] == len(NOTES) and meaning["query_idf"] == pytest.approx(judged["query_idf"])
    assert meaning["keyword_floor"] == pytest.approx(relevance.YOUNG_WORD_FLOORS["approximate"])  # a young store's
    assert meaning["bm25"] == pytest.approx(judged["bm25"], rel=1e-6)  # its words, as keyword recall scores them
    expected = max(
        judged["cosine"] / judged["cosine_floor"], judged["bm25"] / judged["query_idf"] / judged["keyword_floor"]
    )
    assert hit["relevance"] == pytest.approx(expected)
    text = cli("recall", "deploy tuesdays", "--relevance-floor", "auto", "--no-record", "--explain").out
    assert f"(floor 1: the best hit must reach it, each hit {young.share:g} of it)" in text


def test_counts_and_statistics_never_reach_into_another_scope(cli, notes):
    """Another scope's private records add nothing: not to a count, not to the idf."""
    before = cli("recall", "the garden tomatoes", "--mode", "keyword", *AUTO).json
    cli(
        "remember",
        "--scope",
        "alice",
        "--visibility",
        "private",
        stdin=ndjson(*({"id": f"secret-{i}", "text": f"garden secret {i} about protein yeast"} for i in range(12))),
    )
    after = cli("recall", "the garden tomatoes", "--mode", "keyword", *AUTO).json
    assert ids_of(after) == ids_of(before) == ["garden"]
    assert after["items"][0]["relevance"] == pytest.approx(before["items"][0]["relevance"])
    for mode in ("hybrid", "keyword", "approximate"):
        public = cli("recall", "yeast protein secret", "--mode", mode, "--top-k", "20", *AUTO).json
        everything = cli("recall", "yeast protein secret", "--mode", mode, "--top-k", "20", "--no-record", "--json")
        assert public["below_floor"] + len(public["items"]) == len(everything.json["items"]) <= len(NOTES), mode
        assert not any(item["id"].startswith("secret") for item in public["items"]), mode
    mine = cli("recall", "yeast protein secret", "--scope", "alice", "--visibility", "private", *AUTO).json
    assert ids_of(mine) and all(rid.startswith("secret") for rid in ids_of(mine))


def test_the_stores_count_terms_over_the_caller_s_partitions(notes, cli):
    cli("remember", "--scope", "bob", "--visibility", "private", stdin=ndjson({"id": "b1", "text": "deploy notes"}))
    from eidetic.ranking.access import Access
    from eidetic.records import Scope

    with Memory.open() as memory:
        (store,) = memory.stores()
        assert store.term_counts(["deploy", "tuesday", "zzz"], Access()) == (6, {"deploy": 2, "tuesday": 1, "zzz": 0})
        bob = Access(Scope("bob", "private"))
        assert store.term_counts(["deploy"], bob) == (7, {"deploy": 3})
        assert store.term_counts([], Access()) == (6, {})


def test_the_python_api_takes_the_floor_and_checks_it(notes):
    with Memory.open() as memory:
        assert memory.recall(UNRELATED, relevance_floor="auto", record=False).items == []
        kept = memory.recall("deploy tuesdays", relevance_floor="auto", record=False)
        assert kept.items[0].record.id == "deploy" and kept.relevance_floor == 1.0
        assert memory.recall(RecallQuery(UNRELATED, relevance_floor=0.0, record=False)).below_floor == 0
    for bad in ("sometimes", -1, True, float("nan"), None):
        with pytest.raises(EideticError, match="relevance_floor must be auto, off or a number >= 0") as caught:
            RecallQuery("x", relevance_floor=bad)
        assert "relevance_floor='auto'" in caught.value.remediation
    assert RecallQuery("x", relevance_floor=" AUTO ").relevance_floor == "auto"
    assert RecallQuery("x", relevance_floor="1.5").floor_line == 1.5


def test_a_bad_floor_on_the_command_line_is_an_error_with_a_hint(cli, store):
    run = cli("recall", "x", "--relevance-floor", "high", "--json")
    assert run.code == 1 and run.err_json["message"].startswith("--relevance-floor must be auto, off or a number")
    assert "--relevance-floor auto" in run.err_json["remediation"]


def test_each_mode_is_judged_by_its_own_floors_and_an_unknown_model_not_at_all():
    approximate = relevance.Calibration.of("approximate", MODEL)
    assert approximate.keyword is None  # meaning only: a word match is no evidence there
    assert relevance.relevance(0.7, 5.0, 1.0, approximate, semantic=True) == pytest.approx(
        0.7 / relevance.COSINE_FLOORS[MODEL]["approximate"]
    )
    keyword = relevance.Calibration.of("hybrid", None)  # no embedder: hybrid ranked as keyword
    assert (keyword.semantic, keyword.keyword) == (None, relevance.KEYWORD_FLOORS["keyword"])
    assert relevance.relevance(None, 3.0, 2.0, keyword, semantic=False) == pytest.approx(
        1.5 / relevance.KEYWORD_FLOORS["keyword"]
    )
    assert relevance.relevance(None, 3.0, 0.0, keyword, semantic=False) == 0.0  # no idf mass, no evidence
    unknown = relevance.Calibration.of("hybrid", "someone/else")
    assert unknown.semantic is None and relevance.relevance(0.1, 0.0, 1.0, unknown, semantic=True) is None
    assert relevance.line_of("auto") == relevance.AUTO and relevance.line_of("off") is None


def test_the_best_hit_must_reach_the_line_and_each_hit_its_share():
    assert relevance.kept([1.2, 0.7, 0.4], 1.0, 0.5) == [True, True, False]
    assert relevance.kept([0.9, 0.8], 1.0, 0.5) == [False, False]  # nothing relevant: nothing at all
    assert relevance.kept([2.4, 1.1], 2.0, 0.5) == [True, True]
    assert relevance.kept([None, 0.3], 1.0, 0.5) == [True, False]  # what could not be judged stays
    assert relevance.kept([None], 1.0, 0.5) == [True] and relevance.kept([], 1.0, 0.5) == []
    assert relevance.kept([1.1, 1.05, 0.9], 1.0, 1.2) == [True, False, False]  # a young store: the best stays


def ids_of(bundle: dict) -> list[str]:
    return [item["id"] for item in bundle["items"]]
