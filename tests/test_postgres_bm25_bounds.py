"""The postgres keyword search's arithmetic (``stores/postgres/bm25_bounds.py``), against plain Python
computations of the same definitions: no server needed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from eidetic.stores.postgres import bm25_bounds as topk


def packed(postings: list[tuple[int, float, tuple[int, int, int, int]]]) -> bytes:
    """Postings packed as the server packs them (int8send || float4send || 4 x int2send)."""
    return np.array(postings, dtype=topk.POSTING).tobytes()


def random_lists(rng: random.Random, terms: int, offset: int) -> list[list[tuple[int, float, tuple]]]:
    return [
        [
            (offset + doc, rng.uniform(0.1, 3.0), (0, 0, rng.randint(1, 3), rng.randint(0, 2)))
            for doc in rng.sample(range(400), rng.randint(1, 60))
        ]
        for _ in range(terms)
    ]


def reference_bounds(lists, caps, parts, depth):
    """upper_bounds from its docstring, one record at a time."""
    rest, seen = [], []
    for postings, cap in zip(lists, caps):
        ranked = sorted(postings, key=lambda p: -p[1])
        cut = len(ranked) > depth
        rest.append(cap * float(np.float32(ranked[depth][1])) if cut else 0.0)
        seen.append({doc: cap * float(np.float32(impact)) for doc, impact, _ in ranked[:depth]})
    part_of = {doc: parts[i] for i, s in enumerate(seen) for doc in s}
    upper = {
        doc: sum(seen[i].get(doc, rest[i]) for i in range(len(lists)) if parts[i] == part)
        for doc, part in part_of.items()
    }
    unseen = max(sum(r for r, p in zip(rest, parts) if p == part) for part in set(parts))
    return upper, unseen, rest


@pytest.mark.parametrize("offset", [0, 50_000_000], ids=["dense", "sparse doc numbers"])
def test_upper_bounds_match_their_definition(offset):
    rng = random.Random(offset + 3)
    for _ in range(30):
        lists = random_lists(rng, rng.randint(1, 5), offset)
        parts = [rng.choice([1, 2]) for _ in lists]
        for i, postings in enumerate(lists):  # a record lives in one partition
            lists[i] = [p for p in postings if (p[0] % 2 + 1) == parts[i]] or postings[:0]
        caps = [rng.uniform(0.5, 4.0) for _ in lists]
        depth = rng.randint(1, 50)
        read = [sorted(p, key=lambda posting: -posting[1])[: depth + 1] for p in lists]  # what the server sends
        docs, upper, unseen, rest = topk.upper_bounds([topk.unpack(packed(p)) for p in read], caps, parts, depth)
        expected, expected_unseen, expected_rest = reference_bounds(lists, caps, parts, depth)
        assert docs.tolist() == sorted(expected)
        assert upper.tolist() == pytest.approx([expected[d] for d in sorted(expected)], rel=1e-9)
        assert unseen == pytest.approx(expected_unseen, rel=1e-9) and rest == pytest.approx(expected_rest, rel=1e-9)


def test_best_returns_the_head_in_order_and_the_bound_on_the_rest():
    rng = np.random.default_rng(1)
    docs = np.arange(100, 400, 3, dtype=np.int64)
    upper = rng.integers(0, 20, len(docs)).astype(np.float64)  # many ties
    order = sorted(range(len(docs)), key=lambda j: (-upper[j], docs[j]))
    for k in (1, 7, 50, len(docs) - 1):
        head, following = topk.best(docs, upper, k)
        assert [upper[list(docs).index(d)] for d in head] == [upper[j] for j in order[:k]]
        assert head == sorted(head, key=lambda d: (-upper[list(docs).index(d)], d))
        assert following == upper[order[k]]
    assert topk.best(docs, upper, len(docs)) == ([int(docs[j]) for j in order], 0.0)
    assert topk.best(docs[:0], upper[:0], 5) == ([], 0.0)


def test_intervals_are_exact_when_known_and_bounded_when_not():
    """Term 0 is cut short at depth 2 (its third posting stands for the rest), term 1 is read
    whole. Record 7 lacks term 0's top postings: open until looked up, then exact."""
    k1, b = 1.2, 0.75
    lists = [
        topk.unpack(packed([(5, 3.0, (0, 0, 2, 0)), (6, 2.0, (0, 0, 1, 0)), (9, 1.0, (0, 0, 1, 0))])),
        topk.unpack(packed([(5, 1.5, (0, 0, 0, 1)), (7, 1.0, (0, 0, 0, 2))])),
    ]
    terms = [(1, (0.0, 0.0, 2.0, 0.0)), (1, (0.0, 0.0, 0.0, 1.5))]
    averages = {1: (1.0, 1.0, 4.0, 4.0)}
    docs, parts = np.array([5, 7]), np.array([1, 1])
    lengths = np.array([[0, 0, 4, 4], [0, 0, 8, 8]], dtype=np.float64)
    rest = [0.7, 0.0]

    def part(weight, tf, length, average):
        return weight * tf / (tf + k1 * (1 - b + b * length / average)) if tf else 0.0

    low, high, opened = topk.intervals(docs, parts, lengths, lists, rest, 2, {}, terms, averages, k1, b)
    assert low[0] == pytest.approx(part(2.0, 2, 4, 4.0) + part(1.5, 1, 4, 4.0)) and high[0] == low[0]
    assert low[1] == pytest.approx(part(1.5, 2, 8, 4.0)) and high[1] == pytest.approx(low[1] + 0.7)
    assert opened.tolist() == [[False, False], [True, False]]
    low2, high2, opened2 = topk.intervals(
        docs, parts, lengths, lists, rest, 2, {0: {7: (0, 0, 3, 0)}}, terms, averages, k1, b
    )
    assert not opened2.any() and low2[1] == pytest.approx(part(2.0, 3, 8, 4.0) + part(1.5, 2, 8, 4.0))
    assert high2.tolist() == low2.tolist() and low2[0] == low[0]
