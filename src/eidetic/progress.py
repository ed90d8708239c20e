"""Progress of long runs: embedding many texts, reading many record files, indexing a store again.

The code doing the work asks :class:`Progress` for a step counter only when a run is long enough
to leave someone waiting (each site's threshold says how long its unit takes); whoever listens
(the CLI: a bar on a terminal, one plain line elsewhere) decides how to show it. With no
listener (the Python API, the MCP server) nothing is shown and nothing is paid.
"""

from __future__ import annotations

from collections.abc import Callable

Steps = Callable[[int], None]  # done so far; the run is over when it reaches its total


# A run starts: ``what`` is happening to ``total`` ``unit``s (None: not known); returns its steps.
# A listener may also have ``close()``, to finish what it still shows (a run cut short by an error).
Listener = Callable[[str, str, "int | None"], Steps]


def no_steps(done: int) -> None:
    """The step counter of a run no one watches."""


class Progress:
    """Where long runs report; ``listener`` is set by whoever shows them."""

    def __init__(self) -> None:
        self.listener: Listener | None = None

    def start(self, what: str, unit: str, total: int | None) -> Steps:
        return no_steps if self.listener is None else self.listener(what, unit, total)

    def close(self) -> None:
        close = getattr(self.listener, "close", None)
        if close is not None:
            close()
