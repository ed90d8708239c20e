"""Bulk embedding through ONNX Runtime: the graph of ``onnx_graph`` over the prepared weights.

Why: the elementwise work between the matrix products (softmax, GELU, layer norm) keeps the
NumPy encoder at ~60 % of the machine's matrix-product limit; ORT fuses it (its GELU is ~2.5x
NumPy's), which more than makes up for its own matrix products (MLAS) being 15-20 % slower than
NumPy's OpenBLAS here (docs/benchmarks.md, "Embedding throughput").

One session per model and process, on one thread per run (``intra_op_num_threads`` 1, no
spinning): ``batches.py`` runs a call's batches concurrently on its pool of threads, as it does
NumPy's, which measured faster on this 2-core machine than ORT's own pool over one batch at a
time, and a query (one batch) stays on the calling thread. The session is given the prepared
arrays in memory (memory-mapped from the models cache: shared, not copied); the graph, which
holds no weights, is cached beside them under a digest of its shape and builder, written
atomically, so the ``onnx`` package is imported only once per model shape.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import onnx_graph
from .forward import Weights


class OnnxEncoder:
    """The token vectors of padded batches of token ids, through ONNX Runtime."""

    def __init__(self, w: Weights, folder: Path) -> None:
        """A session over ``w``, its graph cached in ``folder``. ImportError without onnxruntime
        (or, for a graph not yet cached, without onnx); RuntimeError if ORT refuses the graph."""
        import onnxruntime as ort

        self._arrays = onnx_graph.arrays(w)
        self._values = {name: ort.OrtValue.ortvalue_from_numpy(a) for name, a in self._arrays.items()}
        path = folder / f"bert-graph-{onnx_graph.key(w)}.onnx"
        try:
            self.session = self._session(path.read_bytes())
        except (OSError, RuntimeError):  # not cached yet, or damaged: built again
            graph = onnx_graph.build(w)
            self.session = self._session(graph)
            _write(path, graph)

    def _session(self, graph: bytes) -> Any:
        import onnxruntime as ort
        from onnxruntime.capi import onnxruntime_pybind11_state as state

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: nothing on a command's stderr
        options.add_external_initializers(list(self._values), list(self._values.values()))
        try:
            return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except (state.Fail, state.InvalidProtobuf, state.InvalidGraph, state.InvalidArgument) as exc:
            raise RuntimeError(f"ONNX Runtime refused the graph: {exc}") from None

    def encode(self, ids: Any, lengths: Any) -> Any:
        """(batch, length, width) float32 token vectors of (batch, length) int64 ids, each row
        padded after its length; on the calling thread (runs may overlap)."""
        import numpy as np

        return self.session.run(["tokens"], {"ids": ids, "lengths": lengths.astype(np.int32)})[0]


def _write(path: Path, data: bytes) -> None:
    """``data`` into ``path`` atomically; a read-only cache only costs the graph's next build."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
