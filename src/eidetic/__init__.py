"""eidetic: a memory store for AI agents and their teams.

>>> from eidetic import Memory
>>> memory = Memory.open()                       # doctest: +SKIP
"""

from __future__ import annotations

import os
from importlib import import_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING (mypy reads it so), without importing typing

__version__ = "0.1.0"

# One BLAS thread unless the user says otherwise (see embed/local.py). This must happen before
# anything imports NumPy, and only a setting left unset is filled in.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

# The public names and the module each lives in. They are loaded on first use (PEP 562), so a
# command that needs none of them (``eidetic --help``, a hook's client) starts without them.
_EXPORTS = {
    "Memory": "memory",
    "RecallQuery": "query",
    "MODES": "query",
    "ListQuery": "listing",
    "Access": "ranking.access",
    "Record": "records",
    "Scope": "records",
    "EideticError": "errors",
    **dict.fromkeys(
        (
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
        ),
        "results",
    ),
}
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

if TYPE_CHECKING:
    from typing import Any

    from .errors import EideticError
    from .listing import ListQuery
    from .memory import Memory
    from .query import MODES, RecallQuery
    from .ranking.access import Access
    from .records import Record, Scope
    from .results import (
        Check,
        DoctorReport,
        Hit,
        ListedRecord,
        ListResult,
        RecallResult,
        RecordView,
        RememberResult,
        StoreOverview,
        SweepReport,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'eidetic' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
