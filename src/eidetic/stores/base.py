"""The storage interface every backend implements: ``files``, ``sqlite``, ``postgres`` and ``neo4j``.

``Memory`` decides (validation, duplicates, shadowing, ranking, traversal, usage policy); a
store keeps records and answers narrow questions about them. Each record has a ``doc``: an
integer the store assigns, never reused, that changes whenever the record is rewritten. Search
methods return docs with raw scores, best first, with the caller's scope, lifecycle and filters
already applied inside the store (the no-leak rule lives in ``ranking.access``; both SQL
engines apply it through ``docsql.admission``), so nothing out of scope ever reaches the ranking
code. The interface holds what the layers above call, nothing more.

One contract test suite (``tests/test_contract.py``) runs unchanged against every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..listing import Order
from ..ranking.access import Access
from ..ranking.bm25 import FieldCounts, KeywordStats
from ..ranking.filters import Filters
from ..ranking.windows import Member, Place
from ..records import Record, Scope
from .types import Admitted, FieldsRow, IndexedRecord, Listed, RankingFacts

__all__ = [
    "Admitted",
    "FieldsRow",
    "IndexedRecord",
    "Listed",
    "RankingFacts",
    "RecordStore",
]  # all but RecordStore: from stores.types


class RecordStore(Protocol):
    """What ``Memory`` needs from a backend."""

    backend: str  # its name in stores.backends.BACKENDS
    key: str  # names the store in hits (``store``) and keys its usage; stable across processes
    location: str  # shown to people: a folder, a database file, or a DSN without its password
    # Whether nearest() may run on another thread while keyword() runs on this one (a recall
    # then walks the vector graph while it ranks by keywords). True only where the two run
    # apart for real: on postgres, two server sessions on two cores.
    parallel_nearest: bool

    def exists(self) -> bool:
        """Whether the store holds anything yet (reads never create it)."""

    def sync(self, full: bool = False) -> None:
        """Catch up with changes made outside eidetic (hand-edited files); cheap when none."""

    def broken(self) -> list[tuple[str, str]]:
        """(where, why) of stored items that could not be read as records."""

    def close(self) -> None: ...

    # -- writes ----------------------------------------------------------------------------

    def lock(self) -> AbstractContextManager[Any]:
        """Held while a remember or lifecycle change decides and writes: concurrent writers of
        one store are serialised, so duplicate checks and the writes they guard are one step."""

    def current(self, item: IndexedRecord) -> Record:
        """The record as stored right now (a hand edit may be newer than the index)."""

    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> dict[str, str | None]:
        """Insert or replace records atomically: all of them or none. ``IndexedRecord`` is the
        stored copy being replaced (None for a new id). Called with :meth:`lock` held. Returns
        each written id's file, as :meth:`file_of` names it (None where the store has no
        files): the answer to a remember says where each record lives without reading it back."""

    def delete(self, item: IndexedRecord) -> None:
        """Remove one record for good, with its index entries (``forget --purge``)."""

    def file_of(self, item: IndexedRecord) -> str | None:
        """The record's file, for stores of files (shown by ``fields`` output and ``purge``)."""

    # -- lookups ---------------------------------------------------------------------------

    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]: ...

    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]: ...

    def ranking_facts(self, docs: Sequence[int]) -> dict[int, RankingFacts]:
        """Per doc, its id and clocks: all the blend needs."""

    def texts(self, docs: Sequence[int]) -> dict[int, str]: ...

    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        """Per text hash, the (id, scope) of the records with exactly that text."""

    def by_normalised(self, keys: Iterable[str], access: Access) -> dict[str, list[tuple[int, str, Scope]]]:
        """Per normalised-text key (``records.normal_key``, stored with each record),
        the (doc, id, scope) of the records ``access`` admits whose text has it: the stored
        texts a remember's records repeat, in one lookup."""

    def all_records(self) -> list[IndexedRecord]:
        """Every record, by id."""

    def count(self, access: Access | None = None) -> int:
        """How many records (that ``access`` may see, in any lifecycle it admits)."""

    def admitted(self, access: Access) -> list[Admitted]:
        """Every record ``access`` admits (scope, lifecycle), with its text and dates, by doc:
        what ``consolidate`` groups into near-duplicates."""

    # -- search (scope, lifecycle and filters applied inside) ------------------------------

    def keyword(
        self,
        terms: list[str],
        access: Access,
        filters: Filters,
        limit: int,
        offset: int = 0,
        stats: KeywordStats | None = None,
    ) -> list[tuple[int, float]]:
        """(doc, BM25) of records sharing an analysed term, best first (ties by doc), exactly
        as scoring every admitted record would rank them, under ``stats``: the sum of
        ``keyword_stats`` over every store of the recall (``ranking.bm25``); by default this
        store's own."""

    def keyword_stats(self, terms: list[str], access: Access) -> KeywordStats:
        """This store's share of the BM25 statistics of the partitions ``access`` may read
        (public, and its own private ones; every lifecycle): records, field lengths, and per
        term the records holding it in each field. Another scope's private records never count."""

    def term_counts(self, terms: list[str], access: Access) -> tuple[int, dict[str, int]]:
        """How many records the keyword statistics of ``access``'s partitions count (every
        lifecycle), and how many of them hold each analysed term in any field: the idf of the
        relevance floor (``ranking.relevance``). Another scope's private records never count."""

    def keyword_counts(self, docs: Sequence[int], terms: list[str], access: Access) -> dict[int, FieldCounts]:
        """Each of ``docs`` in ``access``'s partitions: its own per-field counts of ``terms``
        and its field lengths (``ranking.bm25``), to score it with its conversation's context."""

    def thread_places(self, docs: Sequence[int]) -> dict[int, Member]:
        """The docs that are live (active, served) thread members, each with its place:
        (thread, order key, id, doc)."""

    def thread_around(self, places: Sequence[Place], access: Access, span: int) -> list[Member]:
        """The live thread members in ``access``'s partitions up to ``span`` places before and
        after each (thread, order key, id) place (which may be another store's), ordered by
        order key and id: the neighbours from which recall builds conversation context over
        every store (``ranking.windows``)."""

    def admit(self, docs: Sequence[int], access: Access, filters: Filters) -> set[int]:
        """Which of ``docs`` ``access`` and ``filters`` admit (scope, lifecycle, filters)."""

    def first_page(self, top_k: int) -> int:
        """How many ranked candidates to read first for a top-k (later pages double): what the
        engine serves cheaply. tantivy returns 100 as fast as 10; SQL BM25 pays per candidate."""

    def exact(
        self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int, offset: int = 0
    ) -> list[tuple[int, float]]:
        """(doc, min(1, len(query) / len(text))) of texts containing ``query``, shortest first."""

    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        """Records containing any term (lower-cased substring) in name, description or text;
        all admitted records when ``terms`` is empty."""

    def listing(
        self,
        access: Access,
        filters: Filters,
        order: Order,
        limit: int | None,
        offset: int = 0,
        refers_to: str | None = None,
    ) -> tuple[list[Listed], int]:
        """One page of the records ``access`` admits (scope, lifecycle) that pass ``filters``,
        as (doc, id, sort key) in ``order`` (``docsql.listing``: the keys of several stores
        compare as their SQL ordered them), and how many there are in all. ``limit`` None:
        every one. ``refers_to``: only records whose ``links`` or ``supersedes`` name this id."""

    def reach(self, ids: Sequence[str], depth: int) -> dict[str, IndexedRecord] | None:
        """The records within ``depth`` hops of ``ids`` along links and supersedes, walked by
        the store in one question (a graph server runs it as a variable-length match); None
        where the store has no such walk (recall then resolves ids one level at a time). The
        walk ignores scope: recall admits, and stops at, what the caller may see."""

    # -- vectors ---------------------------------------------------------------------------

    def sync_vectors(
        self, model: str, access: Access | None, vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]
    ) -> None:
        """Bring the vectors of ``model`` up to date for what ``access`` may see (everything
        when None). ``vectors_for`` maps (doc, text hash) pairs to float32 vectors by hash."""

    def nearest(self, model: str, query: Any, access: Access, filters: Filters, pool: int) -> dict[int, float]:
        """The ``pool`` admitted docs with the highest cosine to ``query``."""

    def similar(self, model: str, queries: Any, access: Access, threshold: float, pool: int) -> list[dict[int, float]]:
        """For each row of ``queries`` (a float32 matrix of ``model``'s vectors), up to ``pool``
        admitted docs whose cosine to it reaches ``threshold``, best first: a remember's
        near-duplicates by meaning, for a whole batch at once."""

    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        """The cosine of each doc's vector to ``query`` (docs ``access`` may not see, or without
        a vector, are left out)."""

    def vectors_of(self, model: str, access: Access, docs: Sequence[int]) -> Any:
        """The vectors of ``model`` of these docs as one float32 matrix, a row per doc in order;
        a doc without a vector, or out of ``access``'s reach, has a row of zeros (none at all:
        zero columns)."""

    # -- usage (recall_count, last_recall) -------------------------------------------------

    def usage(self, ids: Iterable[str]) -> dict[str, tuple[float, str | None]]: ...

    def max_recall_count(self) -> float:
        """The largest recall_count of any record (0 when none was recalled): it bounds how
        much the freshness blend can lift a score, so top-k reads stop early."""

    def bump_usage(self, amounts: dict[str, float], when: str) -> None:
        """Atomically add to each id's recall_count and set last_recall: no lost increments."""

    def set_usage(self, rid: str, recall_count: float, last_recall: str | None) -> None: ...

    def forget_usage(self, rid: str) -> None: ...

    # -- maintenance -----------------------------------------------------------------------

    def status(self, verify: bool = True) -> dict[str, Any]:
        """``store``, ``backend``, ``index``, ``records``, ``current``, ``unparseable``,
        ``conflicts``, ``vectors`` (see ``eidetic index``). ``verify``: check for changes made
        outside eidetic (a caller that has just run a full sync knows there are none)."""

    def rebuild(self) -> dict[str, Any]:
        """Rebuild what is derived (never the records themselves)."""
