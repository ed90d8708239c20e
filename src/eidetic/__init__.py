"""eidetic: a memory store for AI agents and their teams.

>>> from eidetic import Memory
>>> memory = Memory.open()                       # doctest: +SKIP
"""

from __future__ import annotations

import os

__version__ = "0.1.0"

# One BLAS thread unless the user says otherwise (see embed/local.py). This must happen before
# anything imports NumPy, and only a setting left unset is filled in.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from .errors import EideticError  # noqa: E402
from .listing import ListQuery  # noqa: E402
from .query import MODES, RecallQuery  # noqa: E402
from .ranking.access import Access  # noqa: E402
from .records import Record, Scope  # noqa: E402
from .results import (
    Check,
    DoctorReport,
    Hit,
    ListedRecord,
    ListResult,
    RecallResult,
    RecordView,
    RememberResult,  # noqa: E402
    StoreOverview,
    SweepReport,
)

__all__ = [
    "Memory",
    "RecallQuery",
    "ListQuery",
    "MODES",
    "Access",
    "Record",
    "Scope",
    "Hit",
    "RecallResult",
    "ListResult",
    "ListedRecord",
    "RecordView",
    "RememberResult",
    "SweepReport",
    "DoctorReport",
    "Check",
    "StoreOverview",
    "EideticError",
    "__version__",
]


def __getattr__(name: str):
    # Memory pulls in the index and SQLite; load it on first use so `eidetic --help` stays fast.
    if name == "Memory":
        from .memory import Memory

        return Memory
    raise AttributeError(name)
