"""``--as-of`` as a property, on every backend: after any sequence of remember, supersede, forget
and restore, recall and list as of any moment give exactly what a plain-Python model of that
history says the store held then (which records, in which lifecycle), within each record's
validity interval.

The model keeps a snapshot of every record's lifecycle after each step; the store is asked at
each step's moment, a second before it and after the last. Each example writes into a private
scope of its own (ids prefixed by it), so one store serves every example of a backend.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eidetic import Memory
from eidetic.timeutil import parse_ts
from profiles import sized

pytestmark = pytest.mark.slow  # a property test over generated stores

T0 = datetime(2025, 1, 1, tzinfo=UTC)
STEP = timedelta(hours=1)
IDS = range(4)
EXAMPLES = iter(itertools.count())


@dataclass
class Model:
    """The history in plain Python: when each record was created, its declared validity, and
    after each step every record's lifecycle."""

    created: dict[int, datetime] = field(default_factory=dict)
    validity: dict[int, tuple[datetime | None, datetime | None]] = field(default_factory=dict)
    snapshots: list[tuple[datetime, dict[int, str]]] = field(default_factory=list)

    def state(self) -> dict[int, str]:
        return dict(self.snapshots[-1][1]) if self.snapshots else {}

    def step(self, at: datetime, changed: dict[int, str]) -> None:
        self.snapshots.append((at, {**self.state(), **changed}))

    def as_of(self, moment: datetime, states: tuple[str, ...]) -> set[tuple[int, str]]:
        then = next((snap for at, snap in reversed(self.snapshots) if at <= moment), {})
        return {
            (rid, state)
            for rid, state in then.items()
            if state in states and self._valid(rid, moment) and self.created[rid] <= moment
        }

    def _valid(self, rid: int, moment: datetime) -> bool:
        start, end = self.validity[rid]
        return (start is None or start <= moment) and (end is None or moment < end)


OPS = st.lists(
    st.tuples(
        st.sampled_from(("remember", "supersede", "forget", "restore")),
        st.sampled_from(IDS),
        st.sampled_from(IDS),
        st.sampled_from((None, -2, 1, 3)),  # valid_from, in steps from the write (None: open)
        st.sampled_from((None, 2, 5)),  # valid_until, in steps after valid_from (or the write)
    ),
    min_size=1,
    max_size=8,
)


def apply(memory: Memory, model: Model, op: tuple, at: datetime, tag: str) -> None:
    """One step, on the store and on the model alike; a step that cannot apply (forget of a
    record not there, remember of one that is) is skipped by both."""
    kind, target, other, start, length = op
    state = model.state()
    scope = {"scope": tag, "visibility": "private", "now": at, "embed": False}
    if kind in ("remember", "supersede"):
        if target in state or (kind == "supersede" and (other not in state or other == target)):
            return
        valid_from = None if start is None else at + start * STEP
        valid_until = None if length is None else (valid_from or at) + length * STEP
        record = {"id": f"{tag}-{target}", "text": f"{tag} marker record {target}"}
        record.update({k: v.isoformat() for k, v in (("valid_from", valid_from), ("valid_until", valid_until)) if v})
        changed = {target: "active"}
        if kind == "supersede":
            record["supersedes"] = f"{tag}-{other}"
            if state[other] == "active":
                changed[other] = "shadowed"
        memory.remember([record], **scope)
        model.created[target] = at
        model.validity[target] = (valid_from, valid_until)
        model.step(at, changed)
        return
    wanted = "archived" if kind == "forget" else "active"
    if target not in state:
        return
    memory.set_lifecycle(f"{tag}-{target}", wanted, scope=tag, visibility="private", now=at)
    model.step(at, {target: wanted})


def observed(memory: Memory, tag: str, moment: datetime, everything: bool) -> tuple[set, set]:
    """(recall, list) as of ``moment``: the (record number, lifecycle) pairs each gives."""
    flags = {"include_shadowed": everything, "include_archived": everything}
    who = {"scope": tag, "visibility": "private", "scope_only": True, "as_of": moment.isoformat()}
    recalled = memory.recall("marker", mode="exact", top_k=50, depth=0, **who, **flags)
    listed = memory.list_records(limit=50, **who, **flags)
    assert recalled.as_of is not None and parse_ts(recalled.as_of) <= moment
    return (
        {(int(hit.record.id.rsplit("-", 1)[1]), hit.record.lifecycle) for hit in recalled.items},
        {(int(item.record.id.rsplit("-", 1)[1]), item.record.lifecycle) for item in listed.items},
    )


@pytest.fixture
def memory(backend):
    with Memory.open() as opened:
        yield opened


@settings(max_examples=sized(ci=10, soak=30), deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS)
def test_as_of_answers_what_the_history_held_then(memory, ops):
    tag = f"x{next(EXAMPLES)}"
    model = Model()
    moments = []
    for number, op in enumerate(ops):
        at = T0 + number * STEP
        apply(memory, model, op, at, tag)
        moments += [at - timedelta(seconds=1), at]
    moments.append(T0 + len(ops) * STEP + timedelta(minutes=30))
    for moment in moments:
        for everything in (False, True):
            states = ("active", "shadowed", "archived") if everything else ("active",)
            expected = model.as_of(moment, states)
            recalled, listed = observed(memory, tag, moment, everything)
            assert recalled == listed == expected, (moment, ops)
