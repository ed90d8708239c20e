"""The `fields` ranking (SPEC §6): scores computed by hand, pinned; the browse; MEMORY.md."""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime, timedelta

import pytest

from eidetic import Memory
from eidetic.ranking import fields

NOW = datetime(2026, 6, 1, tzinfo=UTC)
MONTH = timedelta(days=365.25 / 12)


def write(folder, stem, name, description, rtype, body, touched, updated=None):
    front = [f"name: {name}", f"description: {description}", f"type: {rtype}"]
    if updated:
        front.append(f"updated: '{updated}'")
    path = folder / f"{stem}.md"
    path.write_text("---\n" + "\n".join(front) + "\n---\n" + body + "\n")
    stamp = touched.timestamp()
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def folder(env):
    memory_dir = env / "memory"
    memory_dir.mkdir()
    write(
        memory_dir,
        "deploy-checklist",
        "deploy-checklist",
        "Steps before deploying the API",
        "feedback",
        "Run the migration dry-run before each deploy. Deploy on weekdays. deploy deploy.",
        NOW - 3 * MONTH,
    )
    write(
        memory_dir,
        "user-prefs",
        "user_prefs",
        "How the user likes answers",
        "user",
        "Short answers. Never deploy on Fridays.",
        NOW - 12 * MONTH,
    )
    write(
        memory_dir,
        "kiln",
        "kiln",
        "Pottery notes",
        "reference",
        "Cone 6 glaze schedule.",
        NOW - 1 * MONTH,
        updated="2026-05-25T00:00:00Z",
    )
    write(
        memory_dir,
        "history",
        "old-api",
        "The old API gateway",
        "project",
        "Retired.\n\n## History\n- 2025-01-01: created\n- 2026-05-01: superseded by the new gateway\n\n## Notes\n2026-05-30 is not history",
        NOW - 24 * MONTH,
    )
    (memory_dir / "MEMORY.md").write_text("- [deploy](deploy-checklist.md) deploy gateway pottery\n")
    return memory_dir


def recall(folder, query, **options):
    with Memory.open([folder]) as memory:
        return memory.recall(query, mode="fields", depth=0, now=NOW, record=False, explain=True, **options)


def test_hand_computed_scores(folder):
    hits = {h.record.id: h for h in recall(folder, "deploy", top_k=10).items}
    # deploy-checklist: name +5, description ("deploying") +3, body 4 occurrences capped at 3
    # -> keyword 11; feedback prior 1.0; no usage; 3 months of 6 -> factor 1.0
    assert hits["deploy-checklist"].score == pytest.approx((11 + 1.0 + 0) * 1.0)
    # user-prefs: body once (+1); user prior 0.75; 12 months -> floor 0.5
    assert hits["user-prefs"].score == pytest.approx((1 + 0.75) * 0.5)
    assert list(hits) == ["deploy-checklist", "user-prefs"]  # MEMORY.md is never a result
    explain = hits["deploy-checklist"].explain
    assert explain["terms"] == {"deploy": {"name": 5.0, "description": 3.0, "body": 3.0}}
    assert explain["recency_months"] == pytest.approx(3.0)


def test_updated_and_history_dates_make_a_record_fresh(folder):
    kiln = recall(folder, "glaze").items[0]
    # mtime 1 month ago, but `updated` is 7 days before NOW: months = 7 / 30.4375
    assert kiln.score == pytest.approx((1 + 0.25) * (1.5 - (7 / (365.25 / 12)) / 6))
    old = recall(folder, "gateway").items[0]
    # mtime 2 years ago; the newest date in ## History is 2026-05-01 (the Notes date does not count)
    months = (NOW - datetime(2026, 5, 1, tzinfo=UTC)).days / (365.25 / 12)
    assert old.score == pytest.approx((3 + 1 + 0.5) * (1.5 - months / 6))  # description +3, body +1


def test_hyphens_and_underscores_in_names_are_spaces_and_usage_boosts(folder):
    with Memory.open([folder]) as memory:
        for _ in range(3):  # counted: asked now (one asked at another now counts nothing)
            memory.recall("user prefs", mode="fields")
        assert memory.recall("user prefs", mode="fields", now=NOW).items[0].recall_count == 3
        hit = memory.recall("user_prefs", mode="fields", now=NOW, record=False, explain=True).items[0]
    assert hit.record.id == "user-prefs"
    assert hit.explain["terms"] == {"user_prefs": {"name": 5.0, "description": 0.0, "body": 0.0}}
    # keyword 5, user prior 0.75, usage log2(1 + 3) * 0.5 = 1.0, factor 0.5
    assert hit.score == pytest.approx((5 + 0.75 + 1.0) * 0.5)
    assert hit.recall_count == 3


def test_no_hit_no_result_min_score_and_stale_months(folder):
    assert recall(folder, "nothing-matches-this").items == []
    assert [h.record.id for h in recall(folder, "deploy", min_score=2.0).items] == ["deploy-checklist"]
    stale = recall(folder, "deploy", stale_months=1.0, top_k=10).items  # 3 months of 1: floor 0.5
    assert stale[0].score == pytest.approx(12.0 * 0.5)


def test_browse_lists_a_type_by_recency_and_usage(folder):
    hits = recall(folder, "", types=["feedback", "reference"], top_k=10).items
    assert [h.record.id for h in hits] == ["kiln", "deploy-checklist"]
    assert hits[0].explain["keyword"] == 0 and hits[0].score == pytest.approx(hits[0].explain["recency_factor"])
    with pytest.raises(Exception, match="query is empty"):
        recall(folder, "")


def test_pure_helpers():
    assert fields.terms_of("query Commit  git commit") == ["commit", "git"]
    assert fields.recency(None, NOW, 6) == (1.0, None)
    assert fields.score([], None, None, "", "x", 0, None, NOW).score == 1.0
    assert math.isclose(fields.score(["a"], "a", None, "", "feedback", 1, NOW, NOW).usage_boost, 0.5)
    assert fields.snippet("x " * 200 + "the deploy step " + "y " * 200, ["deploy"]).count("deploy") == 1
