"""Which rows of a matrix of unit vectors lie within a cosine of each other, without comparing
all pairs. Pure (NumPy only): ``eidetic consolidate`` (``memory.consolidation``) asks it.

Up to ``EXACT_ROWS`` rows every pair is compared (a few matrix products). Above, an inverted
file: ``2 * sqrt(n)`` rows drawn at random are the centres; each row joins the list of its
nearest centre and is compared with the members of the lists of its ``PROBES`` nearest centres.
Two rows close enough to be near-duplicates nearly always share one of those lists; measured
against all pairs in docs/benchmarks.md ("Consolidate"). The work is about ``n * PROBES *
n / centres`` products instead of ``n * n``: seconds at 100k rows instead of minutes.
"""

from __future__ import annotations

from typing import Any

EXACT_ROWS = 8192
PROBES = 8
BLOCK = 4096  # rows multiplied at a time: bounded memory
SEED = 20261201  # the centres are drawn the same way on every run: the same input, the same pairs


def similar_pairs(matrix: Any, threshold: float) -> dict[tuple[int, int], float]:
    """(i, j) with i < j -> cosine, for the rows whose cosine is at least ``threshold``. Rows of
    zeros (no vector) are close to nothing."""
    import numpy as np

    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    if len(rows) < 2:
        return {}
    if len(rows) <= EXACT_ROWS:
        return _collect(rows, np.arange(len(rows)), np.arange(len(rows)), threshold)
    return _inverted_file(rows, threshold)


def _inverted_file(rows: Any, threshold: float) -> dict[tuple[int, int], float]:
    import numpy as np

    n = len(rows)
    centres = rows[np.random.default_rng(SEED).choice(n, max(PROBES + 1, int(2 * n**0.5)), replace=False)]
    nearest = np.empty((n, PROBES), dtype=np.int64)
    for start in range(0, n, BLOCK):
        scores = rows[start : start + BLOCK] @ centres.T
        top = np.argpartition(-scores, PROBES, axis=1)[:, :PROBES]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        nearest[start : start + BLOCK] = np.take_along_axis(top, order, axis=1)
    home = nearest[:, 0]
    members = _lists(home, len(centres))
    probing = _lists(nearest.ravel(), len(centres))
    found: dict[tuple[int, int], float] = {}
    for centre in range(len(centres)):
        listed = members[centre]
        if len(listed):
            queries = np.unique(probing[centre] // PROBES)
            found.update(_collect(rows, queries, listed, threshold))
    return found


def _lists(assigned: Any, count: int) -> list[Any]:
    """For each centre, the positions assigned to it."""
    import numpy as np

    order = np.argsort(assigned, kind="stable")
    bounds = np.searchsorted(assigned[order], np.arange(count + 1))
    return [order[bounds[c] : bounds[c + 1]] for c in range(count)]


def _collect(rows: Any, queries: Any, candidates: Any, threshold: float) -> dict[tuple[int, int], float]:
    """The pairs of a query row and a candidate row (distinct) at or above ``threshold``."""
    import numpy as np

    found: dict[tuple[int, int], float] = {}
    targets = rows[candidates]
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        scores = rows[block] @ targets.T
        qi, ci = np.nonzero(scores >= threshold)
        for a, b, cosine in zip(block[qi].tolist(), candidates[ci].tolist(), scores[qi, ci].tolist()):
            if a != b:
                found[(min(a, b), max(a, b))] = min(1.0, cosine)
    return found
