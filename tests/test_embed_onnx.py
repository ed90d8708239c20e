"""Bulk embedding through ONNX Runtime: the graph built from the prepared weights matches the
reference vectors and the NumPy forward pass under both poolings; it starts only for bulk work
(or when asked), caches its graph, runs a query on the calling thread and no other, and falls
back to NumPy when onnxruntime cannot be imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from eidetic.embed import local, model_files, onnx_session
from test_embed import FIXTURE
from test_embed_batches import TEXTS, cosines
from test_models import write_model

pytestmark = pytest.mark.slow  # builds and runs the ONNX graph of the model

pytest.importorskip("onnxruntime")

# Just over ONNX_TOKENS in all: 17 chunks truncated at 256 tokens.
BULK = [f"chunk {i} " + "word " * 300 for i in range(17)]


def encoder(folder: Path | None, cache: Path, runtime: str) -> local.BertEncoder:
    source = model_files.ModelSource(folder, str(folder), False) if folder else None
    model = local.BertEncoder(cache=cache, source=source)
    model.runtime = runtime
    return model


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.mark.skipif(not FIXTURE.exists(), reason="the shared fixtures are not beside this checkout")
def test_the_graph_matches_the_reference_vectors_and_the_numpy_pass(cache):
    import numpy as np

    reference = json.loads(FIXTURE.read_text())
    onnx, numpy = encoder(None, cache, "onnx"), encoder(None, cache, "numpy")
    vectors = onnx.embed(reference["texts"])
    assert onnx.onnx is not None and onnx.onnx_error is None
    assert cosines(vectors, np.array(reference["vectors"], dtype=np.float32)).min() >= 0.9999
    assert cosines(vectors, numpy.embed(reference["texts"])).min() >= 0.99999
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_both_poolings_give_the_numpy_vectors(cache, tmp_path, pooling):
    folder = write_model(tmp_path / pooling, pooling, {"query": "query: ", "document": "passage: "})
    onnx, numpy = encoder(folder, cache, "onnx"), encoder(folder, cache, "numpy")
    assert cosines(onnx.embed(TEXTS[:12]), numpy.embed(TEXTS[:12])).min() >= 0.99999
    assert cosines(onnx.embed(TEXTS[:3], query=True), numpy.embed(TEXTS[:3], query=True)).min() >= 0.99999
    assert onnx.onnx is not None and numpy.onnx is None


def test_auto_starts_it_for_bulk_work_only_and_caches_the_graph(tmp_path):
    model = encoder(None, tmp_path, "auto")
    model.embed(["a query stays on numpy"] * 20)
    assert model.onnx is None  # a few tokens: not worth ONNX Runtime's start
    many = model.embed(BULK)
    assert sum(len(e.ids) for e in model.tokenizer.encode_batch(BULK)) >= local.ONNX_TOKENS
    assert model.onnx is not None
    graphs = list((tmp_path / "models").glob("bert-graph-*.onnx"))
    assert len(graphs) == 1 and 0 < graphs[0].stat().st_size < 100_000  # the weights are not in it
    graphs[0].write_bytes(b"damaged")  # a damaged graph is built again, same vectors
    again = encoder(None, tmp_path, "onnx")
    assert cosines(again.embed(BULK), many).min() >= 0.999999
    assert graphs[0].stat().st_size > 1000


def spy(monkeypatch) -> list[int]:
    """The threads ONNX Runtime's real runs are on, one entry per batch."""
    seen: list[int] = []
    real = onnx_session.OnnxEncoder.encode

    def encode(self, *args):
        seen.append(threading.get_ident())
        return real(self, *args)

    monkeypatch.setattr(onnx_session.OnnxEncoder, "encode", encode)
    return seen


def test_the_numpy_setting_never_runs_onnx_and_a_bad_value_is_refused(cli, store, monkeypatch):
    seen = spy(monkeypatch)
    monkeypatch.setenv("EIDETIC_EMBED_RUNTIME", "numpy")
    assert cli("remember", stdin="\n".join(json.dumps({"text": t}) for t in BULK)).code == 0
    assert seen == []
    monkeypatch.setenv("EIDETIC_EMBED_RUNTIME", "onnx")
    assert cli("recall", "which chunk", "--mode", "approximate").code == 0
    assert seen  # the query, through ONNX Runtime
    monkeypatch.setenv("EIDETIC_EMBED_RUNTIME", "fast")
    run = cli("remember", "a note")
    assert run.code == 1 and "EIDETIC_EMBED_RUNTIME" in run.err and "auto, onnx, numpy" in run.err


def native_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="counts threads through /proc")
def test_a_query_runs_on_the_calling_thread_and_bulk_on_every_worker(cache, monkeypatch):
    model = encoder(None, cache, "onnx")
    model.threads = 2
    seen = spy(monkeypatch)
    model.embed(["warm up"])
    before = native_threads()
    seen.clear()
    model.embed(["where did the deploy fail?"], query=True)
    assert seen == [threading.get_ident()] and native_threads() == before  # ORT started no thread
    seen.clear()
    model.embed(TEXTS)
    assert len(seen) >= 2 and len(set(seen)) == 2 and threading.get_ident() not in seen


BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "onnxruntime":
            raise ImportError("onnxruntime is blocked in this test")
sys.meta_path.insert(0, Block())
"""

RUN = """
import json, sys
from eidetic.embed import local
texts = json.load(open(sys.argv[1]))
model = local.BertEncoder()
vectors = model.embed(texts)
print(json.dumps({"onnx": model.onnx is not None, "error": model.onnx_error,
                  "imported": "onnxruntime" in sys.modules, "vectors": vectors.tolist()}))
"""


def test_without_onnxruntime_bulk_embedding_falls_back_to_numpy(tmp_path):
    import numpy as np

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCK)
    (tmp_path / "texts.json").write_text(json.dumps(BULK))
    source = str(Path(local.__file__).parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), source]),
        "EIDETIC_CACHE_DIR": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-c", RUN, str(tmp_path / "texts.json")], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert not out["onnx"] and not out["imported"] and "blocked" in out["error"]
    numpy = encoder(None, tmp_path, "numpy").embed(BULK[:2])
    assert cosines(np.array(out["vectors"][:2], dtype=np.float32), numpy).min() >= 0.99999
