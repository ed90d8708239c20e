"""Bulk embedding with the local model: batches cut by token count run on every core, a query on
the calling thread, and a text gets the same vector whatever batch it lands in."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ndjson
from eidetic.embed import batches, default_embedder, forward, local
from eidetic.settings import Settings

# Short notes, sentences and long chunks (truncated at 256 tokens), interleaved so every batch
# mixes lengths that sort apart.
TEXTS = [
    text
    for i in range(24)
    for text in (
        f"note {i}",
        f"the deploy of service {i} failed on friday after the migration ran twice",
        " ".join(f"word{j % (7 + i)} chunk{i}" for j in range(40 + 9 * i)),
    )
]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """The NumPy forward pass (ONNX Runtime's batches are tested in test_embed_onnx.py)."""
    encoder = local.load(cache=tmp_path_factory.mktemp("cache"))
    encoder.runtime = "numpy"
    yield encoder
    encoder.threads, encoder.runtime = batches.cores(), "auto"


def cosines(a, b):
    import numpy as np

    return (a * b).sum(axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.slow
def test_a_text_gets_the_same_vector_alone_and_within_a_batch_of_mixed_lengths(model):
    import numpy as np

    model.threads = 2
    together = model.embed(TEXTS)
    alone = np.vstack([model.embed([text]) for text in TEXTS])
    assert together.dtype == np.float32 and together.shape == (len(TEXTS), 384)
    assert cosines(together, alone).min() >= 0.99999
    backwards = model.embed(TEXTS[::-1])  # other neighbours, other batches: same rows, in order
    assert cosines(together, backwards[::-1]).min() >= 0.99999


def spy_threads(monkeypatch) -> list[int]:
    """The threads the real forward pass runs on, one entry per batch."""
    seen: list[int] = []
    real = local.encode

    def encode(*args, **kwargs):
        seen.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(local, "encode", encode)
    return seen


@pytest.mark.slow
def test_many_texts_run_on_every_thread_and_a_query_on_the_calling_one(model, monkeypatch):
    seen = spy_threads(monkeypatch)
    model.threads = 2
    model.embed(TEXTS)
    assert len(seen) >= 2 and len(set(seen)) == 2 and threading.get_ident() not in seen
    seen.clear()
    model.embed(["where did the deploy fail?"], query=True)
    assert seen == [threading.get_ident()]
    seen.clear()
    model.threads = 1
    model.embed(TEXTS)
    assert len(seen) >= 2 and set(seen) == {threading.get_ident()}


@pytest.mark.slow
def test_remembering_many_records_embeds_them_on_the_threads_set(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_THREADS", "2")
    monkeypatch.setenv("EIDETIC_EMBED_RUNTIME", "numpy")
    seen = spy_threads(monkeypatch)
    records = [{"id": f"n{i}", "text": text} for i, text in enumerate(TEXTS)]
    assert cli("remember", stdin=ndjson(*records)).code == 0
    assert len(set(seen)) == 2
    # "on friday" would be read as a time (eidetic explain time): the words as written
    hits = cli("recall", TEXTS[22], "--mode", "approximate", "--time-words", "off", "--json").json["items"]
    assert hits[0]["id"] == "n22" and hits[0]["score"] > 0.99


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5"])
def test_a_bad_thread_count_is_an_error_naming_it(cli, monkeypatch, value):
    monkeypatch.setenv("EIDETIC_EMBED_THREADS", value)
    run = cli("remember", "a note")
    assert run.code == 1 and "EIDETIC_EMBED_THREADS" in run.err and "hint:" in run.err


def test_the_setting_caps_the_threads_and_unset_means_every_core(tmp_path):
    capped = Settings.load({"EIDETIC_CACHE_DIR": str(tmp_path), "EIDETIC_EMBED_THREADS": "1"})
    assert capped.embed_threads == 1 and default_embedder(capped)[0].threads == 1
    unset = Settings.load({"EIDETIC_CACHE_DIR": str(tmp_path)})
    assert unset.embed_threads is None and default_embedder(unset)[0].threads == batches.cores()


@pytest.mark.parametrize("shift", [-200.0, 200.0])
def test_scores_too_large_or_too_small_for_exp_alone_take_the_stable_softmax(model, monkeypatch, shift):
    """Shifted so far that exp() overflows (or vanishes) everywhere: every group is done again
    with each row's maximum subtracted, and the vectors do not change."""
    model.runtime = "numpy"  # the settings' test above set the shared model back to auto
    expected = model.embed(TEXTS[:9])
    calls = []
    real = forward._stable_softmax
    monkeypatch.setattr(forward, "SHIFT", shift)
    monkeypatch.setattr(forward, "_stable_softmax", lambda *args: calls.append(1) or real(*args))
    assert cosines(model.embed(TEXTS[:9]), expected).min() >= 0.99999
    assert calls


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=600), max_size=300),
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=64, max_value=4096),
)
def test_batches_hold_every_text_once_within_the_budget_in_order_of_length(lengths, workers, tokens):
    plan = batches.plan(lengths, workers, tokens)
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    for batch in plan:
        assert len(batch) * max(lengths[i] for i in batch) <= max(tokens, max(lengths))
    for before, after in zip(plan, plan[1:]):
        assert max(lengths[i] for i in before) <= min(lengths[i] for i in after)


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("texts", [240, 250, 253])
def test_every_core_gets_batches_none_larger_than_it_must_be(workers, texts):
    plan = batches.plan([100] * texts, workers, 2048)
    assert len(plan) % workers == 0 and max(len(batch) for batch in plan) == -(-texts // len(plan))
