"""``eidetic consolidate``: near-duplicate clusters per scope, the survivor, --apply and restore,
on every backend; the pure clustering and neighbour search on their own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import ndjson
from eidetic import Memory
from eidetic.ranking import neighbours
from eidetic.ranking.clusters import Candidate, clusters

DEPLOY = [
    {"id": "old", "text": "Deploys run on Fridays.", "created": "2026-01-01", "links": ["runbook", "old"]},
    {"id": "new", "text": "deploys run on fridays", "created": "2026-03-01", "links": ["calendar"]},
    {"id": "mid", "text": "DEPLOYS  run on Fridays!", "created": "2026-02-01", "links": ["runbook", "new"]},
    {"id": "runbook", "text": "The runbook lives in ops/", "created": "2026-01-01"},
    {"id": "calendar", "text": "The release calendar", "created": "2026-01-01"},
    {"id": "cat", "text": "The cat sleeps on the sofa", "created": "2026-01-01"},
]
SECRET = {
    "id": "alice-1",
    "text": "Deploys run on Fridays",
    "scope": {"name": "alice", "visibility": "private"},
    "created": "2026-04-01",
}


def _state(env: Path, backend: str) -> object:
    """What a dry run must leave as it was: the store's bytes (files, sqlite), else every
    record and its usage as the store gives them back."""
    if backend == "files":
        return {p: p.read_bytes() for p in sorted((env / "store").rglob("*.md"))}
    if backend == "sqlite":
        return (env / "db" / "memory.sqlite").read_bytes()
    with Memory.open() as memory:
        return sorted(json.dumps([r.to_dict(), u], sort_keys=True) for r, u in memory.export_all())


def _bump(counts: dict[str, float], when: str = "2026-05-01T00:00:00+00:00") -> None:
    with Memory.open() as memory:
        memory.stores()[0].bump_usage(counts, when)


def test_dry_run_shows_the_cluster_and_changes_nothing(cli, backend, env):
    assert cli("remember", stdin=ndjson(*DEPLOY, SECRET)).code == 0
    before = _state(env, backend)
    run = cli("consolidate", "--json")
    assert run.code == 0, run.err
    report = run.json
    assert report["dry_run"] is True and report["clusters"] == 1 and report["scanned"] == 5 + 1
    (cluster,) = report["items"]
    assert cluster["scope"] == {"name": "default", "visibility": "public"}
    assert cluster["survivor"]["id"] == "new"  # the most recent
    assert [m["id"] for m in cluster["members"]] == ["mid", "old"] and all(
        m["score"] == 1.0 for m in cluster["members"]
    )
    assert "alice" not in run.out and "alice" not in run.err  # another scope's private record: not even counted
    assert _state(env, backend) == before
    text = cli("consolidate")
    assert "keep new" in text.out and "fold old" in text.out and "Dry run" in text.out


def test_apply_folds_links_and_usage_and_restore_undoes_it(cli, backend, env):
    cli("remember", stdin=ndjson(*DEPLOY, SECRET))
    _bump({"old": 3, "new": 1, "mid": 2})
    applied = cli("consolidate", "--apply", "--json").json
    assert applied["superseded"] == 2 and applied["items"][0]["undo"] == ["eidetic restore mid", "eidetic restore old"]
    survivor = cli("show", "new", "--json").json
    assert survivor["links"] == ["calendar", "runbook"]  # no self link, none to a member
    assert survivor["recall_count"] == 6 and survivor["last_recall"] == "2026-05-01T00:00:00+00:00"
    assert [e["id"] for e in survivor["metadata"]["consolidated_from"]] == ["mid", "old"]
    old = cli("show", "old", "--json").json
    assert old["lifecycle"] == "shadowed" and old["metadata"]["consolidated_into"] == "new"
    assert old["history"][-1]["to"] == "shadowed"
    assert "old" not in [i["id"] for i in cli("recall", "deploys fridays", "--mode", "keyword", "--json").json["items"]]
    assert cli("show", "alice-1", "--scope", "alice", "--visibility", "private", "--json").json["lifecycle"] == "active"
    assert cli("consolidate", "--json").json["clusters"] == 0  # nothing left to fold

    count = cli("show", "new", "--json").json["recall_count"]  # 6, and what the recall above added
    restored = cli("restore", "old", "--json").json
    assert restored == {"id": "old", "lifecycle": "active", "previous": "shadowed", "survivor": "new"}
    old = cli("show", "old", "--json").json
    assert old["lifecycle"] == "active" and "consolidated_into" not in old["metadata"]
    survivor = cli("show", "new", "--json").json
    assert survivor["links"] == ["calendar", "runbook"]  # mid brought runbook too, and is still folded
    assert survivor["recall_count"] == count - 3  # what old carried goes back
    assert [e["id"] for e in survivor["metadata"]["consolidated_from"]] == ["mid"]
    cli("restore", "mid")
    survivor = cli("show", "new", "--json").json
    assert survivor["links"] == ["calendar"] and "consolidated_from" not in survivor["metadata"]
    assert survivor["recall_count"] == count - 5


def test_keep_recalled_and_a_picked_survivor_with_a_merged_text(cli, backend):
    cli("remember", stdin=ndjson(*DEPLOY))
    _bump({"old": 5})
    report = cli("consolidate", "--keep", "recalled", "--json").json
    assert report["items"][0]["survivor"]["id"] == "old" and report["items"][0]["survivor"]["recall_count"] == 5
    merged = "Deploys run on Fridays, after the standup."
    run = cli("consolidate", "--survivor", "mid", "--text", merged, "--apply", "--json")
    assert run.code == 0, run.err
    (cluster,) = run.json["items"]
    assert cluster["survivor"]["id"] == "mid" and {m["id"] for m in cluster["members"]} == {"old", "new"}
    shown = cli("show", "mid", "--json").json
    assert shown["text"] == merged and shown["lifecycle"] == "active"
    assert cli("show", "new", "--json").json["lifecycle"] == "shadowed"


def test_scopes_are_never_mixed_and_a_private_scope_sees_its_own(cli, store, env):
    cli("remember", stdin=ndjson(*DEPLOY[:2], SECRET, {**SECRET, "id": "alice-2", "text": "deploys RUN on fridays"}))
    as_alice = cli("consolidate", "--scope", "alice", "--visibility", "private", "--json").json
    assert as_alice["scanned"] == 4
    scopes = {c["scope"]["name"]: {c["survivor"]["id"], *(m["id"] for m in c["members"])} for c in as_alice["items"]}
    assert scopes == {"default": {"old", "new"}, "alice": {"alice-1", "alice-2"}}
    secret_files = sorted((env / "store").rglob("alice-*.md"))
    before = [p.read_bytes() for p in secret_files]
    assert len(before) == 2 and cli("consolidate", "--apply", "--json").json["superseded"] == 1
    assert [p.read_bytes() for p in secret_files] == before  # folded as default/public: alice's untouched


def test_hostile_options_get_clear_errors_and_change_nothing(cli, store, env):
    cli("remember", stdin=ndjson(*DEPLOY, SECRET))
    before = {p: p.read_bytes() for p in sorted((env / "store").rglob("*.md"))}
    for args, words in (
        (["--keep", "oldest"], "invalid choice"),
        (["--threshold", "2"], "not in (0, 1]"),
        (["--threshold", "nan"], "not in (0, 1]"),
        (["--threshold", "-0.5"], "not in (0, 1]"),
        (["--threshold", "much"], "invalid float"),
        (["--text", "merged"], "needs the record"),
        (["--survivor", "nope", "--apply"], "no active record 'nope'"),
        (["--survivor", "alice-1", "--apply"], "no active record 'alice-1'"),  # out of reach: as if missing
        (["--survivor", "new", "--text", "", "--apply"], "'text' is empty"),
        (["--survivor", "new", "--text-file", str(env / "missing.txt")], "cannot read --text-file"),
    ):
        run = cli("consolidate", *args, "--json")
        assert run.code == 1 and words in run.err_json["message"] and run.err_json["remediation"], (args, run.err)
    assert {p: p.read_bytes() for p in sorted((env / "store").rglob("*.md"))} == before


def test_paraphrases_cluster_by_meaning_with_the_real_model(cli, backend, monkeypatch):
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    cli(
        "remember",
        stdin=ndjson(
            {"id": "p1", "text": "The deploy happens every Friday afternoon.", "created": "2026-01-01"},
            {"id": "p2", "text": "Every Friday afternoon we deploy.", "created": "2026-02-01"},
            {"id": "other", "text": "Quarterly revenue grew five percent.", "created": "2026-02-01"},
        ),
    )
    report = cli("consolidate", "--threshold", "0.8", "--json").json
    assert report["without_vectors"] == 0
    assert [(c["survivor"]["id"], [m["id"] for m in c["members"]]) for c in report["items"]] == [("p2", ["p1"])]
    assert 0.8 <= report["items"][0]["members"][0]["score"] < 1


def test_without_a_model_only_the_text_rule_applies(cli, backend):
    cli("remember", stdin=ndjson(*DEPLOY))
    run = cli("consolidate", "--json")
    assert run.json["without_vectors"] == 6 and "normalised text only" in run.err


def test_stars_never_chain():
    """A~B, B~C, C~D: A and D are unrelated, so they never share a cluster."""
    # (texts without particulars: "text A" / "text B" would differ in a name)
    candidates = [Candidate(c, f"a note on {c.lower()}", f"2026-01-0{i + 1}", None, 0) for i, c in enumerate("ABCD")]
    pairs = {(0, 1): 0.95, (1, 2): 0.95, (2, 3): 0.95}
    found = clusters(candidates, pairs)  # D is the most recent: it leads, with C; then B with A
    assert [(c.survivor, [m for m, _ in c.members]) for c in found] == [(3, [2]), (1, [0])]
    for cluster in found:
        assert all((min(cluster.survivor, m), max(cluster.survivor, m)) in pairs for m, _ in cluster.members)


def test_a_members_twin_in_text_comes_with_it():
    """C leads and takes A (similar by meaning); B, A's text in other case and punctuation, is no
    step away from A, so it joins A rather than being left alone."""
    candidates = [
        Candidate("A", "Deploys go out on Fridays.", "2026-01-01", None, 0),
        Candidate("B", "deploys go out on fridays", "2026-02-01", None, 0),
        Candidate("C", "We deploy every Friday.", "2026-03-01", None, 0),
    ]
    (cluster,) = clusters(candidates, {(0, 2): 0.86})
    assert cluster.survivor == 2 and dict(cluster.members) == {0: 0.86, 1: 0.86}


def test_the_inverted_file_finds_the_planted_pairs_as_all_pairs_would():
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((neighbours.EXACT_ROWS + 2000, 48)).astype(np.float32)
    twins = rng.choice(len(rows), 200, replace=False)
    rows[twins[100:]] = rows[twins[:100]] + 0.05 * rng.standard_normal((100, 48)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    rows[7] = 0  # a record without a vector: near nothing
    found = neighbours.similar_pairs(rows, 0.95)
    planted = {(min(a, b), max(a, b)) for a, b in zip(twins[:100].tolist(), twins[100:].tolist())}
    assert planted - {p for p in planted if 7 in p} <= set(found)
    sample = rows[:500] @ rows.T
    exact = {(min(a, b), max(a, b)) for a, b in zip(*np.nonzero(sample >= 0.95)) if a != b}
    assert exact <= set(found)
    assert all(cosine >= 0.95 for cosine in found.values())


@pytest.mark.parametrize("threshold", [0.0, 1.5, True, "0.9"])
def test_the_api_refuses_a_bad_threshold(store, threshold):
    from eidetic.errors import EideticError

    with Memory.open() as memory, pytest.raises(EideticError):
        memory.consolidate(threshold=threshold)
