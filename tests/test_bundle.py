"""Recall's traversal bundle end to end: tiers, depth, via, parent, truncated, reinforcement."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def bundle(cli, store):
    records = [
        {
            "id": "chain0",
            "text": "quokka sightings register",
            "metadata": {"source": "discord"},
            "links": ["chain1"],
            "supersedes": "older",
        },
        {"id": "chain1", "text": "chain one notes", "metadata": {"source": "docs"}, "links": ["chain2"]},
        {"id": "chain2", "text": "chain two notes", "metadata": {"source": "docs"}},
        {
            "id": "older",
            "text": "older register entry",
            "metadata": {"source": "discord"},
            "scope": {"name": "other", "visibility": "public"},
        },
    ]
    assert cli("remember", stdin="".join(json.dumps(r) + "\n" for r in records)).code == 0
    return store


def items(run):
    assert run.code == 0, run.err
    return [(i["id"], i["tier"], i["depth"], i.get("via"), i.get("parent")) for i in run.json["items"]]


def test_default_depth_one(cli, bundle):
    run = cli("recall", "quokka", "--mode", "keyword", "--json")
    assert items(run) == [
        ("chain0", "primary", 0, None, None),
        ("chain1", "traversal", 1, "links", "chain0"),
        ("older", "traversal", 1, "supersedes", "chain0"),
    ]
    assert run.json["truncated"] is True  # chain2 lies beyond the bound
    hit = run.json["items"][1]
    assert hit["score"] == pytest.approx(run.json["items"][0]["score"] * 0.5)
    assert hit["text"] == "chain one notes" and hit["metadata"] == {"source": "docs"}


def test_depth_two_zero_and_budget(cli, bundle):
    deep = cli("recall", "quokka", "--mode", "keyword", "--depth", "2", "--json")
    assert ("chain2", "traversal", 2, "links", "chain1") in items(deep)
    assert deep.json["truncated"] is False
    none = cli("recall", "quokka", "--mode", "keyword", "--depth", "0", "--json")
    assert items(none) == [("chain0", "primary", 0, None, None)] and none.json["truncated"] is False
    budget = cli("recall", "quokka", "--mode", "keyword", "--depth", "2", "--max-nodes", "1", "--json")
    assert len([i for i in items(budget) if i[1] == "traversal"]) == 1 and budget.json["truncated"] is True
    for bad in (["--depth", "-1"], ["--max-nodes", "-2"], ["--depth", "x"]):
        run = cli("recall", "quokka", *bad, "--json")
        assert run.code == 1 and run.out == ""


def test_source_filters_every_hop(cli, bundle):
    run = cli("recall", "quokka", "--mode", "keyword", "--depth", "3", "--source", "discord", "--json")
    assert [i[0] for i in items(run)] == ["chain0", "older"]


def test_reinforcement_decays_by_depth_once_per_record(cli, bundle):
    cli("recall", "quokka", "--mode", "keyword", "--depth", "2")
    counts = {
        i["id"]: i["recall_count"]
        for i in cli("recall", "quokka", "--mode", "keyword", "--depth", "2", "--json", "--no-record").json["items"]
    }
    assert counts == {"chain0": 1, "chain1": 0.5, "older": 0.5, "chain2": 0.25}
    cli("recall", "chain notes", "--mode", "keyword", "--depth", "1", "--top-k", "5")
    counts = {
        i["id"]: i["recall_count"]
        for i in cli("recall", "quokka", "--mode", "keyword", "--depth", "2", "--json", "--no-record").json["items"]
    }
    assert counts["chain1"] == 1.5 and counts["chain2"] == 1.25  # primary hits: 1 each, not 1 + 0.5


def test_private_links_never_leak(cli, store):
    cli("remember", '{"id": "pub", "text": "public wombat", "links": ["priv"]}')
    cli(
        "remember",
        '{"id": "priv", "text": "private note", "links": ["deep"]}',
        "--scope",
        "secret",
        "--visibility",
        "private",
    )
    cli("remember", '{"id": "deep", "text": "public behind private"}')
    public = cli("recall", "wombat", "--mode", "keyword", "--depth", "3", "--json")
    assert [i[0] for i in items(public)] == ["pub"] and public.json["truncated"] is False
    assert "private note" not in public.out  # (the public record's own links list names "priv")
    own = cli(
        "recall",
        "wombat",
        "--mode",
        "keyword",
        "--depth",
        "3",
        "--scope",
        "secret",
        "--visibility",
        "private",
        "--json",
    )
    assert [i[0] for i in items(own)] == ["pub", "priv", "deep"]


def test_lifecycle_flags_apply_to_neighbours(cli, store):
    cli("remember", '{"id": "old", "text": "old plan"}')
    cli("remember", '{"id": "new", "text": "new plan wombat", "supersedes": "old"}')
    assert [i[0] for i in items(cli("recall", "wombat", "--mode", "keyword", "--json"))] == ["new"]
    with_shadowed = cli("recall", "wombat", "--mode", "keyword", "--include-shadowed", "--json")
    assert items(with_shadowed)[1] == ("old", "traversal", 1, "supersedes", "new")


def test_text_output_shows_both_tiers(cli, bundle):
    out = cli("recall", "quokka", "--mode", "keyword").out
    assert "[primary depth=0] id: chain0" in out and "[traversal depth=1 via=links parent=chain0] id: chain1" in out
    assert "truncated: yes" in out
