from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from conftest import snapshot
from eidetic import Memory
from eidetic.ranking import freshness

NOW = datetime(2026, 6, 20, 12, 0, tzinfo=UTC)
NOW_S = "2026-06-20T12:00:00+00:00"


@pytest.mark.parametrize(
    "count, expected", [(0, 0.5), (1, 0.55), (3, 0.65), (5, 0.75), (10, 1.0), (20, 1.0), (0.5, 0.525), (2.5, 0.625)]
)
def test_signal_access_bonus_pins(count, expected):
    assert freshness.signal(NOW_S, count, NOW_S, NOW) == pytest.approx(expected)


def test_signal_age_and_staleness():
    assert freshness.signal("2026-06-19T12:00:00+00:00", 0, None, NOW) == pytest.approx(0.5 / 1.01)
    assert freshness.signal("2025-06-20T12:00:00+00:00", 0, None, NOW) == pytest.approx(0.5 / (1 + 3.65))
    assert freshness.signal(NOW_S, 1, "2026-05-21T12:00:00+00:00", NOW) == pytest.approx(0.55 - 0.30)
    assert freshness.signal("2000-01-01", 0, "2000-01-01", NOW) == 0.0
    assert freshness.signal("date-unknown", 0, None, NOW) == 0.5
    assert freshness.signal("2030-01-01", 0, None, NOW) == 0.5  # future dates count as 0 days


def test_blend_and_neutral_records():
    assert freshness.blend(2.0, 1.0) == pytest.approx(2.25)
    assert freshness.blend(2.0, 0.0) == pytest.approx(1.75)
    assert freshness.is_neutral("date-unknown", 0, None)
    assert not freshness.is_neutral("date-unknown", 1, None)
    assert not freshness.is_neutral(NOW_S, 0, None)


def test_recall_bumps_usage_without_touching_record_files(cli, store):
    cli(
        "remember", "--json", stdin="".join(json.dumps({"id": f"r{i}", "text": f"quokka {i}"}) + "\n" for i in range(3))
    )
    before = snapshot(store)
    first = cli("recall", "quokka", "--mode", "keyword", "--top-k", "2", "--json").json["items"]
    assert all(item["recall_count"] == 0 and item["last_recall"] is None for item in first)
    second = cli("recall", "quokka", "--mode", "keyword", "--top-k", "3", "--json").json["items"]
    counts = {item["id"]: item["recall_count"] for item in second}
    assert sorted(counts.values()) == [0, 1, 1]
    assert all(item["last_recall"] for item in second if counts[item["id"]])
    assert snapshot(store) == before  # bytes and mtimes unchanged


def test_no_record_skips_the_bump(cli, store):
    cli("remember", '{"id": "a", "text": "quokka"}')
    for _ in range(2):
        cli("recall", "quokka", "--mode", "keyword", "--no-record")
    assert cli("recall", "quokka", "--mode", "keyword", "--json").json["items"][0]["recall_count"] == 0


def test_usage_survives_index_rebuild(cli, store):
    cli("remember", '{"id": "a", "text": "quokka"}')
    cli("recall", "quokka", "--mode", "keyword")
    cli("recall", "quokka", "--mode", "keyword")
    cli("index", "--rebuild")
    item = cli("recall", "quokka", "--mode", "keyword", "--json").json["items"][0]
    assert item["recall_count"] == 2


def test_signal_and_blend_change_the_order(store):
    with Memory.open() as memory:
        memory.remember(
            [
                {"id": "old", "text": "quokka facts", "created": "2026-01-01T00:00:00+00:00"},
                {"id": "new", "text": "quokka facts too", "created": "2026-06-20T00:00:00+00:00"},
            ],
            now=NOW,
        )
        hits = memory.recall("quokka facts", mode="keyword", now=NOW, record=False).items
        assert [h.record.id for h in hits] == ["new", "old"]
        assert hits[0].signal > hits[1].signal
        # the blend is exactly score * (1 + 0.25 * (signal - 0.5)) of the raw BM25 score
        explained = memory.recall("quokka facts", mode="keyword", now=NOW, record=False, explain=True).items
        for hit in explained:
            raw = hit.explain["raw_score"]
            assert hit.score == pytest.approx(raw * (1 + 0.25 * (hit.signal - 0.5)), rel=1e-5)


def test_undated_never_recalled_records_are_not_blended(store):
    with Memory.open() as memory:
        memory.remember([{"id": "u", "text": "quokka", "created": "date-unknown"}])
        hit = memory.recall("quokka", mode="exact", record=False, explain=True).items[0]
        assert hit.explain["blended"] is False
        assert hit.score == 1.0
