"""The SQL both SQL backends run over their docs table, written once: the record database of the
files and sqlite backends (``index``) and the postgres backend's server (``stores.postgres``).

A :class:`~.dialect.Dialect` spells what the engines say differently. Here: who may see what
(``admission``), reading records back (``rows``), lookups by id, doc or hash (``lookups``), the
searches SQL answers alone, exact substrings and ``fields`` candidates (``searches``), and
conversation-thread neighbours (``threads``). What differs for real stays with each backend:
the keyword index (tantivy, or postings in SQL) and the vectors (memory-mapped, or pgvector).
"""

from __future__ import annotations

from typing import Any, Protocol

from .dialect import Dialect


class Source(Protocol):
    """Where the docs table is: an open connection (opened on first use) and its dialect."""

    @property
    def conn(self) -> Any: ...

    @property
    def dialect(self) -> Dialect: ...
