"""Crash safety as a figure: 100 SIGKILLs of `remember` batches (see benchmarks/crash.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from crash import crash_experiment  # noqa: E402

pytestmark = pytest.mark.slow  # 100 SIGKILLed remember processes


def test_sigkill_at_random_moments_never_corrupts_or_loses(env):
    result = crash_experiment(env / "crash", kills=100, records=2000, batch_size=300, log=lambda *_: None)
    assert result["kills"] == 100
    states = result["killed_with_batch"]
    assert sum(states.values()) == 100
    assert states.get("none", 0) + states.get("partial", 0) > 0  # some kills landed mid-batch
    assert result["staging_left"] == []  # every killed writer's staging folder was removed
