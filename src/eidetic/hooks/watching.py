"""The hook daemon's view of record files changed outside eidetic, from the operating system's
file events (``watchfiles``, as ``eidetic watch``): a thread per store folder collects what
changed, and the daemon marks those files for re-reading before its next request
(``respond.Engine``). So the daemon's recalls need no per-recall stat slice
(``stores.files.folder_changes``) to see a file edited in place.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class Watcher:
    """Changed files per watched folder, gathered on background threads until taken."""

    def __init__(self) -> None:
        self._changed: dict[str, set[str]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.failures: list[str] = []  # for the daemon's log

    def follow(self, root: Path) -> None:
        """Watch ``root`` (an existing folder) from now on, unless it is watched already."""
        key = os.path.realpath(root)
        if key not in self._threads:
            self._threads[key] = threading.Thread(target=self._watch, args=(key,), name=f"watch {key}", daemon=True)
            self._threads[key].start()

    def take(self, root: Path) -> list[str]:
        """The files under ``root`` changed since the last take ('/'-separated, relative)."""
        with self._lock:
            return sorted(self._changed.pop(os.path.realpath(root), ()))

    def stop(self) -> None:
        self._stop.set()

    def _watch(self, root: str) -> None:
        import watchfiles

        try:
            for changes in watchfiles.watch(
                root, watch_filter=None, debounce=40, step=10, stop_event=self._stop, rust_timeout=500
            ):
                found = [
                    path[len(root) + 1 :].replace(os.sep, "/") for _, path in changes if path.startswith(root + os.sep)
                ]
                with self._lock:
                    self._changed.setdefault(root, set()).update(found)
        except Exception as exc:  # noqa: BLE001 - without events, the slice checked between requests still finds edits
            with self._lock:
                self.failures.append(f"watching {root} stopped: {exc!r}")
