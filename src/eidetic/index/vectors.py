"""The vector indexes of one record database: one per partition and embedding model
(``vector_index``), kept up to date with its ``docs`` table."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .vector_index import VectorIndex

if TYPE_CHECKING:
    from .database import RecordDatabase

VECTOR_SLICE = 50_000  # rows appended to a vector index at a time

VectorsFor = Callable[[list[tuple[int, str]]], dict[str, Any]]  # (doc, text hash) pairs -> vector by hash


class VectorIndexes:
    """The vector indexes of ``db``, under ``<derived>.vectors/<instance>/``: doc numbers belong
    to one instance of a database (a recreated files index starts again from 1), so each
    instance's vectors live in a folder of their own."""

    def __init__(self, db: RecordDatabase) -> None:
        self.db = db
        self.root = db.derived.with_suffix(".vectors")
        self._open: dict[tuple[str, str], VectorIndex] = {}

    def _instance_root(self) -> Path:
        return self.root / (self.db.meta("instance") or "none")

    def get(self, model: str, keys: list[str]) -> list[VectorIndex]:
        """The vector indexes of these partitions, for one model."""
        found = []
        for key in keys:
            index = self._open.get((model, key))
            if index is None:
                folder = (
                    self._instance_root()
                    / hashlib.sha256(model.encode()).hexdigest()[:16]
                    / hashlib.sha256(key.encode()).hexdigest()[:16]
                )
                index = self._open[(model, key)] = VectorIndex(folder, model, key, self.db.ann_threshold)
            found.append(index)
        return found

    def status(self) -> list[dict[str, Any]]:
        """Each vector index of this database instance: model, partition, rows, rows under the graph."""
        found = []
        for state_file in sorted(self._instance_root().glob("*/*/state.json")):
            try:
                state = json.loads(state_file.read_text())
            except (OSError, ValueError):
                continue
            found.append(
                {
                    "model": state.get("model"),
                    "partition": state.get("partition"),
                    "rows": state.get("rows", 0),
                    "graph_rows": state.get("ann_rows", 0),
                }
            )
        return found

    def drop(self) -> None:
        """Delete every vector index (of every instance): derived data, rebuilt on demand."""
        shutil.rmtree(self.root, ignore_errors=True)
        self._open.clear()

    def sync(self, model: str, keys: list[str], vectors_for: VectorsFor) -> None:
        """Bring these partitions' vector indexes up to date with the records indexed since.

        ``vectors_for`` maps (doc, text hash) pairs to vectors by hash (from the cache,
        computing missing ones); it runs before the write lock is taken, so a long embedding
        never holds up writers, and again under it for anything that arrived meanwhile (cached
        by then). A graph that is due is built outside the lock by one process at a time
        (others search exactly meanwhile) and installed under it."""
        partitions = self.db.partitions()
        for key, index in zip(keys, self.get(model, keys)):
            if key not in partitions:
                continue
            condition, params = partitions[key]
            upto = self.db.conn.execute("SELECT coalesce(max(doc), 0) FROM docs").fetchone()[0]
            if upto > index.last_doc:
                vectors_for(self._new_rows(index, condition, params, upto))  # outside the lock: the slow part
                with self.db.index_lock():
                    self._append(index, condition, params, upto, vectors_for)
            if index.wants_graph():
                self._build_graph(index)

    def _new_rows(self, index: VectorIndex, condition: str, params: list[str], upto: int) -> list[tuple[int, str]]:
        """(doc, hash) of the partition's docs after the index's last one, up to ``upto``."""
        return list(
            self.db.conn.execute(
                f"SELECT doc, hash FROM docs WHERE doc > ? AND doc <= ? AND {condition} ORDER BY doc",
                [index.last_doc, upto, *params],
            )
        )

    def _append(
        self, index: VectorIndex, condition: str, params: list[str], upto: int, vectors_for: VectorsFor
    ) -> None:
        """Append the new rows in slices (bounded memory on a big first sync), under the index
        lock; compact when replaced or deleted records hold many rows."""
        import numpy as np

        rows = self._new_rows(index, condition, params, upto)
        for start in range(0, len(rows), VECTOR_SLICE):
            piece = rows[start : start + VECTOR_SLICE]
            found = vectors_for(piece)
            index.append([doc for doc, _ in piece], np.stack([found[h] for _, h in piece]), piece[-1][0])
        index.append([], None, upto)  # nothing else of this partition up to here
        conn = self.db.conn
        live = conn.execute(f"SELECT count(*) FROM docs WHERE {condition}", params).fetchone()[0]
        if index.rows > 1000 and index.rows > 1.25 * live:  # replaced or deleted records
            index.compact({doc for (doc,) in conn.execute(f"SELECT doc FROM docs WHERE {condition}", params)})

    def _build_graph(self, index: VectorIndex) -> None:
        import filelock

        try:
            with filelock.FileLock(str(index.folder) + ".build.lock", timeout=0):
                built = index.build_graph()
                if built is not None:
                    with self.db.index_lock():
                        index.install_graph(built)
        except filelock.Timeout:
            pass  # another process is building it; exact search until it is installed
