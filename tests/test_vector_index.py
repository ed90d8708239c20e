"""The vector index on its own (synthetic vectors: what matters here is geometry, not meaning)
and through recall with the real model: exact and HNSW search, appends after the graph,
compaction, crashes and concurrent readers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from eidetic import Memory
from eidetic.index.vector_index import VectorIndex
from eidetic.settings import Settings


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def clustered(n: int, dim: int = 48, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(n // 50, 1), dim))
    return unit(centres[rng.integers(0, len(centres), n)] + 0.6 * rng.standard_normal((n, dim)))


def exact_top(matrix: np.ndarray, docs: list[int], q: np.ndarray, k: int) -> list[int]:
    return [docs[i] for i in np.argsort(-(matrix @ q), kind="stable")[:k]]


def first_page(index: VectorIndex, q: np.ndarray, k: int) -> list[int]:
    page = next(index.ranked(q, 40))
    return [doc for doc, _ in sorted(page, key=lambda item: -item[1])[:k]]


def grow(index: VectorIndex) -> None:
    """What the store index does after appending: build a due graph, then install it."""
    built = index.build_graph()
    if built is not None:
        index.install_graph(built)


def index_at(folder):
    """A vector index with the ANN threshold the test's environment sets."""
    return VectorIndex(folder, ann_threshold=Settings.load().ann_threshold)


@pytest.fixture
def small_ann(monkeypatch):
    monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "1000")


def test_exact_pages_are_ranked_and_cover_every_row_once(tmp_path, monkeypatch):
    monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "0")
    vectors = clustered(700)
    docs = list(range(3, 3 + 2 * 700, 2))
    index = index_at(tmp_path / "v")
    index.append(docs[:300], vectors[:300], docs[299])
    index.append(docs[300:], vectors[300:], docs[-1] + 5)
    assert index.rows == 700 and index.last_doc == docs[-1] + 5
    q = vectors[17]
    pages = list(index.ranked(q, 10))
    flat = [doc for page in pages for doc, _ in page]
    assert sorted(flat) == docs and len(pages) > 2
    assert flat[:50] == exact_top(vectors, docs, q, 50)
    cos = index.cosines(q, [docs[17], docs[5], 4, 10_000])
    assert set(cos) == {docs[17], docs[5]} and cos[docs[17]] == pytest.approx(1.0, abs=1e-5)


def test_hnsw_recall_at_10_against_exact_and_rows_added_after_the_graph(tmp_path, small_ann):
    vectors = clustered(5000, seed=1)
    docs = list(range(1, 5001))
    index = index_at(tmp_path / "v")
    index.append(docs[:4000], vectors[:4000], 4000)
    assert index.wants_graph() and index.state()["ann_rows"] == 0
    grow(index)
    assert index.state()["ann_rows"] == 4000 and not index.wants_graph()
    index.append(docs[4000:4100], vectors[4000:4100], 4100)  # below a tenth: searched exactly
    grow(index)
    assert index.state()["ann_rows"] == 4000 and index.rows == 4100
    rng = np.random.default_rng(7)
    hits = 0
    for i in rng.integers(0, 4100, 50):
        q = unit(vectors[i : i + 1] + 0.3 * rng.standard_normal((1, 48)))[0]
        hits += len(set(first_page(index, q, 10)) & set(exact_top(vectors[:4100], docs[:4100], q, 10)))
    assert hits / 500 >= 0.98
    assert first_page(index, vectors[4050], 1) == [4051]  # a row newer than the graph
    index.append(docs[4100:], vectors[4100:], 5000)  # now more than a tenth: the graph grows
    grow(index)
    assert index.state()["ann_rows"] == 5000
    assert len(list((tmp_path / "v").glob("ann-*"))) == 1
    assert first_page(index, vectors[4999], 1) == [5000]
    every = [doc for page in index.ranked(vectors[0], 40) for doc, _ in page]
    assert sorted(set(every)) == docs  # pages go on until every row was offered


def test_compaction_keeps_only_live_rows_and_old_files_go(tmp_path, small_ann):
    vectors = clustered(1500, seed=2)
    index = index_at(tmp_path / "v")
    index.append(list(range(1, 1501)), vectors, 1500)
    grow(index)
    assert index.state()["ann_rows"] == 1500
    keep = set(range(1, 1501, 3))
    index.compact(keep)
    assert index.rows == len(keep) and set(index.docs().tolist()) == keep
    names = {p.name.split("-")[1].split(".")[0] for p in (tmp_path / "v").iterdir() if "-" in p.name}
    assert names == {str(index.state()["gen"])}
    assert index.state()["ann_rows"] == 0  # 500 rows: exact again
    assert first_page(index, vectors[3], 1) == [4]


def test_a_graph_built_before_a_compaction_is_not_installed(tmp_path, small_ann):
    vectors = clustered(1500, seed=3)
    index = index_at(tmp_path / "v")
    index.append(list(range(1, 1501)), vectors, 1500)
    built = index.build_graph()  # built outside the lock ...
    index.compact(set(range(1, 1300)))  # ... while another process compacted
    index.install_graph(built)
    assert index.state()["ann_rows"] == 0 and not list((tmp_path / "v").glob("*.usearch"))
    grow(index)
    assert index.state()["ann_rows"] == 1299


def test_a_crashed_or_corrupt_index_starts_over(tmp_path):
    vectors = clustered(50)
    index = index_at(tmp_path / "v")
    index.append(list(range(1, 51)), vectors, 50)
    (tmp_path / "v" / "state.json").write_text("{not json")
    fresh = index_at(tmp_path / "v")
    assert fresh.rows == 0 and fresh.last_doc == 0  # derived data: rebuilt from the cache
    fresh.append(list(range(1, 51)), vectors, 50)
    state = json.loads((tmp_path / "v" / "state.json").read_text())
    vector_file = tmp_path / "v" / f"vectors-{state['gen']}.f32"
    with open(vector_file, "r+b") as handle:  # a crash lost the tail of an append
        handle.truncate(10 * 48 * 4)
    assert index_at(tmp_path / "v").rows == 0


def test_a_reader_sees_a_writers_new_rows(tmp_path):
    vectors = clustered(200)
    writer, reader = index_at(tmp_path / "v"), index_at(tmp_path / "v")
    writer.append(list(range(1, 101)), vectors[:100], 100)
    assert first_page(reader, vectors[150], 1) != [151]
    writer.append(list(range(101, 201)), vectors[100:], 200)
    assert first_page(reader, vectors[150], 1) == [151]


def test_recall_through_the_graph_matches_exact_search(store, monkeypatch):
    texts = [
        f"{animal} {verb} near the {place}"
        for animal in ("cat", "dog", "heron", "otter", "moth")
        for verb in ("sleeps", "hunts", "waits")
        for place in ("river", "barn", "garden", "station")
    ]
    with Memory.open() as memory:
        memory.remember([{"id": f"r{i}", "text": t} for i, t in enumerate(texts)])
        monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "0")
        queries = ("a bird fishing by the water", "pets resting in a farm building", "insects at night")
        exact = [
            [h.record.id for h in memory.recall(q, mode="approximate", top_k=5, depth=0, record=False).items]
            for q in queries
        ]
    monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "20")
    with Memory.open() as memory:
        memory.rebuild_index()  # a new index instance: vectors re-read from the cache, graph built
        graph = [
            [h.record.id for h in memory.recall(q, mode="approximate", top_k=5, depth=0, record=False).items]
            for q in queries
        ]
        assert graph == exact
        assert list(Path(os.environ["EIDETIC_CACHE_DIR"]).rglob("ann-*.usearch"))  # the graph was used
        memory.remember([{"id": "r0", "text": "a heron catching fish in the river"}])  # replaces a row
        top = memory.recall("bird fishing in the river", mode="approximate", top_k=3, depth=0, record=False)
        assert top.items[0].record.id == "r0" and top.items[0].record.text.startswith("a heron catching")
        assert [h.record.id for h in top.items].count("r0") == 1
        vectors = memory.index_status()[0]["vectors"]
        assert [(v["model"], v["partition"]) for v in vectors] == [("sentence-transformers/all-MiniLM-L6-v2", "public")]
        assert vectors[0]["rows"] >= len(texts) and vectors[0]["graph_rows"] >= len(texts)
