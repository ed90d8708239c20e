"""Query terms' top postings kept between keyword searches of one long-running process.

Reading a common term's top postings (``keyword._Threshold``) is most of a keyword search's
time on a large store, and the common terms are the ones queries repeat: a server (``eidetic
serve``, ``eidetic mcp``, the hooks' daemon) asks for the same few hundred terms again and again.
A term's postings are kept under everything that could change them, read in the same statement
as the term's statistics (one snapshot): its partition's record count, field lengths and
impact references (re-anchoring rewrites impacts), its document frequencies, and the largest
doc number in the store (every written record takes a new one, so an edit that keeps a term's
counts still changes the key). A write by any process that changes a term's postings moves that
term's key, so a kept list is not read after the postings it copies have changed: it is never
asked for again, and the least recently used lists make room within ``BUDGET`` bytes. Admission
(scope, lifecycle, filters) is read afresh by every search, whatever the postings came from.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

BUDGET = 48 << 20  # bytes of postings kept: ~150 common terms read 16,000 deep (20 bytes a posting)


class PostingCache:
    """Least recently used posting lists, by key, within a byte budget."""

    def __init__(self, budget: int = BUDGET) -> None:
        self.budget = budget
        self._lists: OrderedDict[Hashable, Any] = OrderedDict()
        self._bytes = 0

    def get(self, key: Hashable) -> Any | None:
        found = self._lists.get(key)
        if found is not None:
            self._lists.move_to_end(key)
        return found

    def put(self, key: Hashable, postings: Any) -> None:
        """Keep ``postings`` (a NumPy array) under ``key``, dropping the least recently used
        lists while over budget; a list larger than the budget is not kept."""
        if postings.nbytes > self.budget or key in self._lists:
            return
        self._lists[key] = postings
        self._bytes += postings.nbytes
        while self._bytes > self.budget:
            _, dropped = self._lists.popitem(last=False)
            self._bytes -= dropped.nbytes
