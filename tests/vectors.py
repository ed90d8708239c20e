"""Comparing embedding vectors in tests: never exactly.

The same text embedded at another batch position, in another batch size, through memory-mapped
weights or on another CPU takes another BLAS kernel path (OpenBLAS picks kernels by CPU and by
alignment), so float32 results differ in the last bits: ~1e-7 here, more on other machines. Two
vectors are "the same" when every component is within ``ATOL`` and their cosine is within
``COSINE`` of 1: far tighter than any difference that would change a ranking (neighbouring
records differ by >= 1e-3 in cosine), far looser than kernel noise.
"""

from __future__ import annotations

from typing import Any

ATOL = 1e-5
COSINE = 1e-6


def assert_same_vectors(got: Any, want: Any) -> None:
    """Row by row, ``got`` and ``want`` are the same vectors up to float32 kernel noise."""
    import numpy as np

    got, want = np.atleast_2d(np.asarray(got, dtype=np.float64)), np.atleast_2d(np.asarray(want, dtype=np.float64))
    assert got.shape == want.shape, (got.shape, want.shape)
    worst = float(np.abs(got - want).max()) if got.size else 0.0
    assert worst < ATOL, f"components differ by up to {worst:.2e} (allowed {ATOL:.0e})"
    norms = np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1)
    cosines = (got * want).sum(axis=1) / np.where(norms > 0, norms, 1.0)
    assert (cosines > 1 - COSINE).all(), f"cosines {cosines.min():.9f} (allowed >= {1 - COSINE})"
