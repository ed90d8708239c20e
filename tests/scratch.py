"""Where the suite's temporary folders live: in memory (``/dev/shm``) where the machine has a
large enough one, else the system's temporary folder.

A run creates ~1.5 GB in ~50,000 files (stores, indexes, servers' data), most of them fsynced
by the code under test; on this machine's disk that, and pytest deleting earlier runs' folders
(up to 26 s at the end of a run), was a fifth of the suite's time. The code does the same
calls on either; durability across a power cut is not what a test can check anyway.
``--basetemp`` given on the command line wins.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from eidetic.stores.files.folder import _alive  # the staging folders' check: is a pid running

MEMORY = Path("/dev/shm")
LEAST_FREE = 4 << 30  # bytes: a run's folders, with room for a second run at once


def memory_folder() -> Path | None:
    """``/dev/shm`` if it is a writable folder with ``LEAST_FREE`` bytes free, else None."""
    try:
        usable = MEMORY.is_dir() and os.access(MEMORY, os.W_OK | os.X_OK)
        return MEMORY if usable and shutil.disk_usage(MEMORY).free >= LEAST_FREE else None
    except OSError:
        return None


def temporary_root() -> str | None:
    """The folder to make servers' temporary folders in (``dir=`` of ``tempfile.mkdtemp``)."""
    found = memory_folder()
    return str(found) if found else None


def run_folder() -> Path | None:
    """A fresh folder for this run's ``basetemp`` in memory (None: pytest's default). Folders
    that runs no longer alive left behind (a failed run keeps its own, for a look) are removed."""
    found = memory_folder()
    if found is None:
        return None
    root = found / f"eidetic-tests-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    for old in root.glob("run-*"):
        pid = old.name.removeprefix("run-").split("-", 1)[0]
        if not (pid.isdigit() and _alive(int(pid))):
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=root))
