"""Crash safety as a figure: SIGKILLed `remember` batches (see benchmarks/crash.py, which a
release runs with 200 kills; EIDETIC_TEST_PROFILE=soak runs 100 here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from profiles import sized

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from crash import crash_experiment  # noqa: E402

pytestmark = pytest.mark.slow  # SIGKILLed remember processes

KILLS = sized(ci=12, soak=100)


def test_sigkill_at_random_moments_never_corrupts_or_loses(env):
    result = crash_experiment(env / "crash", kills=KILLS, records=2000, batch_size=300, log=lambda *_: None)
    assert result["kills"] == KILLS
    states = result["killed_with_batch"]
    assert sum(states.values()) == KILLS
    assert states.get("none", 0) + states.get("partial", 0) > 0  # some kills landed mid-batch
    assert result["staging_left"] == []  # every killed writer's staging folder was removed
