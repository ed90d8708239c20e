"""The full-text index (tantivy), next to the SQLite index it is derived from.

Keyword recall: BM25 over stemmed terms of name (weight 1), description (1), context (2: the
record's text, with its conversation neighbours' for a thread member, see ``context``) and text
(1: a thread member's own text again).
Why tantivy and not SQLite FTS5: FTS5 scores every record that shares a query term before it
can sort, which took ~100 ms per query at 100k records here; tantivy's block-max WAND reads
only what can still enter the top k (~1 ms, ``docs/benchmarks.md``). Its BM25 is the usual
one (as in Lucene): k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)), never negative.

Exact recall: every text is also indexed as consecutive lower-cased 3-character chunks with
positions (``chunks``). An occurrence of a query starts 0, 1 or 2 characters into a chunk;
for each of the three cases the query's whole chunks form a phrase that every record
containing the query must have, so the union of three phrase queries finds them all (the
1-2 characters at either edge are then checked in SQLite). Results come out shortest text
first (a fast field), which is exact mode's ranking. Three streams of chunks (one per offset)
would need no edge check but cost 4x the indexing time; SQLite's trigram FTS5 index took
20-300 ms per query at 100k records.

There is one such index per visibility partition (public, and each scope's private records),
so BM25 statistics never mix what a caller may see with what it may not (``partition_of``).
Each holds only terms, each record's ``doc`` number and text length; everything else stays in
SQLite. The record database (``database``) keeps the two consistent: for a files store a
crash between them leaves a "pending" mark that makes the next user rebuild this index from
SQLite (``stores.folder_index``); for the sqlite backend the indexes' ``state.json`` says which
database, and which point of its change history, they reflect, and they catch up from there
(``store_database``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .analyzer import ANALYZER_NAME, text_analyzer

# Field weights, chosen on the public data (``benchmarks/tune.py``, table in docs/benchmarks.md).
# ``context`` holds a record's text, and for a thread member its neighbours' text too (a chat
# turn is found by the words around it: LoCoMo hybrid recall@10 0.66 -> 0.73); ``text`` holds a
# thread member's own text once more, so its own words weigh more than its neighbours'. A record
# outside a thread is indexed once, in ``context`` (ingest cost), which scores exactly as before.
# Titles weighted as much as the body over-ranked title matches on SciFact.
FIELDS = (("name", 1.0), ("description", 1.0), ("text", 1.0), ("context", 2.0))
CHUNK_FIELD = "chunks"
CHUNKER_NAME = "eidetic_chunk3"
MIN_CHUNKED_QUERY = 5  # shorter queries have an alignment with no whole chunk to look up
WRITER_HEAP = 128 * 1024 * 1024
STATE = "state.json"


def aligned_chunks(query: str) -> list[list[str]]:
    """The three ways a query's whole chunks can line up with a text's chunks.

    Text chunks start at multiples of 3. If an occurrence starts at offset p, the first text
    chunk wholly inside it starts ``shift`` = (-p) mod 3 characters into the query, and from
    there the query's chunks are the text's. One list per shift 0, 1, 2.
    """
    lowered = query.lower()
    return [[lowered[i : i + 3] for i in range(shift, len(lowered) - 2, 3)] for shift in range(3)]


class TextIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._meta_file = str(path / "meta.json")  # checked on every recall: no Path arithmetic
        self._index: Any = None
        self._schema: Any = None
        self._writer: Any = None

    def _open(self) -> Any:
        if self._index is None:
            import tantivy

            builder = tantivy.SchemaBuilder()
            builder.add_integer_field("doc", stored=False, indexed=True, fast=True)
            builder.add_integer_field("len", stored=False, indexed=False, fast=True)
            for field, _ in FIELDS:
                builder.add_text_field(field, tokenizer_name=ANALYZER_NAME, index_option="freq")
            builder.add_text_field(CHUNK_FIELD, tokenizer_name=CHUNKER_NAME, index_option="position")
            self._schema = builder.build()
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                index = tantivy.Index(self._schema, path=str(self.path))
            except ValueError:  # unreadable or from another schema: derived data, start over
                shutil.rmtree(self.path, ignore_errors=True)
                self.path.mkdir(parents=True, exist_ok=True)
                index = tantivy.Index(self._schema, path=str(self.path))
            index.register_tokenizer(ANALYZER_NAME, text_analyzer())
            index.register_tokenizer(
                CHUNKER_NAME,
                tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"(?s).{1,3}"))
                .filter(tantivy.Filter.lowercase())
                .build(),
            )
            self._index = index
        return self._index

    def exists(self) -> bool:
        return os.path.exists(self._meta_file)

    # -- writing (the caller holds the index write lock) ---------------------------------

    def _writer_(self) -> Any:
        if self._writer is None:
            self._writer = self._open().writer(heap_size=WRITER_HEAP, num_threads=2)
        return self._writer

    def add(self, rows: Iterable[tuple[int, str | None, str | None, str, str]]) -> None:
        import tantivy

        writer = self._writer_()
        for doc, name, description, text, context in rows:
            document = tantivy.Document()
            document.add_integer("doc", doc)
            document.add_integer("len", len(text))
            document.add_text(CHUNK_FIELD, text)
            if name:
                document.add_text("name", name)
            if description:
                document.add_text("description", description)
            if context != text:  # a thread member: its own words again, apart from the window
                document.add_text("text", text)
            document.add_text("context", context)
            writer.add_document(document)

    def delete(self, docs: Iterable[int]) -> None:
        writer = self._writer_()
        for doc in docs:
            writer.delete_documents_by_term("doc", doc)

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()  # finish merges before the process may exit
            self._writer = None
            self._index.reload()

    def rollback(self) -> None:
        if self._writer is not None:
            try:
                self._writer.rollback()
            finally:
                self._writer = None

    def drop(self) -> None:
        self._index = None
        self._writer = None
        shutil.rmtree(self.path, ignore_errors=True)

    # -- reading -------------------------------------------------------------------------

    def search(self, terms: list[str], limit: int, offset: int = 0) -> list[tuple[int, float]]:
        """(doc, BM25) of the best records sharing any of ``terms``, best first."""
        if not terms:
            return []
        import tantivy

        index = self._open()
        index.reload()
        searcher = index.searcher()
        clauses = [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(tantivy.Query.term_query(self._schema, field, term), weight),
            )
            for term in terms
            for field, weight in FIELDS
        ]
        limit = min(limit, searcher.num_docs)  # tantivy allocates for the limit: never beyond the store
        if limit <= 0:
            return []
        result = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False, offset=offset)
        hits = result.hits
        docs = searcher.fast_field_values("doc", [address for _, address in hits])
        return [(doc, score) for (score, _), doc in zip(hits, docs) if doc is not None]

    def term_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """How many records this index holds, and how many of them hold each term in any field."""
        import tantivy

        index = self._open()
        index.reload()
        searcher = index.searcher()
        holding: dict[str, int] = {}
        for term in terms if searcher.num_docs else ():
            clauses = [
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, field, term)) for field, _ in FIELDS
            ]
            holding[term] = searcher.search(tantivy.Query.boolean_query(clauses), 1, count=True).count or 0
        return searcher.num_docs, holding

    def shortest_containing(self, query: str, limit: int, offset: int = 0) -> list[tuple[int, int]]:
        """(doc, text length) of records that may contain ``query`` (``MIN_CHUNKED_QUERY``+
        characters), shortest first. Every record containing it is among them; the caller
        checks the edges and case."""
        import tantivy

        index = self._open()
        index.reload()
        searcher = index.searcher()
        clauses = [
            (
                tantivy.Occur.Should,
                tantivy.Query.phrase_query(self._schema, CHUNK_FIELD, list[str | tuple[int, str]](parts))
                if len(parts) > 1
                else tantivy.Query.term_query(self._schema, CHUNK_FIELD, parts[0]),
            )
            for parts in aligned_chunks(query)
        ]
        limit = min(limit, searcher.num_docs)  # tantivy allocates for the limit: never beyond the store
        if limit <= 0:
            return []
        result = searcher.search(
            tantivy.Query.boolean_query(clauses),
            limit,
            count=False,
            order_by_field="len",
            offset=offset,
            order=tantivy.Order.Asc,
        )
        addresses = [address for _, address in result.hits]
        docs = searcher.fast_field_values("doc", addresses)
        lengths = searcher.fast_field_values("len", addresses)
        return [(doc, length) for doc, length in zip(docs, lengths) if doc is not None]


def partitions_in_reach(scope: Any) -> list[str]:
    """The partitions a caller of ``scope`` (a :class:`~eidetic.records.Scope`) may search: the
    public one, and its own private one when it asks as private. Every backend's search uses it."""
    keys = ["public"]
    if scope.visibility == "private":
        keys.append(partition_of("private", scope.name))
    return keys


def partition_of(visibility: str, scope_name: str) -> str:
    """Which text index holds a record: all public records share one; each scope's private
    records have their own. BM25 statistics (document frequencies, lengths) are per index, so
    a caller's scores depend only on records it may see: another scope's private records cannot
    shift them, not even in the order of public hits."""
    return "public" if visibility == "public" else f"private:{scope_name}"


class TextIndexes:
    """The text indexes of one store, one per partition, in subfolders of ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._open: dict[str, TextIndex] = {}
        self.dirty: set[str] = set()
        self._state_file = str(root / STATE)
        self._state: dict[str, Any] | None = None
        self._stamp: tuple[int, int, int] | None = None

    def get(self, key: str) -> TextIndex:
        index = self._open.get(key)
        if index is None:
            import hashlib

            folder = self.root / hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
            index = self._open[key] = TextIndex(folder)
        return index

    def add(self, key: str, rows: list[tuple[int, str | None, str | None, str, str]]) -> None:
        self.get(key).add(rows)
        self.dirty.add(key)

    def delete(self, key: str, doc: int) -> None:
        self.get(key).delete([doc])
        self.dirty.add(key)

    def commit(self) -> None:
        for key in sorted(self.dirty):
            self.get(key).commit()
        self.dirty.clear()

    def rollback(self) -> None:
        for key in self.dirty:
            self.get(key).rollback()
        self.dirty.clear()

    def drop(self) -> None:
        for index in self._open.values():
            index.drop()
        self._open.clear()
        self.dirty.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        self._state = self._stamp = None

    def create(self, keys: Iterable[str]) -> None:
        """Open these partitions' indexes, creating empty ones: a partition whose records are
        all gone keeps an index, so it is never taken for a lost one."""
        for key in keys:
            self.get(key)._open()

    def state(self) -> dict[str, Any] | None:
        """What the indexes reflect, as the store index last recorded it after a commit (None:
        unknown). Read again only when another process replaced the file."""
        try:
            st = os.stat(self._state_file)
        except FileNotFoundError:
            self._state = self._stamp = None
            return None
        stamp = (st.st_mtime_ns, st.st_ino, st.st_size)
        if stamp != self._stamp:
            try:
                with open(self._state_file, encoding="utf-8") as handle:
                    state = json.load(handle)
            except (OSError, ValueError):
                state = None  # derived data: an unreadable state means "unknown", and a rebuild
            self._state, self._stamp = state if isinstance(state, dict) else None, stamp
        return self._state

    def write_state(self, state: dict[str, Any]) -> None:
        """Record what the indexes reflect, atomically: call it after they are committed, so a
        crash in between leaves the older state, from which catching up again is harmless."""
        self.root.mkdir(parents=True, exist_ok=True)
        temporary = self.root / f".{STATE}.{os.getpid()}"
        temporary.write_text(json.dumps(state))
        os.replace(temporary, self._state_file)

    def exists(self, key: str) -> bool:
        return self.get(key).exists()

    def search(self, keys: list[str], terms: list[str], limit: int) -> list[tuple[int, float]]:
        merged = [hit for key in keys if self.exists(key) for hit in self.get(key).search(terms, limit)]
        merged.sort(key=lambda hit: -hit[1])
        return merged[:limit]

    def term_counts(self, keys: list[str], terms: list[str]) -> tuple[int, dict[str, int]]:
        """Records in these partitions, and how many of them hold each term (any field)."""
        records, holding = 0, dict.fromkeys(terms, 0)
        for key in keys:
            if self.exists(key):
                count, found = self.get(key).term_counts(terms)
                records += count
                for term, n in found.items():
                    holding[term] += n
        return records, holding

    def shortest_containing(self, keys: list[str], query: str, limit: int) -> list[tuple[int, int]]:
        merged = [hit for key in keys if self.exists(key) for hit in self.get(key).shortest_containing(query, limit)]
        merged.sort(key=lambda hit: hit[1])
        return merged[:limit]
