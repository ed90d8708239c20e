"""How many texts are embedded at once, and on which cores.

Texts are batched by token count, not by number: sorted by length, so a batch pads little,
and cut to a budget of tokens, so a batch of long chunks is not eight times the work of a
batch of short notes. The batches of one call then run on a pool of threads, one per core:
NumPy releases the GIL in its matrix products and elementwise loops, and each thread keeps
one BLAS thread, which stays fast on a busy machine where multi-threaded BLAS collapses.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

TOKENS = 2048  # padded tokens per batch: products large enough for BLAS, ~30 MB of activations


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def plan(lengths: Sequence[int], workers: int, tokens: int = TOKENS) -> list[list[int]]:
    """The indices of texts of these token ``lengths`` in batches of like lengths, each of at
    most ``tokens`` padded tokens (or one text), as many batches as a multiple of ``workers``
    when there are enough texts, and none larger than that count needs: no core idles while
    another finishes a big last batch."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    sizes = [lengths[i] for i in order]
    if not sizes:
        return []
    low, high = sizes[-1], max(tokens, sizes[-1])
    wanted = min(len(sizes), -(-len(_pack(sizes, high)) // workers) * workers)
    while low < high:  # the smallest budget that still packs them into the batches wanted
        middle = (low + high) // 2
        low, high = (low, middle) if len(_pack(sizes, middle)) <= wanted else (middle + 1, high)
    return [[order[i] for i in batch] for batch in _pack(sizes, low)]


def _pack(sizes: list[int], budget: int) -> list[range]:
    """Consecutive runs of these ascending sizes, each run's count times its last size (its
    padded tokens) within ``budget`` (a run of one may exceed it)."""
    runs, start = [], 0
    for end, size in enumerate(sizes):
        if (end - start + 1) * size > budget and end > start:
            runs.append(range(start, end))
            start = end
    runs.append(range(start, len(sizes)))
    return runs


def run(batches: list[list[int]], work: Callable[[list[int]], None], workers: int) -> None:
    """``work`` on every batch: on this thread when there is one (a query stays on one core),
    else on up to ``workers`` threads."""
    if workers <= 1 or len(batches) <= 1:
        for batch in batches:
            work(batch)
        return
    with ThreadPoolExecutor(max_workers=min(workers, len(batches)), thread_name_prefix="eidetic-encode") as pool:
        for _ in pool.map(work, batches):  # re-raises a batch's error here
            pass
