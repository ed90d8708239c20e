"""The encoder's forward pass as an ONNX graph: the computation of ``forward.encode`` in ONNX
Runtime's fused CPU kernels, over the very arrays ``local.py`` prepares.

The graph holds no weights: each is declared as external data and handed to the session from
the prepared (memory-mapped) arrays, so nothing is written or read twice. Per layer: the
``com.microsoft`` Attention kernel (fused query/key/value product, its scale 1 because the query
weights carry 1/sqrt(head size), padding masked by each text's length), SkipLayerNormalization
(residual, bias and layer norm in one pass) and BiasGelu (exact erf GELU, not FastGelu's tanh
approximation). Built with the ``onnx`` package only when no graph of this shape is cached.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .forward import LAYER_ARRAYS, Weights

GRAPH_VERSION = 1  # raise when the graph changes: cached graphs of older builders are not reused
OPSETS = (("", 17), ("com.microsoft", 1))  # 17: LayerNormalization


def arrays(w: Weights) -> dict[str, Any]:
    """The graph's weights by name: the prepared arrays themselves, not copies."""
    out = {
        "word": w.word,
        "position": w.position,
        "token_type": w.token_type,
        "embed_norm_w": w.embed_norm[0],
        "embed_norm_b": w.embed_norm[1],
    }
    for i, layer in enumerate(w.layers):
        out.update({f"{i}.{name}": array for name, array in zip(LAYER_ARRAYS, layer)})
    return out


def key(w: Weights) -> str:
    """What the graph depends on (the builder, every weight's shape, heads, eps) as a digest:
    the cache file's name, so another model's shape or a changed builder never reuses it."""
    shapes = {name: list(array.shape) for name, array in arrays(w).items()}
    spec = json.dumps([GRAPH_VERSION, OPSETS, shapes, w.heads, w.eps], sort_keys=True)
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def build(w: Weights) -> bytes:
    """The serialised graph: inputs ``ids`` (batch, length) int64 and ``lengths`` (batch) int32,
    output ``tokens`` (batch, length, width) float32, each row padded after its length."""
    from onnx import TensorProto, helper

    node, ms = helper.make_node, "com.microsoft"
    nodes = [
        node("Gather", ["word", "ids"], ["words"]),
        node("Shape", ["ids"], ["length"], start=1, end=2),
        node("Slice", ["position", "zero", "length"], ["positions"]),
        node("Add", ["words", "positions"], ["placed"]),
        node("Add", ["placed", "token_type"], ["embedded"]),
        node("LayerNormalization", ["embedded", "embed_norm_w", "embed_norm_b"], ["x"], axis=-1, epsilon=w.eps),
    ]
    x = "x"
    for i in range(len(w.layers)):
        p = f"{i}.".__add__
        nodes += [
            node(
                "Attention",
                [x, p("qkv_w"), p("qkv_b"), "lengths"],
                [p("context")],
                domain=ms,
                num_heads=w.heads,
                scale=1.0,
            ),
            node("MatMul", [p("context"), p("o_w")], [p("attended")]),
            node(
                "SkipLayerNormalization",
                [p("attended"), x, p("n1_w"), p("n1_b"), p("o_b")],
                [p("a")],
                domain=ms,
                epsilon=w.eps,
            ),
            node("MatMul", [p("a"), p("i_w")], [p("hidden")]),
            node("BiasGelu", [p("hidden"), p("i_b")], [p("gelu")], domain=ms),
            node("MatMul", [p("gelu"), p("f_w")], [p("f")]),
            node(
                "SkipLayerNormalization",
                [p("f"), p("a"), p("n2_w"), p("n2_b"), p("f_b")],
                [p("x")],
                domain=ms,
                epsilon=w.eps,
            ),
        ]
        x = p("x")
    nodes.append(node("Identity", [x], ["tokens"]))
    weights = [_external(TensorProto, name, array) for name, array in arrays(w).items()]
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    graph = helper.make_graph(
        nodes,
        "bert",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("lengths", TensorProto.INT32, ["batch"]),
        ],
        [helper.make_tensor_value_info("tokens", TensorProto.FLOAT, ["batch", "length", w.word.shape[1]])],
        initializer=[zero, *weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, v) for domain, v in OPSETS])
    model.ir_version = 8  # what ONNX Runtime 1.14 and later read
    return bytes(model.SerializeToString())


def _external(proto: Any, name: str, array: Any) -> Any:
    """A float32 weight declared without its data, which the session is given in memory."""
    tensor = proto(name=name, data_type=proto.FLOAT, dims=list(array.shape), data_location=proto.EXTERNAL)
    for field, value in (("location", "supplied-in-memory"), ("offset", "0"), ("length", str(array.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = field, value
    return tensor
