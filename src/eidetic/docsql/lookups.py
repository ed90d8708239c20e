"""Reading records and facts about them from the docs table, by id, doc number or text hash."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..ranking.access import Access
from ..records import Scope
from ..stores.types import Admitted, IndexedRecord, RankingFacts
from . import Source
from .admission import scope_sql
from .dialect import every
from .rows import doc_columns, indexed


class Lookups:
    """The lookups of :class:`~eidetic.stores.base.RecordStore`, over one docs table."""

    def __init__(self, source: Source) -> None:
        self._source = source

    def _select(self, columns: str, column: str, values: Iterable[Any], served: bool = True) -> list[Any]:
        """Rows of ``columns`` whose ``column`` is among ``values`` (of served copies only, unless not ``served``)."""
        dialect, conn = self._source.dialect, self._source.conn
        rows: list[Any] = []
        for condition, params in dialect.one_of(column, list(dict.fromkeys(values))):
            where = every(dialect.served() if served else None, condition)
            rows += conn.execute(f"SELECT {columns} FROM {dialect.table} d WHERE {where}", params).fetchall()
        return rows

    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        dialect = self._source.dialect
        found = (indexed(dialect, row) for row in self._select(doc_columns(dialect), "d.id", ids))
        return {item.record.id: item for item in found}

    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        dialect = self._source.dialect
        found = (indexed(dialect, row) for row in self._select(doc_columns(dialect), "d.doc", docs, served=False))
        return {item.doc: item for item in found}

    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        return dict(self._select("d.doc, d.text", "d.doc", docs, served=False))

    def ranking_facts(self, docs: Sequence[int]) -> dict[int, RankingFacts]:
        """Per doc, all the blend needs, without loading texts and metadata."""
        columns = "d.doc, d.id, d.created, d.occurred, d.valid_from, d.valid_until"
        return {row[0]: RankingFacts(*row[1:]) for row in self._select(columns, "d.doc", docs, False)}

    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        """For each text hash, the (id, scope) of the records that have that exact text."""
        result: dict[str, list[tuple[str, Scope]]] = {}
        for h, rid, scope, visibility in self._select("d.hash, d.id, d.scope, d.visibility", "d.hash", hashes):
            result.setdefault(h, []).append((rid, Scope(scope, visibility)))
        return result

    def by_normalised(self, keys: Iterable[str], access: Access) -> dict[str, list[tuple[int, str, Scope]]]:
        """Per normalised-text key (``records.normal_key``), the (doc, id, scope) of the
        served records ``access`` admits (scope rule and lifecycles, in SQL) whose text has it."""
        dialect, conn = self._source.dialect, self._source.conn
        scope, scope_params = scope_sql(dialect, access)
        result: dict[str, list[tuple[int, str, Scope]]] = {}
        for condition, params in dialect.one_of("d.norm", list(dict.fromkeys(keys))):
            rows = conn.execute(
                f"SELECT d.norm, d.doc, d.id, d.scope, d.visibility FROM {dialect.table} d "
                f"WHERE {every(dialect.served(), condition, scope)}",
                [*params, *scope_params],
            )
            for key, doc, rid, name, visibility in rows:
                result.setdefault(key, []).append((doc, rid, Scope(name, visibility)))
        return result

    def all_records(self) -> list[IndexedRecord]:
        """Every served record, by id."""
        dialect = self._source.dialect
        rows = self._source.conn.execute(
            f"SELECT {doc_columns(dialect)} FROM {dialect.table} d WHERE {every(dialect.served())} "
            f"ORDER BY {dialect.ordered('d.id')}"
        )
        return [indexed(dialect, row) for row in rows]

    def count(self, access: Access | None = None) -> int:
        """Served records (that ``access`` may see, in the lifecycles it admits)."""
        dialect = self._source.dialect
        scope, params = scope_sql(dialect, access) if access is not None else (None, [])
        where = every(dialect.served(), scope)
        return self._source.conn.execute(f"SELECT count(*) FROM {dialect.table} d WHERE {where}", params).fetchone()[0]

    def admitted(self, access: Access) -> list[Admitted]:
        """Every served record ``access`` admits (scope rule and lifecycles), by doc."""
        dialect = self._source.dialect
        scope, params = scope_sql(dialect, access)
        rows = self._source.conn.execute(
            f"SELECT d.doc, d.id, d.scope, d.visibility, d.text, d.created, d.updated FROM {dialect.table} d "
            f"WHERE {every(dialect.served(), scope)} ORDER BY d.doc",
            params,
        )
        return [
            Admitted(doc, rid, Scope(name, vis), text, created, updated)
            for doc, rid, name, vis, text, created, updated in rows
        ]
