"""The forward pass of a BERT-family encoder in NumPy, arranged for throughput on a CPU.

Every product is one BLAS call on float32 (query, key and value fused into one matrix; the
attention scale folded into the query weights when they are prepared). The elementwise work
(GELU, softmax, layer norm) is what keeps a CPU from its matrix-product speed, so it runs in
place on blocks small enough to stay in a core's cache, and nothing is ever computed in float64.
One call is one batch on the calling thread; ``batches.py`` spreads batches over the cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

ATTENTION_BYTES = 1 << 20  # the attention scores computed at once: they stay in a core's L2 cache
# Subtracted from every attention score before exp(): the fast path holds while each row's
# largest score lies within about SHIFT +- 65 (all-MiniLM-L6-v2's lie within 0-83).
SHIFT = 32.0
GELU_ROWS = 64  # rows of hidden activations per GELU block: its temporaries stay in L2
LAYER_ARRAYS = ("qkv_w", "qkv_b", "o_w", "o_b", "n1_w", "n1_b", "i_w", "i_b", "f_w", "f_b", "n2_w", "n2_b")

# Exact GELU, x * Phi(x), with erf from Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7):
# erf(z) = 1 - t * poly(t) * exp(-z^2), t = 1 / (1 + P z), z = |x| / sqrt(2). Written as
# relu(x) - |x| / 2 * t * poly(t) * exp(-x^2 / 2), and t = K / (K + |x|) with K = sqrt(2) / P,
# it takes 19 passes over the array instead of ~25.
_K = math.sqrt(2.0) / 0.3275911
_HALF_POLY = (1.061405429 / 2, -1.453152027 / 2, 1.421413741 / 2, -0.284496736 / 2, 0.254829592 / 2)


@dataclass(frozen=True)
class Weights:
    """The model's arrays, as ``local._rearranged`` prepares them."""

    word: Any
    position: Any
    token_type: Any
    embed_norm: tuple[Any, Any]
    layers: list[tuple[Any, ...]]  # per layer: LAYER_ARRAYS
    heads: int
    eps: float


class Workspace:
    """The arrays one thread computes into, reused by every layer and batch: a fresh array of
    many megabytes costs page faults worth 10-30 % of the product that fills it."""

    def __init__(self) -> None:
        self._arrays: dict[str, Any] = {}

    def get(self, name: str, *shape: int) -> Any:
        import numpy as np

        size = math.prod(shape)
        array = self._arrays.get(name)
        if array is None or array.size < size:
            array = self._arrays[name] = np.empty(size, dtype=np.float32)
        return array[:size].reshape(shape)


def encode(w: Weights, ids: Any, lengths: Any, space: Workspace) -> Any:
    """The token vectors (batch, length, width) of token ids (batch, length), each row padded
    after its length. The result lives in ``space``: read it before its next use."""
    import numpy as np

    batch, length = ids.shape
    tokens, width = batch * length, w.word.shape[1]
    x = np.take(w.word, ids.ravel(), axis=0, out=space.get("x", tokens, width))
    x.reshape(batch, length, width)[...] += w.position[:length] + w.token_type
    _layer_norm(x, *w.embed_norm, w.eps, out=x)
    for qkv_w, qkv_b, o_w, o_b, n1_w, n1_b, i_w, i_b, f_w, f_b, n2_w, n2_b in w.layers:
        qkv = np.matmul(x, qkv_w, out=space.get("wide", tokens, 3 * width))
        qkv += qkv_b
        context = _attention(qkv, lengths, w.heads, space)
        attended = np.matmul(context, o_w, out=space.get("attended", tokens, width))
        attended += o_b
        attended += x
        _layer_norm(attended, n1_w, n1_b, w.eps, out=attended)
        hidden = space.get("wide", tokens, i_w.shape[1])  # the query/key/value are done with
        np.matmul(attended, i_w, out=hidden)
        for start in range(0, tokens, GELU_ROWS):  # blocks that stay in cache
            block = hidden[start : start + GELU_ROWS]
            block += i_b
            _gelu(block, out=block)
        np.matmul(hidden, f_w, out=x)
        x += f_b
        x += attended
        _layer_norm(x, n2_w, n2_b, w.eps, out=x)
    return x.reshape(batch, length, width)


def _attention(qkv: Any, lengths: Any, heads: int, space: Workspace) -> Any:
    """Self-attention of (batch * length, 3 * width) fused projections: the context vectors
    (batch * length, width).

    The heads are copied apart first (BLAS is ~2x faster on contiguous heads), each with one
    more column, so that the products do the softmax's other passes: queries get -SHIFT and
    keys 1 (every score comes out shifted, so exp() needs no maximum), values get 1 (their
    product with the numerators carries each row's denominator), and values are zero at
    padding (left out of both). A group whose sums say exp() overflowed or vanished is done
    again the usual way. A few sequences at a time, so their scores stay in cache."""
    import numpy as np

    batch = len(lengths)
    length, width = qkv.shape[0] // batch, qkv.shape[1] // 3
    size = width // heads
    parts = qkv.reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
    qk = space.get("qk", 2, batch, heads, length, size + 1)
    np.copyto(qk[..., :size], parts[:2])
    qk[0, ..., size], qk[1, ..., size] = -SHIFT, 1.0
    real = (np.arange(length) < lengths[:, None]).astype(np.float32)[:, None, :, None]
    values = space.get("values", batch, heads, length, size + 1)
    np.multiply(parts[2], real, out=values[..., :size])
    values[..., size:] = real
    context = space.get("context", batch, length, heads, size)
    group = max(1, ATTENTION_BYTES // (4 * heads * length * length))
    for start in range(0, batch, group):
        part = slice(start, start + group)
        n = len(lengths[part])
        scores = np.matmul(qk[0, part], qk[1, part].swapaxes(-1, -2), out=space.get("scores", n, heads, length, length))
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is caught just below
            np.exp(scores, out=scores)
            weighted = np.matmul(scores, values[part], out=space.get("weighted", n, heads, length, size + 1))
        sums = weighted[..., size:]
        if not 1e-30 < sums.min() <= sums.max() < 1e30:  # overflow or underflow (NaN fails too)
            _stable_softmax(qk[0, part], qk[1, part], lengths[part], scores)
            np.matmul(scores, values[part], out=weighted)
        np.divide(weighted[..., :size], sums, out=context[part].transpose(0, 2, 1, 3))
    return context.reshape(batch * length, width)


def _stable_softmax(q: Any, k: Any, lengths: Any, scores: Any) -> None:
    """Softmax numerators of q k^T into ``scores``, shifted by each row's maximum over its real
    keys: for scores so large or so small that exp() alone would overflow or vanish."""
    import numpy as np

    np.matmul(q, k.swapaxes(-1, -2), out=scores)
    length = scores.shape[-1]
    scores += np.where(np.arange(length) < lengths[:, None], 0.0, -np.inf).astype(np.float32)[:, None, None, :]
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)


def _gelu(x: Any, out: Any = None) -> Any:
    """Exact (erf) GELU in float32, into ``out`` (which may be ``x``)."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    a, e, t, p = (np.empty_like(x) for _ in range(4))  # explicit outputs: a 0-d input stays an array
    np.abs(x, out=a)
    np.multiply(a, -0.5, out=e)
    e *= a
    np.exp(e, out=e)  # exp(-x^2 / 2)
    np.add(a, _K, out=t)
    np.divide(_K, t, out=t)
    np.multiply(t, _HALF_POLY[0], out=p)
    for coefficient in _HALF_POLY[1:]:
        p += coefficient
        p *= t
    p *= e
    p *= a
    out = np.maximum(x, 0.0, out=np.empty_like(x) if out is None else out)
    out -= p
    return out


def _layer_norm(x: Any, weight: Any, bias: Any, eps: float = 1e-12, out: Any = None) -> Any:
    """Layer norm over the last axis in float32, into ``out`` (which may be ``x``)."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    out = np.subtract(x, x.mean(axis=-1, keepdims=True), out=out)
    spread = np.einsum("...i,...i->...", out, out)[..., None]
    spread *= 1.0 / x.shape[-1]
    spread += eps
    np.sqrt(spread, out=spread)
    out /= spread
    out *= weight
    out += bias
    return out
