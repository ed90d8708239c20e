"""The vector index of one partition of one store, for one embedding model.

Rows are appended in doc-number order to a raw float32 matrix (``vectors-<gen>.f32``) with
the doc numbers alongside (``docs-<gen>.i64``); ``state.json`` says how many rows are valid.
Readers memory-map the files (a new process opens 100k vectors in microseconds, and only the
pages it touches count against its memory); writers, under the index lock, append
and then replace ``state.json`` atomically, so a reader always sees a consistent prefix.
Deleted records keep their rows until a compaction writes a new generation: the caller
admits candidates in SQL anyway (scope, lifecycle, filters), and a vanished doc is simply
not admitted.

Search is exact (one matrix-vector product) up to ``ann_threshold`` rows (``EIDETIC_ANN_THRESHOLD``). Above it an HNSW
graph (``usearch``, 8-bit, memory-mapped) proposes candidates over the rows it covers, which
are then re-scored exactly in float32; rows appended since the graph was built are scored
exactly. Measured recall@10 against exact search is in ``docs/benchmarks.md``. Why usearch: a
small wheel with no dependencies, memory-mapped loading, incremental adds, sub-millisecond
queries at 1M vectors; NumPy brute force took ~16 ms at 100k and ~120 ms at 1M here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..settings import DEFAULT_ANN_THRESHOLD

STATE = "state.json"
ANN_CONNECTIVITY = 16
ANN_EXPANSION_ADD = 128
ANN_EXPANSION_SEARCH = 256
# 8-bit graph vectors: on 384-d sentence-like vectors at 1M they gave better recall than half
# precision (recall@10 after re-scoring the top 100: 0.9925 vs 0.985 at ef 256), a 40 % faster
# build and 58 % of the file size (measured with usearch 2.26 on this machine; docs/benchmarks.md).
ANN_DTYPE = "i8"


def _empty(gen: int) -> dict[str, Any]:
    """The state of a generation with no rows yet."""
    return {"gen": gen, "rows": 0, "dim": 0, "last_doc": 0, "ann_rows": 0}


class VectorIndex:
    def __init__(
        self, folder: Path, model: str = "", partition: str = "", ann_threshold: int = DEFAULT_ANN_THRESHOLD
    ) -> None:
        """``ann_threshold``: rows from which the partition gets an HNSW graph (0: never)."""
        self.folder = folder
        self.ann_threshold = ann_threshold
        self.labels = {"model": model, "partition": partition}  # kept in the state, for status
        self._state: dict[str, Any] | None = None
        self._stamp: tuple[int, int] | None = None
        self._matrix: Any = None
        self._docs: Any = None
        self._ann: Any = None

    # -- state ---------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The current state, re-read when another process replaced it."""
        path = self.folder / STATE
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp or self._state is None:
            state = _empty(0)
            if stamp is not None:
                try:
                    state.update(json.loads(path.read_text()))
                except (OSError, ValueError):
                    pass  # derived data: an unreadable state starts over
            self._state, self._stamp = state, stamp
            self._matrix = self._docs = self._ann = None
            if not self._valid(state):
                self._state = _empty(state["gen"] + 1)
        return self._state

    def _valid(self, state: dict[str, Any]) -> bool:
        rows, dim = state["rows"], state["dim"]
        if rows == 0:
            return True
        try:
            return (
                self._file("vectors", state).stat().st_size >= rows * dim * 4
                and self._file("docs", state).stat().st_size >= rows * 8
                and (not state["ann_rows"] or self._file("ann", state).exists())
            )
        except OSError:
            return False

    def _file(self, kind: str, state: dict[str, Any]) -> Path:
        suffix = {"vectors": "f32", "docs": "i64", "ann": f"{state['ann_rows']}.usearch"}[kind]
        return self.folder / f"{kind}-{state['gen']}.{suffix}"

    def _write_state(self, state: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{STATE}.{os.getpid()}"
        temporary.write_text(json.dumps(state))
        os.replace(temporary, self.folder / STATE)
        self._state, self._stamp = None, None

    @property
    def rows(self) -> int:
        return self.state()["rows"]

    @property
    def graphed(self) -> bool:
        """Whether searches walk the HNSW graph: built, and not turned off (threshold 0)."""
        return bool(self.state()["ann_rows"]) and self.ann_threshold > 0

    @property
    def last_doc(self) -> int:
        return self.state()["last_doc"]

    # -- writing (the caller holds the record database's index lock) ----------------

    def append(self, docs: list[int], vectors: Any, last_doc: int) -> None:
        """Add rows for docs (ascending, all above the last one) and note how far the doc
        numbers have been looked at (``last_doc``), so the next sync starts there."""
        import numpy as np

        state = dict(self.state())
        if docs:
            matrix = np.ascontiguousarray(vectors, dtype=np.float32)
            if state["rows"] and matrix.shape[1] != state["dim"]:  # a model changed dimension
                state = _empty(state["gen"] + 1)
            state["dim"] = int(matrix.shape[1])
            self.folder.mkdir(parents=True, exist_ok=True)
            for kind, data in (("vectors", matrix), ("docs", np.asarray(docs, dtype=np.int64))):
                with open(self._file(kind, state), "r+b" if state["rows"] else "wb") as handle:
                    handle.seek(state["rows"] * data[0:1].nbytes)  # drop any tail of a crashed append
                    handle.write(data.tobytes())
                    handle.truncate()
            state["rows"] += len(docs)
        state["last_doc"] = max(state["last_doc"], last_doc)
        state.update({k: v for k, v in self.labels.items() if v})
        self._write_state(state)

    def compact(self, keep: set[int]) -> None:
        """Write a new generation holding only the rows of ``keep`` docs (in slices: the
        matrix of a big partition is never copied whole into memory)."""
        import numpy as np

        old = dict(self.state())
        if not old["rows"]:
            return
        docs, matrix = self.docs(), self.matrix()
        wanted = np.fromiter(keep, dtype=np.int64, count=len(keep))
        state = dict(_empty(old["gen"] + 1), dim=old["dim"], last_doc=old["last_doc"])
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self._file("vectors", state), "wb") as vectors_out, open(self._file("docs", state), "wb") as docs_out:
            for start in range(0, old["rows"], 100_000):
                mask = np.isin(docs[start : start + 100_000], wanted)
                vectors_out.write(np.ascontiguousarray(matrix[start : start + 100_000][mask]).tobytes())
                docs_out.write(np.ascontiguousarray(docs[start : start + 100_000][mask]).tobytes())
                state["rows"] += int(mask.sum())
        self._write_state(state)
        self._remove_generations_before(state["gen"])

    def wants_graph(self) -> bool:
        """True when the rows have outgrown exact search and the graph is missing, or the rows
        appended since it was built (searched exactly meanwhile) exceed a tenth of it or 20,000."""
        state = self.state()
        threshold = self.ann_threshold
        if threshold <= 0 or state["rows"] < threshold:
            return False
        return not state["ann_rows"] or state["rows"] - state["ann_rows"] >= max(
            min(state["ann_rows"] // 10, 20_000), 1000
        )

    def build_graph(self) -> tuple[dict[str, Any], Path] | None:
        """Build (or extend) the HNSW graph over the current rows into a temporary file, without
        any lock: rows are append-only within a generation, so the graph stays valid for it.
        Returns what :meth:`install_graph` needs, or None when there is nothing to do."""
        if not self.wants_graph():
            return None
        import numpy as np
        from usearch.index import Index

        state = dict(self.state())
        index = Index(
            ndim=state["dim"],
            metric="cos",
            dtype=ANN_DTYPE,
            connectivity=ANN_CONNECTIVITY,
            expansion_add=ANN_EXPANSION_ADD,
            expansion_search=ANN_EXPANSION_SEARCH,
        )
        if state["ann_rows"]:
            index.load(str(self._file("ann", state)))
        matrix = self.matrix()
        for start in range(state["ann_rows"], state["rows"], 100_000):
            stop = min(start + 100_000, state["rows"])
            index.add(
                np.arange(start, stop, dtype=np.uint64),
                np.ascontiguousarray(matrix[start:stop]),
                threads=os.cpu_count() or 1,
            )
        temporary = self.folder / f".ann-{state['gen']}.{os.getpid()}.usearch"
        index.save(str(temporary))
        return {"gen": state["gen"], "base": state["ann_rows"], "rows": state["rows"]}, temporary

    def install_graph(self, built: tuple[dict[str, Any], Path]) -> None:
        """Make a built graph current (the caller holds the write lock), unless the rows were
        compacted meanwhile or another process installed one first."""
        facts, temporary = built
        state = dict(self.state())
        if state["gen"] != facts["gen"] or state["ann_rows"] != facts["base"]:
            temporary.unlink(missing_ok=True)
            return
        previous = self._file("ann", state) if state["ann_rows"] else None
        state["ann_rows"] = facts["rows"]
        os.replace(temporary, self._file("ann", state))
        self._write_state(state)
        if previous is not None:
            previous.unlink(missing_ok=True)

    def _remove_generations_before(self, gen: int) -> None:
        for path in self.folder.iterdir():
            stem = path.name.lstrip(".").split(".")[0]  # ".ann-<gen>.<pid>": a build abandoned
            kind, _, number = stem.partition("-")
            if kind in ("vectors", "docs", "ann") and number.isdigit() and int(number) < gen:
                path.unlink(missing_ok=True)  # a reader that mapped it keeps its copy (POSIX)

    def drop(self) -> None:
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
        self._state = self._stamp = self._matrix = self._docs = self._ann = None

    # -- reading -------------------------------------------------------------------------

    def matrix(self) -> Any:
        import numpy as np

        state = self.state()
        if self._matrix is None:
            if not state["rows"]:
                return np.zeros((0, state["dim"] or 1), dtype=np.float32)
            self._matrix = np.memmap(
                self._file("vectors", state), dtype=np.float32, mode="r", shape=(state["rows"], state["dim"])
            )
        return self._matrix

    def docs(self) -> Any:
        import numpy as np

        state = self.state()
        if self._docs is None:
            if not state["rows"]:
                return np.zeros(0, dtype=np.int64)
            self._docs = np.memmap(self._file("docs", state), dtype=np.int64, mode="r", shape=(state["rows"],))
        return self._docs

    def cosines(self, query: Any, docs: list[int]) -> dict[int, float]:
        """Exact cosine of the query with these docs' rows (those that have one)."""
        import numpy as np

        all_docs = self.docs()
        if not len(all_docs) or not docs:
            return {}
        wanted = np.asarray(docs, dtype=np.int64)
        at = np.minimum(np.searchsorted(all_docs, wanted), len(all_docs) - 1)
        hit = all_docs[at] == wanted
        rows = at[hit]
        scores = np.asarray(self.matrix()[rows]) @ query
        return {int(d): float(s) for d, s in zip(wanted[hit], scores)}

    def above(self, queries: Any, threshold: float) -> tuple[Any, Any, Any]:
        """(query row, doc, cosine) of every query and stored row whose cosine reaches
        ``threshold``, exactly (``ranking.neighbours.above``); none for another dimension."""
        import numpy as np

        from ..ranking.neighbours import above

        state = self.state()
        if not state["rows"] or np.shape(queries)[1] != state["dim"]:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
        query, row, score = above(self.matrix(), queries, threshold)
        return query, np.asarray(self.docs()[row]), score

    def ranked(self, query: Any, first: int) -> Iterator[list[tuple[int, float]]]:
        """(doc, cosine) pages, best first: the first ``first`` candidates, then growing pages
        until every row has been offered. Exact below the ANN threshold; above it the graph's
        candidates are re-scored exactly (and rows newer than the graph scored directly)."""
        import numpy as np

        state = self.state()
        rows = state["rows"]
        if not rows:
            return
        matrix, docs = self.matrix(), self.docs()
        graph = self.graphed  # EIDETIC_ANN_THRESHOLD=0: exact, always
        if graph:
            ann = self._graph(state)
            offered: set[int] = set()
            want = first
            while want < state["ann_rows"] // 2:
                found = ann.search(query, want)
                candidates = np.asarray(found.keys, dtype=np.int64)
                tail = np.arange(state["ann_rows"], rows, dtype=np.int64)
                candidates = np.concatenate([candidates, tail])
                scores = np.asarray(matrix[candidates]) @ query
                order = np.argsort(-scores, kind="stable")
                page = [
                    (int(docs[candidates[i]]), float(scores[i])) for i in order if int(candidates[i]) not in offered
                ]
                offered.update(int(c) for c in candidates)
                yield page
                want *= 4
            # the graph is exhausted for practical purposes: finish exactly
        scores = np.asarray(matrix) @ query
        seen = offered if graph else set()
        if first < rows:  # the usual case: only the top few are needed, no full sort
            top = np.argpartition(-scores, first)[:first]
            top = top[np.argsort(-scores[top], kind="stable")]
            yield [(int(docs[i]), float(scores[i])) for i in top if int(i) not in seen]
            seen = seen | {int(i) for i in top}
        order = np.argsort(-scores, kind="stable")
        start, size = 0, 4 * first
        while start < rows:
            yield [(int(docs[i]), float(scores[i])) for i in order[start : start + size] if int(i) not in seen]
            start, size = start + size, size * 4

    def _graph(self, state: dict[str, Any]) -> Any:
        if self._ann is None:
            from usearch.index import Index

            # Memory-mapped and read-only; no key lookup table (we never look keys up): opening a
            # 1M graph took 60 ms instead of 210. The search width is not saved in the file.
            self._ann = Index.restore(str(self._file("ann", state)), view=True, enable_key_lookups=False)
            self._ann.expansion_search = ANN_EXPANSION_SEARCH
        return self._ann
