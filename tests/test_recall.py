from __future__ import annotations

import json

import pytest

from conftest import ids, ndjson, rec


@pytest.fixture
def corpus(cli, store):
    run = cli(
        "remember",
        stdin=ndjson(
            {"id": "nano", "text": "The Orin Nano draws 7W", "metadata": {"source": "discord", "priority": 3}},
            {"id": "agx", "text": "Jetson AGX power budget is 65W", "metadata": {"source": "docs", "priority": 1}},
            {"id": "cat", "text": "cat"},
            {"id": "hat", "text": "cat in the hat sat on a mat", "type": "story"},
            {"id": "ban1", "text": "banana split is sweet", "metadata": {"due": "2026-12-01", "done": True}},
            {"id": "ban2", "text": "banana banana bread", "metadata": {"due": "2026-10-01", "done": False}},
            {"id": "pie", "text": "apple cherry pie", "created": "2024-01-01T00:00:00+00:00"},
        ),
    )
    assert run.code == 0, run.err
    return store


def test_exact_is_case_insensitive_and_scores_coverage(cli, corpus):
    assert ids(cli("recall", "orin nano", "--mode", "exact", "--json")) == ["nano"]
    hits = cli("recall", "cat", "--mode", "exact", "--json").json["items"]
    assert [h["id"] for h in hits] == ["cat", "hat"]
    assert hits[0]["score"] == pytest.approx(1.0 * (1 + 0.25 * (hits[0]["signal"] - 0.5)))
    assert hits[1]["score"] < hits[0]["score"]
    assert ids(cli("recall", "gamma", "--mode", "exact", "--json")) == []


def test_exact_case_sensitive_and_short_and_unicode_queries(cli, corpus):
    assert ids(cli("recall", "Orin Nano", "--mode", "exact", "--case-sensitive", "--json")) == ["nano"]
    assert ids(cli("recall", "orin nano", "--mode", "exact", "--case-sensitive", "--json")) == []
    assert set(ids(cli("recall", "at", "--mode", "exact", "--top-k", "10", "--json"))) == {"cat", "hat"}
    cli("remember", '{"id": "tokyo", "text": "東京の天気 CAFÉ"}')
    assert ids(cli("recall", "café", "--mode", "exact", "--json")) == ["tokyo"]
    assert ids(cli("recall", "の天", "--mode", "exact", "--json")) == ["tokyo"]


def test_keyword_bm25_stems_and_drops_non_matches(cli, corpus):
    found = cli("recall", "bananas", "--mode", "keyword", "--json").json["items"]
    assert [h["id"] for h in found] == ["ban2", "ban1"]  # tf 2 beats tf 1
    assert all(h["score"] > 0 for h in found)
    assert ids(cli("recall", "the of and", "--mode", "keyword", "--json")) == []


def test_hybrid_without_embedder_is_keyword_and_says_so(cli, corpus, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    keyword = cli("recall", "banana", "--mode", "keyword", "--json", "--no-record")
    hybrid = cli("recall", "banana", "--json", "--no-record")
    assert hybrid.json["mode"] == "hybrid"
    assert hybrid.json["embedder"]["online"] is False
    assert [i["id"] for i in hybrid.json["items"]] == [i["id"] for i in keyword.json["items"]]
    # a moment apart, freshness has aged a little: scores agree to far below what ranks differ by
    assert [i["score"] for i in hybrid.json["items"]] == pytest.approx(
        [i["score"] for i in keyword.json["items"]], rel=1e-6
    )
    assert len(hybrid.json["items"]) == 2  # never drops the weakest keyword match
    assert hybrid.err.count("\n") == 1 and "keyword only" in hybrid.err and "EIDETIC_EMBEDDER" in hybrid.err
    assert keyword.err == ""


def test_output_shape(cli, corpus):
    bundle = cli("recall", "banana", "--mode", "keyword", "--json").json
    assert set(bundle) == {"query", "mode", "truncated", "embedder", "items"}
    assert bundle["truncated"] is False
    item = bundle["items"][0]
    for key in (
        "id",
        "text",
        "type",
        "name",
        "description",
        "metadata",
        "scope",
        "created",
        "updated",
        "added_by",
        "supersedes",
        "links",
        "lifecycle",
        "hash",
        "recall_count",
        "last_recall",
        "score",
        "signal",
        "tier",
        "depth",
    ):
        assert key in item
    assert item["tier"] == "primary" and item["depth"] == 0
    assert 0 <= item["signal"] <= 1


def test_top_k_and_validation(cli, corpus):
    assert len(ids(cli("recall", "a", "--mode", "exact", "--top-k", "2", "--json"))) == 2
    for bad in (["--top-k", "0"], ["--top-k", "-1"], ["--top-k", "x"], ["--alpha", "1.5"], ["--mode", "nope"]):
        run = cli("recall", "banana", "--json", *bad)
        assert run.code == 1 and run.out == ""
        assert {"code", "message", "remediation"} <= set(run.err_json)


def test_typed_filters_and_ranges(cli, corpus):
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", "priority=3", "--json")) == ["nano"]
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", 'priority="3"', "--json")) == []
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", "priority>=2", "--json")) == ["nano"]
    assert ids(cli("recall", "w", "--mode", "exact", "--filter", "priority<=2", "--json")) == ["agx"]
    assert ids(cli("recall", "banana", "--mode", "keyword", "--filter", "done=true", "--json")) == ["ban1"]
    assert ids(cli("recall", "banana", "--mode", "keyword", "--filter", "due>=2026-11-01", "--json")) == ["ban1"]
    assert ids(cli("recall", "banana", "--mode", "keyword", "--filter", "due<=2026-11-01", "--json")) == ["ban2"]
    run = cli("recall", "x", "--filter", "nokey", "--json")
    assert run.code == 1 and run.err_json["message"] == "--filter entry 'nokey' is malformed"
    assert run.err_json["remediation"] == "a filter is KEY=VALUE, KEY>=VALUE or KEY<=VALUE, e.g. --filter source=docs"
    run = cli("recall", "x", "--filter", "a>=soon", "--json")
    assert run.code == 1


def test_source_type_and_date_window(cli, corpus):
    assert ids(cli("recall", "w", "--mode", "exact", "--source", "docs", "--json")) == ["agx"]
    assert ids(cli("recall", "cat", "--mode", "exact", "--type", "story", "--json")) == ["hat"]
    assert ids(cli("recall", "pie", "--mode", "keyword", "--until", "2024-06-01", "--json")) == ["pie"]
    assert ids(cli("recall", "pie", "--mode", "keyword", "--since", "2025-01-01", "--json")) == []
    run = cli("recall", "w", "--source", "docs", "--filter", "source=discord", "--json")
    assert run.code == 1 and "--source conflicts with a filter" in run.err_json["message"]
    assert cli("recall", "w", "--since", "soonish", "--json").code == 1


def test_scope_rule_never_leaks_private_records(cli, store):
    cli("remember", '{"id": "pub", "text": "shared secret handshake"}')
    cli("remember", '{"id": "mine", "text": "private secret handshake"}', "--scope", "lobes", "--visibility", "private")
    cli("remember", '{"id": "theirs", "text": "their secret handshake"}', "--scope", "other", "--visibility", "private")
    cli("remember", '{"id": "teampub", "text": "team secret handshake"}', "--scope", "team")
    for mode in ("exact", "keyword", "hybrid", "approximate"):
        query = "secret handshake"
        public = ids(cli("recall", query, "--mode", mode, "--top-k", "10", "--json"))
        assert set(public) == {"pub", "teampub"}
        own = ids(
            cli(
                "recall",
                query,
                "--mode",
                mode,
                "--top-k",
                "10",
                "--scope",
                "lobes",
                "--visibility",
                "private",
                "--json",
            )
        )
        assert set(own) == {"pub", "teampub", "mine"}
        as_public = ids(cli("recall", query, "--mode", mode, "--top-k", "10", "--scope", "lobes", "--json"))
        assert "mine" not in as_public and "theirs" not in as_public
        only = ids(cli("recall", query, "--mode", mode, "--top-k", "10", "--scope", "team", "--scope-only", "--json"))
        assert only == ["teampub"]


def test_lifecycle_filter_runs_before_top_k(cli, store):
    records = [{"id": f"act{i}", "text": f"match active {i}"} for i in range(3)]
    cli("remember", stdin=ndjson(*records))
    for i in range(2):
        cli("remember", json.dumps({"id": f"sh{i}", "text": f"match shadow {i}"}))
        path = rec(store, f"sh{i}")
        path.write_text(path.read_text().replace("lifecycle: active", "lifecycle: shadowed"))
    cli("remember", '{"id": "arc", "text": "match archived"}')
    path = rec(store, "arc")
    path.write_text(path.read_text().replace("lifecycle: active", "lifecycle: archived"))
    got = ids(cli("recall", "match", "--mode", "exact", "--top-k", "3", "--json"))
    assert sorted(got) == ["act0", "act1", "act2"]
    with_sh = ids(cli("recall", "match", "--mode", "exact", "--top-k", "10", "--include-shadowed", "--json"))
    assert set(with_sh) == {"act0", "act1", "act2", "sh0", "sh1"}
    everything = ids(
        cli("recall", "match", "--mode", "exact", "--top-k", "10", "--include-shadowed", "--include-archived", "--json")
    )
    assert len(everything) == 6


def test_min_score_and_explain(cli, corpus):
    hits = cli("recall", "cat", "--mode", "exact", "--json").json["items"]
    trimmed = ids(cli("recall", "cat", "--mode", "exact", "--min-score", str(hits[0]["score"] - 1e-4), "--json"))
    assert trimmed == ["cat"]
    explained = cli("recall", "banana bread", "--mode", "keyword", "--explain", "--json").json["items"][0]
    assert explained["explain"]["matched_terms"] == ["banana", "bread"]
    assert explained["explain"]["raw_score"] > 0
    text = cli("recall", "cat", "--mode", "exact", "--explain")
    assert "explain: score 1.0250 = 3 query chars / 3 text chars = 1.0000 x freshness 1.0250" in text.out


def test_text_output(cli, corpus):
    run = cli("recall", "banana", "--mode", "keyword")
    assert "score:" in run.out and "text: banana banana bread" in run.out
    assert cli("recall", "zzzz", "--mode", "keyword").out.strip().endswith("(no results)")


def test_exact_matches_brute_force_on_many_substrings(store):
    """The chunk index never misses an occurrence, at every alignment and length."""
    import random

    from eidetic import Memory

    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "Orin", "nano", "x", "the", "quokka", "zeta"]
    texts = list(dict.fromkeys(" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(150)))
    with Memory.open() as memory:
        memory.remember([{"id": f"t{i}", "text": t} for i, t in enumerate(texts)])
        for _ in range(100):
            source = rng.choice(texts)
            start = rng.randrange(len(source))
            query = source[start : start + rng.randint(1, 14)]
            if not query.strip():
                continue
            got = {h.record.id for h in memory.recall(query, mode="exact", top_k=200, record=False).items}
            want = {f"t{i}" for i, t in enumerate(texts) if query.lower() in t.lower()}
            assert got == want, query


def test_huge_top_k_returns_everything(cli, corpus):
    for mode in ("keyword", "exact"):
        run = cli("recall", "banana", "--mode", mode, "--top-k", str(10**12), "--json")
        assert run.code == 0 and {i["id"] for i in run.json["items"]} == {"ban1", "ban2"}


def test_semantic_recall_finds_meaning_without_shared_words(cli, store):
    cli(
        "remember",
        stdin=ndjson(
            {"id": "cat", "text": "The cat sat on the mat."},
            {"id": "feline", "text": "A feline rested upon the rug."},
            {"id": "stocks", "text": "The stock market fell sharply after the rate announcement."},
        ),
    )
    approx = cli("recall", "a kitten lying on a carpet", "--mode", "approximate", "--json")
    assert approx.json["embedder"] == {"model": "sentence-transformers/all-MiniLM-L6-v2", "online": True}
    assert [i["id"] for i in approx.json["items"]][:2] in (["feline", "cat"], ["cat", "feline"])
    assert approx.json["items"][-1]["id"] == "stocks" and approx.err == ""
    assert cli("recall", "a kitten lying on a carpet", "--mode", "keyword", "--json").json["items"] == []
    hybrid = cli("recall", "cat on a rug", "--json", "--explain").json["items"]
    assert [i["id"] for i in hybrid] in (["feline", "cat"], ["cat", "feline"])  # stocks: no word, least meaning
    assert all(i["explain"]["cosine"] is not None for i in hybrid)
    trimmed = cli("recall", "a kitten lying on a carpet", "--mode", "approximate", "--min-score", "0.3", "--json")
    assert "stocks" not in [i["id"] for i in trimmed.json["items"]]
