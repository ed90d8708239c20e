"""Any BERT-family sentence model (EIDETIC_MODEL): the bundled weights under both pooling
configurations and with prompts, from a folder the test writes; downloads from a real local
server; offline and unreachable errors that name the model; vectors never mixed across models."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from eidetic.embed import local, model_files
from eidetic.errors import EideticError
from eidetic.settings import Settings
from vectors import assert_same_vectors

TEXTS = ["the deploy failed on friday", "a cat sleeps on the warm keyboard", "x " * 300]


def write_model(folder: Path, pooling: str = "mean", prompts: dict[str, str] | None = None) -> Path:
    """A sentence-transformers folder around the bundled MiniLM weights with this pooling and
    these prompts."""
    bundled = local.model_dir()
    folder.mkdir(parents=True)
    for name in ("model.safetensors", "tokenizer.json", "config.json", "sentence_bert_config.json"):
        shutil.copyfile(bundled / name, folder / name)
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            ]
        )
    )
    (folder / "1_Pooling").mkdir()
    modes = {f"pooling_mode_{m}": m.startswith(pooling) for m in ("cls_token", "mean_tokens", "max_tokens")}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384, **modes}))
    if prompts is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    return folder


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings.load({"EIDETIC_CACHE_DIR": str(tmp_path / "cache")}).with_values("test", **values)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    os.environ.setdefault("EIDETIC_CACHE_DIR", str(root / "cache"))
    return {
        "mean": write_model(root / "mean"),
        "cls": write_model(root / "cls", "cls", {"query": "query: ", "document": "passage: "}),
        "cls-plain": write_model(root / "cls-plain", "cls"),
    }


def encoder(folder: Path, cache: Path) -> local.BertEncoder:
    return local.BertEncoder(cache=cache, source=model_files.ModelSource(folder, str(folder), False))


def test_both_poolings_of_the_bundled_weights(folders, tmp_path):
    import numpy as np

    default = local.load(cache=tmp_path)
    mean, cls = encoder(folders["mean"], tmp_path), encoder(folders["cls-plain"], tmp_path)
    # the declared mean is the default's (which may run through ONNX Runtime by now: ~4e-7 apart)
    assert_same_vectors(mean.embed(TEXTS), default.embed(TEXTS))
    assert mean.name != default.name and mean.name.startswith(str(folders["mean"]) + "@")
    vectors = cls.embed(TEXTS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * default.embed(TEXTS)).sum(axis=1)
    assert cosines.max() < 0.98, cosines  # [CLS] is not the mean of the tokens
    alone = np.vstack([cls.embed([t]) for t in TEXTS])
    assert np.abs(alone - vectors).max() < 1e-5  # padding does not reach the [CLS] vector


def test_pooling_takes_the_first_the_mean_or_the_maximum_of_real_tokens():
    import numpy as np

    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mask = np.array([[1, 1, 0], [1, 1, 1]], dtype=np.float32)
    assert np.array_equal(local._pool(x, mask, "cls"), x[:, 0])
    assert np.array_equal(local._pool(x, mask, "mean")[0], x[0, :2].mean(axis=0))
    assert np.array_equal(local._pool(x, mask, "max")[0], x[0, 1])  # the padded token is ignored


def test_queries_and_documents_get_their_declared_prompts(folders, tmp_path):

    prompted, plain = encoder(folders["cls"], tmp_path), encoder(folders["cls-plain"], tmp_path)
    assert_same_vectors(prompted.embed(TEXTS[:2]), plain.embed(["passage: " + t for t in TEXTS[:2]]))
    assert_same_vectors(prompted.embed(TEXTS[:2], query=True), plain.embed(["query: " + t for t in TEXTS[:2]]))
    assert prompted.name != plain.name  # other prompts, other vectors: never mixed


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (("config.json", {"model_type": "roberta"}), "is a roberta model"),
        (("1_Pooling/config.json", {"pooling_mode_lasttoken": True}), "pools by lasttoken"),
        (("1_Pooling/config.json", {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": True}), "pools by"),
    ],
)
def test_a_model_this_encoder_cannot_run_is_refused_by_name(tmp_path, change, said):
    folder = write_model(tmp_path / "odd")
    name, values = change
    path = folder / name
    data = json.loads(path.read_text()) if name == "config.json" else {}
    path.write_text(json.dumps({**data, **values}))
    with pytest.raises(EideticError) as info:
        encoder(folder, tmp_path)
    assert info.value.code == 2 and said in info.value.message and str(folder) in info.value.message


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b/c", "/nonexistent/folder", "a b/c"])
def test_a_name_that_is_neither_folder_nor_id_is_a_user_error(tmp_path, name):
    with pytest.raises(EideticError) as info:
        model_files.locate(settings(tmp_path, model=name))
    assert info.value.code == 1 and "neither a folder nor a Hugging Face id" in info.value.message


class Hub(SimpleHTTPRequestHandler):
    """Serves a folder laid out as ``{owner}/{name}/resolve/main/{file}``; ``fail`` answers 500."""

    requests: list[str] = []
    fail: str | None = None

    def do_GET(self):
        Hub.requests.append(self.path)
        if Hub.fail and self.path.endswith(Hub.fail):
            self.send_error(500)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@contextmanager
def hub(root: Path) -> Iterator[str]:
    Hub.requests, Hub.fail = [], None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Hub, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def published(tmp_path):
    root = tmp_path / "hub"
    write_model(root / "acme" / "tiny-bert" / "resolve" / "main", "cls", {"query": "query: "})
    return root


def test_a_named_model_is_downloaded_once_then_used_offline(published, tmp_path):
    with hub(published) as endpoint:
        source = model_files.locate(settings(tmp_path, model="acme/tiny-bert", model_endpoint=endpoint))
        assert source.label == "acme/tiny-bert" and (source.folder / "model.safetensors").stat().st_size > 80_000_000
        fetched = len(Hub.requests)
        assert fetched >= 4 and any(p.endswith("1_Pooling/config.json") for p in Hub.requests)
        again = model_files.locate(settings(tmp_path, model="acme/tiny-bert", model_endpoint=endpoint))
        assert again == source and len(Hub.requests) == fetched  # once
    offline = settings(tmp_path, model="acme/tiny-bert", model_offline=True)
    assert model_files.locate(offline) == source  # in the cache: no network needed
    assert encoder(source.folder, tmp_path).sentence.pooling == "cls"
    assert [p.name for p in source.folder.parent.iterdir()] == ["acme--tiny-bert"]  # no temporary left


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("how", ["offline", "unreachable", "absent", "interrupted", "malformed"])
def test_a_model_that_cannot_be_had_is_an_error_naming_it_and_leaves_nothing(published, tmp_path, how):
    with hub(published) as endpoint:
        Hub.fail = "model.safetensors" if how == "interrupted" else None
        values = {
            "offline": {"model_offline": True, "model_endpoint": endpoint},
            "unreachable": {"model_endpoint": f"http://127.0.0.1:{closed_port()}"},
            "absent": {"model_endpoint": endpoint + "/nothing-here"},
            "interrupted": {"model_endpoint": endpoint},
            "malformed": {"model_endpoint": "ftp://user:secret@[::1"},
        }[how]
        with pytest.raises(EideticError) as info:
            model_files.locate(settings(tmp_path, model="acme/tiny-bert", **values))
        if how == "offline":
            assert Hub.requests == []
    assert info.value.code == 2 and "model acme/tiny-bert" in info.value.message
    assert "secret" not in info.value.message + info.value.remediation
    assert "EIDETIC_MODEL" in info.value.remediation
    hub_dir = tmp_path / "cache" / "models" / "hub"
    assert not hub_dir.exists() or list(hub_dir.iterdir()) == []


def test_recall_with_an_unavailable_model_warns_by_name_and_ranks_by_keyword(cli, store, monkeypatch):
    assert cli("remember", '{"id": "a", "text": "the deploy failed on friday"}', "--no-embed").code == 0
    monkeypatch.setenv("EIDETIC_MODEL", "acme/absent-model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = cli("recall", "deploy", "--json")
    assert run.code == 0 and [h["id"] for h in run.json["items"]] == ["a"]
    assert "acme/absent-model" in run.err


def test_switching_model_re_embeds_lazily_and_never_mixes(cli, backend, env, folders, monkeypatch):
    """The vector cache and each backend's vector index keep one model's vectors apart."""
    monkeypatch.delenv("EIDETIC_EMBEDDER")

    def cached() -> dict[str, int]:
        rows = sqlite3.connect(env / "cache" / "vectors.sqlite").execute(
            "SELECT model, count(*) FROM vectors GROUP BY model"
        )
        return dict(rows.fetchall())

    for i, text in enumerate(["the deploy failed on friday", "a cat sleeps on the keyboard", "lunch is at noon"]):
        assert cli("remember", json.dumps({"id": f"r{i}", "text": text})).code == 0

    def cosines() -> tuple[str, dict[str, float]]:
        run = cli("recall", "kitten", "--mode", "approximate", "--explain", "--json").json
        assert {h["explain"]["model"] for h in run["items"]} == {run["embedder"]["model"]}
        return run["embedder"]["model"], {h["id"]: h["explain"]["cosine"] for h in run["items"]}

    default, mine = cosines()
    assert default == model_files.BUNDLED and cached() == {default: 3}
    monkeypatch.setenv("EIDETIC_MODEL", str(folders["cls"]))
    name, theirs = cosines()
    assert name.startswith(str(folders["cls"]) + "@") and cached() == {default: 3, name: 3}  # embedded lazily
    assert all(abs(theirs[i] - mine[i]) > 1e-3 for i in mine)  # the other model's own cosines
    monkeypatch.delenv("EIDETIC_MODEL")
    assert cosines() == (default, mine) and cached() == {default: 3, name: 3}  # back: nothing re-embedded


def test_a_config_naming_only_its_bert_architecture_is_accepted(tmp_path):

    folder = write_model(tmp_path / "no-type")
    config = json.loads((folder / "config.json").read_text())
    del config["model_type"]
    (folder / "config.json").write_text(json.dumps({**config, "architectures": ["BertModel"]}))
    vectors = encoder(folder, tmp_path).embed(TEXTS[:1])
    assert_same_vectors(vectors, local.load(cache=tmp_path).embed(TEXTS[:1]))  # either runtime


def test_float16_weights_saved_from_a_bert_head_model_give_the_same_vectors(tmp_path):
    """As gte-small ships them (float16), and as a ``BertFor...`` checkpoint names them (``bert.``)."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    folder = write_model(tmp_path / "half")
    weights = load_file(str(folder / "model.safetensors"))
    save_file({f"bert.{k}": v.astype(np.float16) for k, v in weights.items()}, str(folder / "model.safetensors"))
    half = encoder(folder, tmp_path).embed(TEXTS)
    cosines = (half * local.load(cache=tmp_path).embed(TEXTS)).sum(axis=1)
    assert half.dtype == np.float32 and cosines.min() > 0.999, cosines


@pytest.mark.parametrize("damage", ["no tokenizer", "no tensor", "not safetensors"])
def test_a_broken_model_folder_is_an_error_naming_the_model(tmp_path, damage):
    from safetensors.numpy import load_file, save_file

    folder = write_model(tmp_path / "broken")
    weights = folder / "model.safetensors"
    if damage == "no tokenizer":
        (folder / "tokenizer.json").unlink()
    elif damage == "no tensor":
        arrays = load_file(str(weights))
        del arrays["encoder.layer.3.output.dense.weight"]
        save_file(arrays, str(weights))
    else:
        weights.write_bytes(b"not a safetensors file at all")
    with pytest.raises(EideticError) as info:
        encoder(folder, tmp_path)
    assert info.value.code == 2 and f"model {folder}" in info.value.message
