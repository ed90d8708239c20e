"""Long runs on stderr: a tqdm bar when stderr is a terminal, else one plain line per run (no
carriage returns or escape codes in a log), or with ``--json`` one ``{"progress", "total"}``
object. Results stay on stdout, untouched."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..progress import Steps, no_steps


class Bars:
    """The CLI's :class:`eidetic.progress.Listener`."""

    def __init__(self, as_json: bool = False) -> None:
        self.as_json = as_json
        self.terminal = sys.stderr.isatty() and not as_json
        self._open: list[Any] = []

    def __call__(self, what: str, unit: str, total: int | None) -> Steps:
        if not self.terminal:
            if total is not None:  # a run of unknown length (an import) says nothing in a log
                line = json.dumps({"progress": what, "total": total}) if self.as_json else f"{what} ..."
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            return no_steps
        from tqdm import tqdm  # imported here: only long runs on a terminal pay for it

        bar = tqdm(total=total, unit=unit, desc=what, file=sys.stderr, dynamic_ncols=True)
        self._open.append(bar)

        def step(done: int) -> None:
            bar.update(done - bar.n)
            if total is not None and done >= total:
                self._finish(bar)

        return step

    def _finish(self, bar: Any) -> None:
        bar.close()
        if bar in self._open:
            self._open.remove(bar)

    def close(self) -> None:
        for bar in list(self._open):
            self._finish(bar)
