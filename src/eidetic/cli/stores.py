"""The store a command works on, from the common flags (``main.add_common``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import user_error

if TYPE_CHECKING:
    from ..memory import Memory


def open_memory(args: argparse.Namespace, *, progress: bool = True) -> Memory:
    """``Memory.open`` for ``--memory-dir``, ``--backend``, ``--db``, ``--dsn`` and ``--uri``; long runs
    show their progress on stderr (``cli.progress``) unless ``progress`` is False."""
    from ..memory import Memory  # imported here: the Python API is loaded only by verbs that use it
    from .progress import Bars

    memory = Memory.open(
        args.memory_dir,
        backend=args.backend,
        db=args.db,
        dsn=args.dsn,
        uri=getattr(args, "uri", None),
        settings=args.settings,
    )
    if progress:
        memory.progress.listener = Bars(as_json=getattr(args, "json", False))
    return memory


def check_memory_dirs(args: argparse.Namespace) -> None:
    """Every ``--memory-dir`` names a folder that exists: a mistyped path is an error, not an
    empty store. Verbs that write records (``creates_store``) may name a folder still to come."""
    for given in getattr(args, "memory_dir", None) or ():
        folder = Path(given).expanduser()
        if folder.is_dir() or (getattr(args, "creates_store", False) and not folder.exists()):
            continue
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise user_error(
            f"--memory-dir {given} {problem}",
            "check the path; 'eidetic remember' or 'eidetic import' creates a new store folder",
        )
