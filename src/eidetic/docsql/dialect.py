"""How SQLite and PostgreSQL spell what the shared queries over the docs table need.

Both SQL backends keep records in one table of the same columns (``docs`` in a record database,
``eidetic_docs`` on a server); the queries over it are written once, in this package, and a
dialect fills in the few words the two engines say differently: parameter marks, lists of
values, substring tests, case folding, collation, and whether the driver decodes JSON.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..sqlite_db import chunks


class Dialect(ABC):
    """One engine's spelling. Every query names the docs table ``d``."""

    table: str  # the docs table
    mark: str  # a parameter
    path: str  # the record's file (a folder index's relative path), or NULL where records have none
    by_length: str  # what follows ``FROM <table> d`` in a shortest-first walk (an index hint, or nothing)
    no_limit: Any  # LIMIT's parameter that means no limit

    def marks(self, n: int) -> str:
        return ",".join([self.mark] * n)

    @abstractmethod
    def served(self, alias: str = "d") -> str | None:
        """The condition that a row is the copy of its id that is served (None: every row is)."""

    @abstractmethod
    def one_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """``column`` among ``values`` as conditions with their parameters, as many statements
        as the engine needs (none for no values)."""

    @abstractmethod
    def contains(self, haystack: str) -> str:
        """True when the next parameter is a substring of ``haystack``."""

    @abstractmethod
    def lower(self, expr: str) -> str:
        """``expr`` lower-cased, as the engine can."""

    @abstractmethod
    def ordered(self, column: str) -> str:
        """A text column as ids and thread order keys sort: by code point, whatever the locale."""

    @abstractmethod
    def json(self, value: Any) -> Any:
        """A JSON column's value as Python data."""

    @abstractmethod
    def links_hold(self) -> str:
        """The condition (over the docs table, not aliased) that a record's links name the next
        parameter."""

    def text_contains(self, query: str, case_sensitive: bool) -> tuple[str, str]:
        """The condition that a record's text contains ``query``, and its parameter."""
        if case_sensitive:
            return self.contains("d.text"), query
        return self.contains(self.lower("d.text")), query.lower()


def every(*conditions: str | None) -> str:
    """The conditions that are there, joined by AND (TRUE for none)."""
    return " AND ".join(c for c in conditions if c) or "1=1"


class Sqlite(Dialect):
    """The record database of the files and sqlite backends (``index``). SQLite's ``lower``
    folds ASCII only; a query with other letters is folded in Python (``eidetic_icontains``,
    registered on every connection by ``index.schema.connect``)."""

    table = "docs"
    mark = "?"
    path = "d.path"
    by_length = "INDEXED BY docs_len"

    def served(self, alias: str = "d") -> str | None:
        return f"{alias}.winner=1"  # several files may claim one id: one is elected

    def one_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        for chunk in chunks(list(values), 500):  # SQLite limits the parameters of one statement
            yield f"{column} IN ({self.marks(len(chunk))})", chunk

    def contains(self, haystack: str) -> str:
        return f"instr({haystack}, ?)"

    def lower(self, expr: str) -> str:
        return f"lower({expr})"

    def ordered(self, column: str) -> str:
        return column  # BINARY, SQLite's default

    no_limit = -1

    def json(self, value: Any) -> Any:
        return json.loads(value)

    def links_hold(self) -> str:
        # ``links <> '[]'`` as written: the partial index docs_linking holds only records with links
        return "links <> '[]' AND EXISTS (SELECT 1 FROM json_each(links) WHERE json_each.value = ?)"

    def text_contains(self, query: str, case_sensitive: bool) -> tuple[str, str]:
        if case_sensitive or query.isascii():
            return super().text_contains(query, case_sensitive)
        return "eidetic_icontains(d.text, ?)", query


@dataclass(frozen=True)
class Postgres(Dialect):
    """The postgres backend's server. ``collation``: the server's Unicode case mapping (as
    Python's ``str.lower``), where it has one; the database's own otherwise."""

    collation: str | None = None

    table = "eidetic_docs"
    mark = "%s"
    path = "NULL"
    by_length = ""

    def served(self, alias: str = "d") -> str | None:
        return None  # one row per id

    def one_of(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        yield f"{column} = ANY(%s)", [list(values)]

    def contains(self, haystack: str) -> str:
        return f"strpos({haystack}, %s) > 0"

    def lower(self, expr: str) -> str:
        return f'lower({expr} COLLATE "{self.collation}")' if self.collation else f"lower({expr})"

    def ordered(self, column: str) -> str:
        return f'{column} COLLATE "C"'

    no_limit = None

    def json(self, value: Any) -> Any:
        return value  # the session decodes json columns (``connection.Session``)

    def links_hold(self) -> str:
        return "links @> jsonb_build_array(%s::text)"  # the GIN index eidetic_docs_links answers it

    def text_contains(self, query: str, case_sensitive: bool) -> tuple[str, str]:
        """An ASCII text (as many bytes as characters, which ``len`` counts) is lower-cased in the
        C collation: the same letters, at half the cost of the Unicode case mapping (a check of
        every text at 100k records: 857 -> 433 ms). Not without a Unicode collation: a database's
        locale may lower ASCII letters otherwise (Turkish ``I``)."""
        if case_sensitive or not self.collation:
            return super().text_contains(query, case_sensitive)
        lowered = (
            f'CASE WHEN octet_length(d.text) = d.len THEN lower(d.text COLLATE "C") '
            f'ELSE {self.lower("d.text")} COLLATE "C" END'
        )
        return self.contains(lowered), query.lower()


SQLITE = Sqlite()
