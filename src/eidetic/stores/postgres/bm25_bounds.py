"""The arithmetic of the postgres backend's exact BM25 top k (``keyword.py``): pure NumPy over
postings the store has already read, no I/O, so each step is tested on its own.

``lists[i]`` holds query term i's top postings by impact (``POSTING`` records, sorted by doc),
read ``depth + 1`` deep. A term with more than ``depth`` postings is *cut short*: its smallest
posting read stands for every one left out, which scores at most ``rest[i] = cap[i] * that
impact`` for the term (``cap`` turns an impact into a safe BM25 bound; see ``keyword.py``).
Done in SQL, the aggregation over tens of thousands of postings took most of a query's time;
here it takes a millisecond or two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# One posting as the store packs it on the server: doc, impact and the term's frequency in each
# field (name, description, text, context), big-endian (int8send || float4send || 4 x int2send).
POSTING = np.dtype([("doc", ">i8"), ("impact", ">f4"), ("tf", ">i2", (4,))])
# Doc numbers below this (or below 8 per posting) are aggregated in a dense array indexed by
# doc, ten times faster than sorting them; sparser ones are sorted (np.unique).
DENSE_DOCS = 1 << 21


def unpack(packed: bytes | None) -> Any:
    """One term's packed postings, sorted by doc (for ``np.searchsorted``)."""
    postings = np.frombuffer(packed or b"", dtype=POSTING)
    return postings[np.argsort(postings["doc"])]


def upper_bounds(
    lists: Sequence[Any], caps: Sequence[float], parts: Sequence[int], depth: int
) -> tuple[Any, Any, float, list[float]]:
    """Every record seen in some term's top ``depth`` postings (ascending doc), its upper bound,
    the bound on records seen in none, and each term's ``rest`` (0 when not cut short).

    A seen record's bound is ``cap * impact`` for the terms it was seen with plus ``rest`` for
    the other terms of its partition (``parts[i]`` is term i's); a record seen with none is
    bounded by the sum of its partition's ``rest``, the largest of which is returned."""
    docs: list[Any] = []
    gains: list[Any] = []
    rest = [0.0] * len(lists)
    for i, postings in enumerate(lists):
        bounds = postings["impact"].astype(np.float64) * caps[i]
        seen = postings["doc"].astype(np.int64)
        if len(postings) > depth:  # the smallest is the (depth+1)-th: it stands for those left out
            cut = int(np.argmin(bounds))
            rest[i] = float(bounds[cut])
            bounds, seen = np.delete(bounds, cut), np.delete(seen, cut)
        docs.append(seen)
        gains.append(bounds - rest[i])
    open_of: dict[int, float] = {}
    for part, left in zip(parts, rest):
        open_of[part] = open_of.get(part, 0.0) + left
    unseen = max(open_of.values(), default=0.0)
    every = np.concatenate(docs) if docs else np.zeros(0, np.int64)
    weights = np.concatenate(gains) if gains else np.zeros(0)
    # records of different partitions have different open bounds: a record's is its terms'
    base = np.concatenate([np.full(len(d), open_of[part]) for d, part in zip(docs, parts)]) if docs else weights
    size = int(every.max()) + 1 if len(every) else 0
    if size <= max(DENSE_DOCS, 8 * len(every)):
        unique = np.flatnonzero(np.bincount(every, minlength=size))
        upper = np.bincount(every, weights=weights, minlength=size)[unique]
        opens = np.zeros(size)
        opens[every] = base
        return unique, upper + opens[unique], unseen, rest
    unique, inverse = np.unique(every, return_inverse=True)
    opens = np.zeros(len(unique))
    opens[inverse] = base
    return unique, np.bincount(inverse, weights=weights, minlength=len(unique)) + opens, unseen, rest


def best(docs: Any, upper: Any, k: int) -> tuple[list[int], float]:
    """The ``k`` docs with the largest upper bounds, best first (ties by doc), and the largest
    bound among the others (0 if none): a partial sort, as only the head is ever scored."""
    if k >= len(docs):
        order = np.lexsort((docs, -upper))
        return docs[order].tolist(), 0.0
    head = np.argpartition(-upper, k)[: k + 1]
    order = head[np.lexsort((docs[head], -upper[head]))]
    return docs[order[:k]].tolist(), float(upper[order[k]])


def intervals(
    docs: Any,
    parts: Any,
    lengths: Any,
    lists: Sequence[Any],
    rest: Sequence[float],
    depth: int,
    looked_up: dict[int, dict[int, tuple[int, ...]]],
    terms: Sequence[tuple[int, Sequence[float]]],
    averages: dict[int, Sequence[float]],
    k1: float,
    b: float,
) -> tuple[Any, Any, Any]:
    """What is known of each record ``docs[j]`` (of partition ``parts[j]``, field lengths
    ``lengths[j]``): its BM25 over the terms whose frequency in it is known (``low``), the most
    the others could add on top (``high``, by their ``rest``) and which those are (``open``, a
    record x term matrix: cut-short terms whose top postings lack the record and that
    ``looked_up[term][doc]`` does not answer). With no open term, ``low`` is the exact score.
    ``terms[i]`` is term i's (partition, per-field weight ``field weight x (k1 + 1) x idf``)."""
    n = len(docs)
    average = np.array([averages[part] for part in parts.tolist()], dtype=np.float64).reshape(n, 4)
    norm = k1 * (1 - b + b * lengths / average)
    low, extra = np.zeros(n), np.zeros(n)
    opened = np.zeros((n, len(lists)), bool)
    for i, postings in enumerate(lists):
        part, weights = terms[i]
        rows = np.flatnonzero(parts == part)
        if not len(rows):
            continue
        mine = docs[rows]
        tf = np.zeros((len(rows), 4))
        found = np.zeros(len(rows), bool)
        if len(postings):
            at = np.minimum(np.searchsorted(postings["doc"], mine), len(postings) - 1)
            found = postings["doc"][at] == mine
            tf[found] = postings["tf"][at[found]]
        if len(postings) > depth:
            absent = np.flatnonzero(~found)
            known = looked_up.get(i, {})
            answered = np.isin(mine[absent], np.fromiter(known, np.int64, len(known)))
            for j in absent[answered].tolist():
                tf[j] = known[int(mine[j])]
            unknown = rows[absent[~answered]]
            extra[unknown] += rest[i]
            opened[unknown, i] = True
        low[rows] += (np.asarray(weights) * tf / (tf + norm[rows])).sum(axis=1)
    return low, low + extra, opened
