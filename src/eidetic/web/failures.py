"""Wrong tokens, told on stderr: the client's address, the path and how many, never the token.
The first from an address is told at once, then at most one line per address every ``EVERY``
seconds with the count since, so a flood of guesses does not flood the log."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

EVERY = 60.0  # seconds between two lines about one address
KEPT = 10_000  # addresses remembered; the oldest are forgotten beyond that


class Failures:
    def __init__(self, write: Callable[[str], object] = sys.stderr.write) -> None:
        self._write = write
        self._seen: dict[str, tuple[int, float]] = {}  # address: (failures not yet told, when last told)

    def failed(self, client: str, path: str) -> None:
        now = time.monotonic()
        count, told = self._seen.pop(client, (0, -EVERY))
        count += 1
        if now - told >= EVERY:
            printable = "".join(ch if ch.isprintable() else "?" for ch in path)[:200]
            self._write(f"eidetic serve: {count} request(s) with a wrong token from {client} (last: {printable})\n")
            count, told = 0, now
        self._seen[client] = (count, told)
        if len(self._seen) > KEPT:
            del self._seen[next(iter(self._seen))]
