"""The full-text index (tantivy), next to the SQLite index it is derived from.

Keyword recall: BM25 over stemmed terms of name (weight 1), description (1), context (2) and
text (1), each record indexed with its own words only: ``context`` holds its text, and ``text``
holds it again for a thread member, whose context field recall fills at query time with its
conversation neighbours' words from every store and partition the caller may read
(``ranking.windows``). So no entry depends on another record, or on where a record lives.
Why tantivy and not SQLite FTS5: FTS5 scores every record that shares a query term before it
can sort, which took ~100 ms per query at 100k records here; tantivy's block-max WAND reads
only what can still enter the top k (~1 ms, ``docs/benchmarks.md``). Its BM25 is the usual
one (as in Lucene): k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5)), never negative.

Exact recall: every text is also indexed as consecutive lower-cased 3-character chunks with
positions (``chunks``), given to tantivy as one line with a space after each chunk
(``chunk_line``). An occurrence of a query starts 0, 1 or 2 characters into a chunk;
for each of the three cases the query's whole chunks form a phrase that every record
containing the query must have, so the union of three phrase queries finds them all (the
1-2 characters at either edge are then checked in SQLite). Results come out shortest text
first (a fast field), which is exact mode's ranking. Three streams of chunks (one per offset)
would need no edge check but cost 4x the indexing time; SQLite's trigram FTS5 index took
20-300 ms per query at 100k records.

There is one such index per visibility partition (public, and each scope's private records),
so the statistics of what a caller may see are read apart from what it may not
(``ranking.access.partition_of``). Keyword scores are BM25 under the statistics of every partition the caller
may read over every store of the recall (``ranking.bm25``): tantivy ranks under its own
averages, so each record also keeps its per-field terms (``terms``, stored) and lengths
(fast fields), from which its score under the union is computed (``ranked``). Each index
holds only terms, those stored terms, each record's ``doc`` number and text length; everything else
stays in SQLite. The record database (``database``) keeps the two consistent: for a files store a
crash between them leaves a "pending" mark that makes the next user rebuild this index from
SQLite (``stores.files.folder_index``); for the sqlite backend the indexes' ``state.json`` says which
database, and which point of its change history, they reflect, and they catch up from there
(``store_database``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from array import array
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..ranking.bm25 import FIELD_NAMES, FIELDS, FieldCounts, KeywordStats, Scorer, growth
from .term_lines import Row, term_lines

# the keyword fields' tokenizer: their terms come analysed (``term_lines.field_lines``)
TERMS_TOKENIZER = "eidetic_terms"
CHUNK_FIELD = "chunks"
CHUNKER_NAME = "eidetic_chunk3"
# In a chunk line, the characters tantivy's whitespace tokenizer splits at (ASCII whitespace)
# stand for one character it keeps, in texts and queries alike: a text holding that character
# where a query has a space is one more candidate, which the caller's check turns away.
_GAPS, _STAND_IN = "\t\n\x0c\r ", "\x1f"
CHUNK_GAPS = str.maketrans(dict.fromkeys(_GAPS, _STAND_IN))
_CHUNK_GAPS_ASCII = bytes.maketrans(_GAPS.encode(), _STAND_IN.encode() * len(_GAPS))  # for an ASCII text's bytes
_UCS4 = "I" if array("I").itemsize == 4 else "L"  # an array item per character of a UTF-32 text
MIN_CHUNKED_QUERY = 5  # shorter queries have an alignment with no whole chunk to look up
WRITER_HEAP = 128 * 1024 * 1024
STATE = "state.json"
TERMS_FIELD = "terms"  # a record's per-field terms, stored (``term_lines.field_lines``)
LENGTH_FIELDS = tuple(f"tokens_{field}" for field, _ in FIELDS)  # its field lengths in terms
# Part of each index's folder name: a change of the index's schema gives new folders, which the
# record database finds missing and fills again (``store_database``, ``derived``).
LAYOUT = "6"
# tantivy scores in float32: a bound derived from its scores is loosened by this much.
FLOAT32_SLACK = 1 + 1e-5


def aligned_chunks(query: str) -> list[list[str]]:
    """The three ways a query's whole chunks can line up with a text's chunks.

    Text chunks start at multiples of 3. If an occurrence starts at offset p, the first text
    chunk wholly inside it starts ``shift`` = (-p) mod 3 characters into the query, and from
    there the query's chunks are the text's. One list per shift 0, 1, 2.
    """
    lowered = query.lower().translate(CHUNK_GAPS)
    return [[lowered[i : i + 3] for i in range(shift, len(lowered) - 2, 3)] for shift in range(3)]


def chunk_line(text: str) -> str:
    """``text`` as its chunks, each followed by a space (``"abcdefg"`` -> ``"abc def g   "``), its
    own whitespace first made ``CHUNK_GAPS``' stand-in: what tantivy's whitespace tokenizer splits
    into the chunks. Tantivy's regular-expression tokenizer (``(?s).{1,3}``) gave the same chunks
    at ~45 us a record, the largest part of a bulk remember's indexing; this takes a few
    (docs/benchmarks.md). The three interleaved slice copies run in C, with no string per chunk."""
    count = (len(text) + 2) // 3
    padding = 3 * count - len(text)
    if text.isascii():
        source = text.encode("ascii").translate(_CHUNK_GAPS_ASCII) + b"  "[:padding]
        line = bytearray(b" ") * (4 * count)
        for offset in range(3):
            line[offset::4] = source[offset::3]
        return line.decode("ascii")
    wide = array(_UCS4, (text.translate(CHUNK_GAPS) + "  "[:padding]).encode("utf-32-le"))  # an item a character
    spaced = array(_UCS4, [32]) * (4 * count)
    for offset in range(3):
        spaced[offset::4] = wide[offset::3]
    return spaced.tobytes().decode("utf-32-le")


class TextIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._meta_file = str(path / "meta.json")  # checked on every recall: no Path arithmetic
        self._index: Any = None
        self._schema: Any = None
        self._writer: Any = None
        # (meta.json's stamp, records, field lengths): what changes only with a commit
        self._totals: tuple[tuple[int, int, int], int, tuple[int, ...]] | None = None
        # the last query's statistics, by (meta.json's stamp, terms): a keyword recall asks for
        # them twice, once summed over every store and once for this index's own bound
        self._asked: tuple[tuple[tuple[int, int, int], tuple[str, ...]], KeywordStats] | None = None
        # the last query's candidates' counts, by (meta.json's stamp, terms): recall reads them
        # again to add conversation context (``counts_of``)
        self._decoded: tuple[tuple[tuple[int, int, int], tuple[str, ...]], dict[int, FieldCounts]] | None = None

    def _open(self) -> Any:
        if self._index is None:
            import tantivy

            builder = tantivy.SchemaBuilder()
            builder.add_integer_field("doc", stored=False, indexed=True, fast=True)
            builder.add_integer_field("len", stored=False, indexed=False, fast=True)
            for name in LENGTH_FIELDS:
                builder.add_integer_field(name, stored=False, indexed=False, fast=True)
            builder.add_bytes_field(TERMS_FIELD, stored=True)
            for field, _ in FIELDS:
                builder.add_text_field(field, tokenizer_name=TERMS_TOKENIZER, index_option="freq")
            builder.add_text_field(CHUNK_FIELD, tokenizer_name=CHUNKER_NAME, index_option="position")
            self._schema = builder.build()
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                index = tantivy.Index(self._schema, path=str(self.path))
            except ValueError:  # unreadable or from another schema: derived data, start over
                shutil.rmtree(self.path, ignore_errors=True)
                self.path.mkdir(parents=True, exist_ok=True)
                index = tantivy.Index(self._schema, path=str(self.path))
            index.register_tokenizer(TERMS_TOKENIZER, term_splitter())
            index.register_tokenizer(CHUNKER_NAME, chunk_splitter())
            self._index = index
        return self._index

    def exists(self) -> bool:
        return os.path.exists(self._meta_file)

    # -- writing (the caller holds the index write lock) ---------------------------------

    def _writer_(self) -> Any:
        if self._writer is None:
            self._writer = self._open().writer(heap_size=WRITER_HEAP, num_threads=2)
        return self._writer

    def add(self, rows: Iterable[Row]) -> None:
        """Index (doc, name, description, text, thread member) rows. Each field is given to
        tantivy as the terms stored for its counts (``term_splitter``), so each text is analysed
        once (``term_lines``: by a helper process for a large batch), not again by tantivy."""
        import tantivy

        writer = self._writer_()
        rows = list(rows)
        for (doc, name, description, text, member), (lengths, lines) in zip(rows, term_lines(rows)):
            document = tantivy.Document()
            document.add_integer("doc", doc)
            document.add_integer("len", len(text))
            for length_field, length in zip(LENGTH_FIELDS, lengths):
                document.add_integer(length_field, length)
            document.add_bytes(TERMS_FIELD, "\n".join(lines).encode())
            document.add_text(CHUNK_FIELD, chunk_line(text))
            if name:
                document.add_text("name", lines[0])
            if description:
                document.add_text("description", lines[1])
            if member:  # its own words again, apart from the window recall adds to its context
                document.add_text("text", lines[3])
            document.add_text("context", lines[3])
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
        self._totals = self._asked = self._decoded = None
        shutil.rmtree(self.path, ignore_errors=True)

    # -- reading -------------------------------------------------------------------------

    def statistics(self, terms: list[str]) -> KeywordStats:
        """This index's share of the BM25 statistics for ``terms`` (``ranking.bm25``). Records
        and lengths are read again only after a commit; document frequencies are tantivy's
        (a deleted record counts until its segment is merged, as in tantivy's own BM25)."""
        import tantivy

        stamp = _stamp(self._meta_file)  # before the reload: a commit after it changes the stamp
        asked = (stamp, tuple(terms))
        if self._asked is not None and self._asked[0] == asked:
            return self._asked[1]
        index = self._open()
        index.reload()
        searcher = index.searcher()
        if self._totals is None or self._totals[0] != stamp:
            sums = searcher.aggregate(
                tantivy.Query.all_query(), {name: {"sum": {"field": name}} for name in LENGTH_FIELDS}
            )
            lengths = tuple(int(sums[name]["value"] or 0) for name in LENGTH_FIELDS)
            self._totals = (stamp, searcher.num_docs, lengths)
        _, records, lengths = self._totals
        holding = {term: tuple(searcher.doc_freq(field, term) for field in FIELD_NAMES) for term in terms}
        stats = KeywordStats(records, lengths, holding)
        self._asked = (asked, stats)
        return stats

    def ranked(
        self, terms: list[str], union: KeywordStats, local: KeywordStats, limit: int, offset: int = 0
    ) -> list[tuple[int, float, list[dict[str, int]], list[int]]]:
        """(doc, score, per-field counts of ``terms``, field lengths) of records sharing any of
        ``terms``, best first by BM25 with the ``union``'s idf and this index's averages
        (``local``): the order in which the caller reads candidates, whose union scores
        ``ranking.bm25.growth`` bounds."""
        if not terms:
            return []
        import tantivy

        index = self._open()
        index.reload()
        searcher = index.searcher()
        clauses = []
        for term in terms:
            for (field, weight), union_idf, local_idf in zip(FIELDS, union.idfs(term), local.idfs(term)):
                if union_idf and local_idf:  # the idf is the union's: tantivy's own, rescaled
                    query = tantivy.Query.term_query(self._schema, field, term)
                    clauses.append(
                        (tantivy.Occur.Should, tantivy.Query.boost_query(query, weight * union_idf / local_idf))
                    )
        limit = min(limit, searcher.num_docs)  # tantivy allocates for the limit: never beyond the store
        if limit <= 0 or not clauses:
            return []
        result = searcher.search(tantivy.Query.boolean_query(clauses), limit, count=False, offset=offset)
        addresses = [address for _, address in result.hits]
        docs = searcher.fast_field_values("doc", addresses)
        lengths = zip(*(searcher.fast_field_values(name, addresses) for name in LENGTH_FIELDS))
        decoded = self._decoded_for(terms)
        rows = []
        for (score, address), doc, length in zip(result.hits, docs, lengths):
            if doc is not None:
                counts = decode_counts(searcher.doc(address).get_first(TERMS_FIELD).decode(), terms)
                decoded[doc] = (counts, list(length))
                rows.append((doc, score, counts, list(length)))
        return rows

    def _decoded_for(self, terms: list[str]) -> dict[int, FieldCounts]:
        """The counts of ``terms`` decoded since this index last changed, by doc."""
        key = (_stamp(self._meta_file), tuple(terms))
        if self._decoded is None or self._decoded[0] != key:
            self._decoded = (key, {})
        return self._decoded[1]

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

    def counts_of(self, docs: list[int], terms: list[str]) -> dict[int, FieldCounts]:
        """Each of ``docs`` held here: its per-field counts of ``terms`` and its field lengths
        (what BM25 reads of a record, ``ranking.bm25``)."""
        import tantivy

        decoded = self._decoded_for(terms)
        found = {doc: decoded[doc] for doc in docs if doc in decoded}
        rest = [doc for doc in docs if doc not in decoded]
        index = self._open()
        index.reload()
        searcher = index.searcher()
        if not rest or not searcher.num_docs:
            return found
        result = searcher.search(tantivy.Query.term_set_query(self._schema, "doc", rest), len(rest), count=False)
        addresses = [address for _, address in result.hits]
        numbers = searcher.fast_field_values("doc", addresses)
        lengths = zip(*(searcher.fast_field_values(name, addresses) for name in LENGTH_FIELDS))
        for address, doc, length in zip(addresses, numbers, lengths):
            if doc is not None:
                found[doc] = decoded[doc] = (
                    decode_counts(searcher.doc(address).get_first(TERMS_FIELD).decode(), terms),
                    list(length),
                )
        return found

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


@lru_cache(maxsize=1)
def term_splitter() -> Any:
    """The keyword fields' tokenizer: a ``term_lines.field_lines`` line split at spaces. Tantivy's own
    analysis (its stemmer) cost as much again as the analysis for the stored terms, for every
    record of a bulk remember (docs/benchmarks.md). A term is letters, digits and marks, never an
    ASCII space, so each comes back whole (``tests/test_analyzer.py``)."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


@lru_cache(maxsize=1)
def chunk_splitter() -> Any:
    """The chunk field's tokenizer: a ``chunk_line`` split at spaces, each chunk lower-cased."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).filter(tantivy.Filter.lowercase()).build()


def decode_counts(encoded: str, terms: list[str]) -> list[dict[str, int]]:
    """The counts of ``terms`` in each field of a record's stored ``term_lines.field_lines``."""
    out: list[dict[str, int]] = []
    for line in encoded.split("\n"):
        found: dict[str, int] = {}
        for term in terms:
            count = line.count(f" {term} ")
            if count:
                found[term] = count
        out.append(found)
    return out


def _stamp(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0)
    return (st.st_mtime_ns, st.st_ino, st.st_size)


class _Cursor:
    """One partition's candidates for a query, read window by window in its local order."""

    def __init__(self, index: TextIndex, terms: list[str], union: KeywordStats) -> None:
        self._index = index
        self._terms = terms
        self._union = union
        self._local = index.statistics(terms)
        self._growth = growth(union, self._local) * FLOAT32_SLACK
        self._scorer = Scorer(union, terms)
        self.records = self._local.records
        self.window = 50  # candidates the next read asks for (doubling)
        self._read = 0
        self._last = math.inf  # the local score of the last candidate read
        self.done = not self.records

    def bound(self) -> float:
        """The most a record this cursor has not offered yet can score under the union."""
        return self._growth * self._last

    def read(self) -> list[tuple[int, float]]:
        """The next candidates, up to ``window`` of them, with their union scores."""
        window = self.window
        rows = self._index.ranked(self._terms, self._union, self._local, window, self._read)
        self._read += window
        self.window *= 2
        self.done = len(rows) < window
        if rows:
            self._last = rows[-1][1]
        return [(doc, self._scorer.score(counts, lengths)) for doc, _, counts, lengths in rows]


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

            folder = self.root / hashlib.sha256(f"{key}\x1f{LAYOUT}".encode()).hexdigest()[:16]
            index = self._open[key] = TextIndex(folder)
        return index

    def add(self, key: str, rows: list[tuple[int, str | None, str | None, str, bool]]) -> None:
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

    def statistics(self, keys: list[str], terms: list[str]) -> KeywordStats:
        """The BM25 statistics of these partitions for ``terms`` (``ranking.bm25``)."""
        return sum((self.get(key).statistics(terms) for key in keys if self.exists(key)), KeywordStats())

    def search(
        self,
        keys: list[str],
        terms: list[str],
        union: KeywordStats,
        want: int,
        admit: Callable[[list[int]], set[int]],
    ) -> list[tuple[int, float]]:
        """(doc, BM25 under ``union``) of the ``want`` best admitted records of these
        partitions, best first (ties by doc), exactly as scoring every record would rank them.

        Each partition offers candidates in its own order (``TextIndex.ranked``) in growing
        windows; a candidate's union score is computed from its term counts. A record not read
        yet scores at most ``growth x`` the last local score read (``ranking.bm25.growth``), so
        reading stops once the ``want``-th union score is above every partition's such bound."""
        cursors = [_Cursor(self.get(key), terms, union) for key in keys if self.exists(key)]
        scored: dict[int, float] = {}
        # first windows in proportion to each partition's records (later ones double): most
        # candidates pass admission, and the bound asks for more only where more could rank
        records = sum(cursor.records for cursor in cursors)
        for cursor in cursors:
            cursor.window = max(math.ceil((want + want // 4) * cursor.records / max(records, 1)), 20)
        while True:
            kth = sorted(scored.values(), reverse=True)[want - 1] if len(scored) >= want else -math.inf
            reading = [cursor for cursor in cursors if not cursor.done and cursor.bound() >= kth]
            if not reading:
                return sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:want]
            for cursor in reading:
                found = cursor.read()
                allowed = admit([doc for doc, _ in found])
                scored.update((doc, score) for doc, score in found if doc in allowed)

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

    def counts_of(self, keys: list[str], docs: list[int], terms: list[str]) -> dict[int, FieldCounts]:
        """Each of ``docs`` held in these partitions: its counts of ``terms`` and field lengths."""
        found: dict[int, FieldCounts] = {}
        for key in keys:
            if self.exists(key) and len(found) < len(docs):
                found.update(self.get(key).counts_of([doc for doc in docs if doc not in found], terms))
        return found

    def shortest_containing(self, keys: list[str], query: str, limit: int) -> list[tuple[int, int]]:
        merged = [hit for key in keys if self.exists(key) for hit in self.get(key).shortest_containing(query, limit)]
        merged.sort(key=lambda hit: hit[1])
        return merged[:limit]
