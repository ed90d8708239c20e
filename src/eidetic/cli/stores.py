"""The store a command works on, from the common flags (``main.add_common``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..memory import Memory


def open_memory(args: argparse.Namespace) -> "Memory":
    """``Memory.open`` for ``--memory-dir``, ``--backend``, ``--db`` and ``--dsn``."""
    from ..memory import Memory  # imported here: the Python API is loaded only by verbs that use it

    return Memory.open(args.memory_dir, backend=args.backend, db=args.db, dsn=args.dsn, settings=args.settings)
