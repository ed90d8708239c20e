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

TOKENS = 4096  # padded tokens per batch: large products, activations of a few MB


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def plan(lengths: Sequence[int], workers: int, tokens: int = TOKENS) -> list[list[int]]:
    """The indices of texts of these token ``lengths``, in batches of like lengths, each at
    most about ``tokens`` padded tokens, and (when there are enough) a multiple of ``workers``
    of them with equal shares of the tokens, so no core waits for another at the end."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    if not order:
        return []
    count, size = 1, 0
    for index in order:  # as many batches as the budget needs (the text is the longest yet)
        if (size + 1) * lengths[index] > tokens and size:
            count, size = count + 1, 0
        size += 1
    count = min(len(order), -(-count // workers) * workers)
    total = max(1, sum(lengths))
    batches: list[list[int]] = [[] for _ in range(count)]
    done = 0
    for index in order:
        batches[min(count - 1, done * count // total)].append(index)
        done += lengths[index]
    return [batch for batch in batches if batch]


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
