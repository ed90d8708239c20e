"""The ``postgres`` backend: a shared PostgreSQL server (with pgvector) is the store, for teams.

Everything lives in the server, so every agent of a team sees one store: records (``docs``),
their keyword postings, text embeddings (shared by text hash, so a team embeds each text once
per model) and usage counters (bumped with atomic upserts, so concurrent recalls lose nothing).
Tables are prefixed ``eidetic_`` and created in the connection's current schema (pick another
with ``options=-csearch_path=...`` in the DSN); eidetic creates and upgrades them itself.

Keyword ranking is BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5))) over the same
analysed terms and field weights as the embedded backends (``index.analyzer``,
``index.text_index.FIELDS``), with statistics per visibility partition so another scope's private
records never shift a caller's scores. Ranking every record that shares a term took ~300 ms at
100k records (``research/spike-search.md``), so ``keyword`` runs the threshold algorithm (Fagin;
WAND-like) over impact-ordered postings and still returns exactly the BM25 top (see ``keyword``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ...errors import env_error
from ...index.analyzer import analyze
from ...index.context import order_key, thread_key, thread_of
from ...index.text_index import FIELDS, partition_of, partitions_in_reach
from ...ranking.access import Access
from ...ranking.filters import Filters
from ...records import Record, Scope
from ...timeutil import to_epoch
from ..base import FieldsRow, IndexedRecord

SCHEMA_VERSION = 3
K1, B = 1.2, 0.75
WEIGHTS = dict(FIELDS)  # name, description, text, context
FIELD_NAMES = ("name", "description", "text", "context")
MAX_TF = 32767  # term frequencies are stored as smallint; BM25 saturates long before this
# Postings read per query term in keyword()'s first round (x4 per round while the bound on records
# left out is above the k-th score), and candidates scored first: 20 + 2 per wanted result (x4
# while an unscored candidate's upper bound is above the k-th score). Through the API at 100k
# records (top 10: pages of 50 for keyword, 100 for hybrid; 60 queries, one core busy): depth
# 8000 gave keyword/hybrid p50 28/54 ms, 16000 24/46 ms, 32000 31/52 ms (reading and packing
# postings costs more than the tighter bounds save); 1, 2 or 4 scored per wanted barely matter.
KEYWORD_DEPTH = 16000
KEYWORD_SCORED = 20
KEYWORD_PER_WANTED = 2
# Impacts are computed against a partition's *reference* field averages, re-anchored (the
# partition's impacts recomputed) once a current average leaves [ref / REANCHOR, ref * REANCHOR]:
# keyword() loosens its bound by up to this factor, and a partition of similar records settles
# within a few hundred writes, after which re-anchoring is rare.
REANCHOR = 1.1
# Impacts are stored as real (float4): a bound scaled by this covers their rounding.
FLOAT4_SLACK = 1 + 1e-6
# hnsw.ef_search for nearest(), never below the pool asked for (a recall asks for 100+). Recall@10
# against exact search at 100k embedding-like vectors (benchmarks/postgres_speed.py), over two
# graph builds: ef 40 gave 0.966 and 0.941 (graphs differ between builds), ef 100 0.992 and
# 0.9835 for ~0.7 ms more; so 100, which holds >= 0.95 with a margin.
EF_SEARCH = 100
HNSW_BUILD_MEMORY = "512MB"  # maintenance_work_mem for a graph build: 100k x 384-d fits
VACUUM_AFTER = 5000  # records in one write after which the tables are vacuumed and analysed
EXACT_PAGE = 200  # rows per page when metadata facets are checked in Python
LOCK_TIMEOUT = "60s"
# Advisory lock keys (any bigint; these spell "eidetic" + a purpose in their low bytes).
SCHEMA_LOCK = 0x6569_6465_7469_6301
WRITE_LOCK = 0x6569_6465_7469_6302
WRITERS_LOCK = 0x6569_6465_7469_6303
VECTOR_LOCK = 0x6569_6465_7469_6304

_DOC_COLUMNS = ("d.doc, d.id, d.scope, d.visibility, d.lifecycle, d.type, d.name, d.description, d.text, "
                "d.created, d.updated, d.added_by, d.supersedes, d.links, d.metadata")

# A posting's impact in SQL (p: postings, d: docs, r: partitions), as ``_impact`` computes it.
_IMPACT_SQL = " + ".join(
    f"CASE WHEN p.tf_{f} = 0 THEN 0 ELSE {WEIGHTS[f]} * p.tf_{f} * {K1 + 1} / "
    f"(p.tf_{f} + {K1} * (1 - {B} + {B} * d.tl_{f} / r.ref_{f})) END" for f in FIELD_NAMES)

# Ordered upgrades: (version, statements). Version 1 creates everything; a later change appends
# a step, never edits one, because a team's server keeps its data across eidetic upgrades.
MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        "CREATE TABLE IF NOT EXISTS eidetic_meta(key text PRIMARY KEY, value text NOT NULL)",
        "CREATE SEQUENCE IF NOT EXISTS eidetic_doc_seq",
        """CREATE TABLE eidetic_partitions(
            part serial PRIMARY KEY, key text NOT NULL UNIQUE, visibility text NOT NULL, scope text,
            docs bigint NOT NULL DEFAULT 0, len_name bigint NOT NULL DEFAULT 0,
            len_description bigint NOT NULL DEFAULT 0, len_text bigint NOT NULL DEFAULT 0,
            len_context bigint NOT NULL DEFAULT 0, ref_name double precision NOT NULL DEFAULT 0,
            ref_description double precision NOT NULL DEFAULT 0, ref_text double precision NOT NULL DEFAULT 0,
            ref_context double precision NOT NULL DEFAULT 0)""",
        """CREATE TABLE eidetic_docs(
            doc bigint PRIMARY KEY, id text NOT NULL UNIQUE, part int NOT NULL REFERENCES eidetic_partitions,
            scope text NOT NULL, visibility text NOT NULL, lifecycle text NOT NULL, type text NOT NULL,
            name text, description text, text text NOT NULL, hash text NOT NULL, len int NOT NULL,
            created text, created_ts double precision, updated text, added_by text, supersedes text,
            links jsonb NOT NULL, metadata jsonb NOT NULL, source text, thread_key text, thread_order text,
            tl_name int NOT NULL DEFAULT 0, tl_description int NOT NULL DEFAULT 0,
            tl_text int NOT NULL DEFAULT 0, tl_context int NOT NULL DEFAULT 0,
            indexed boolean NOT NULL DEFAULT false)""",
        "CREATE INDEX eidetic_docs_hash ON eidetic_docs(hash)",
        'CREATE INDEX eidetic_docs_len ON eidetic_docs(len, id COLLATE "C")',
        ('CREATE INDEX eidetic_docs_thread ON eidetic_docs(thread_key, thread_order COLLATE "C", doc) '
         "WHERE thread_key IS NOT NULL"),
        """CREATE TABLE eidetic_postings(
            doc bigint NOT NULL, term text NOT NULL, part int NOT NULL,
            tf_name smallint NOT NULL, tf_description smallint NOT NULL, tf_text smallint NOT NULL,
            tf_context smallint NOT NULL, impact real NOT NULL, PRIMARY KEY(doc, term))""",
        "CREATE INDEX eidetic_postings_impact ON eidetic_postings(part, term, impact DESC) INCLUDE (doc)",
        """CREATE TABLE eidetic_terms(
            part int NOT NULL, term text NOT NULL, df int NOT NULL, df_name int NOT NULL,
            df_description int NOT NULL, df_text int NOT NULL, df_context int NOT NULL,
            PRIMARY KEY(part, term))""",
        ("CREATE TABLE eidetic_embeddings(model text NOT NULL, hash text NOT NULL, embedding vector NOT NULL, "
         "PRIMARY KEY(model, hash))"),
        "CREATE TABLE eidetic_vector_models(model text PRIMARY KEY, dims int NOT NULL, graph text)",
        ("CREATE TABLE eidetic_vector_marks(model text NOT NULL, part int NOT NULL, last_doc bigint NOT NULL, "
         "PRIMARY KEY(model, part))"),
        "CREATE TABLE eidetic_usage(id text PRIMARY KEY, recall_count double precision NOT NULL, last_recall text)",
        "CREATE INDEX eidetic_usage_count ON eidetic_usage(recall_count)",
    ]),
    # keyword() reads a candidate's term frequencies from the impact index it has just scanned
    # (index only) instead of looking every (record, term) pair up again.
    (2, [
        "DROP INDEX eidetic_postings_impact",
        ("CREATE INDEX eidetic_postings_impact ON eidetic_postings(part, term, impact DESC) "
         "INCLUDE (doc, tf_name, tf_description, tf_text, tf_context)"),
    ]),
    # Metadata as json, which keeps the text as written, not jsonb, which normalises numbers
    # (1e300 and 1e16 read back as ints, -0.0 as 0.0) and reorders keys: the files and sqlite
    # backends give back the numbers and key order given, and migrate moves records between
    # backends. Facets are matched in Python, so no jsonb operator is lost. Rows written before
    # keep their (already normalised) values. Links are strings only, which jsonb keeps as given.
    (3, ["ALTER TABLE eidetic_docs ALTER COLUMN metadata TYPE json USING metadata::json"]),
]


def _driver() -> Any:
    """psycopg, imported only by the postgres backend (an optional extra)."""
    try:
        import psycopg
    except ImportError:
        raise env_error("the postgres backend needs the psycopg driver, which is not installed",
                        "pip install 'eidetic[postgres]'") from None
    return psycopg


@dataclass(frozen=True)
class Target:
    """Where a DSN points, without credentials: what ``key``, ``location`` and errors show."""

    host: str
    port: str
    dbname: str

    @classmethod
    def of(cls, dsn: str) -> Target:
        psycopg = _driver()
        from psycopg.conninfo import conninfo_to_dict

        try:
            params = conninfo_to_dict(dsn)
        except psycopg.ProgrammingError:  # not echoed: the DSN may hold a password
            raise env_error("the PostgreSQL DSN is malformed",
                            "check EIDETIC_PG_DSN / --dsn, e.g. postgresql://user@host:5432/dbname") from None
        host = str(params.get("host") or os.environ.get("PGHOST") or "localhost")
        port = str(params.get("port") or os.environ.get("PGPORT") or "5432")
        dbname = str(params.get("dbname") or os.environ.get("PGDATABASE") or params.get("user") or "postgres")
        return cls(host, port, dbname)

    def __str__(self) -> str:
        return f"postgres://{self.host}:{self.port}/{self.dbname}"


@dataclass
class Analysed:
    """One record's keyword entry: per-field term counts and token lengths."""

    doc: int
    part: int
    fields: tuple[Counter[str], Counter[str], Counter[str], Counter[str]]  # name, description, text, context

    @property
    def lengths(self) -> tuple[int, int, int, int]:
        return tuple(sum(c.values()) for c in self.fields)  # type: ignore[return-value]


def analyse(doc: int, part: int, name: str | None, description: str | None, text: str,
            context: str) -> Analysed:
    """Mirror ``TextIndex.add``: a record outside a thread is indexed once, in ``context``; a
    thread member's own text goes to ``text`` too, so its words weigh more than its neighbours'."""
    return Analysed(doc, part, (Counter(analyze(name or "")), Counter(analyze(description or "")),
                                Counter(analyze(text)) if context != text else Counter(),
                                Counter(analyze(context))))


def _impact(tfs: Sequence[int], lengths: Sequence[int], refs: Sequence[float]) -> float:
    """A posting's impact: its weighted BM25 term-frequency parts against the partition's
    reference averages (``_IMPACT_SQL`` in SQL). A field with tokens here has a reference > 0:
    ``_anchor`` sets one before any such posting is written."""
    return sum(WEIGHTS[f] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / ref))
               for f, tf, length, ref in zip(FIELD_NAMES, tfs, lengths, refs) if tf)


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5)) if df else 0.0


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _guarded(method: _Method) -> _Method:
    """Run a store entry point under ``PostgresStore._guard``: a server lost mid-session becomes
    an environment error (exit 2) instead of a driver traceback."""
    @functools.wraps(method)
    def wrapper(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        with self._guard():
            return method(self, *args, **kwargs)
    return wrapper  # type: ignore[return-value]


def _pg(condition: str) -> str:
    """SQLite-style SQL from ``Access.sql``/``Filters.sql`` for psycopg: ``?`` marks become
    ``%s`` (neither produces a literal question mark), and an empty filter's ``1`` becomes TRUE."""
    return "TRUE" if condition == "1" else condition.replace("?", "%s")


def _record(row: Sequence[Any]) -> IndexedRecord:
    (doc, rid, scope, visibility, lifecycle, rtype, name, description, text, created, updated,
     added_by, supersedes, links, metadata) = row
    record = Record(id=rid, text=text, type=rtype, name=name, description=description, metadata=metadata,
                    scope=Scope(scope, visibility), created=created, updated=updated, added_by=added_by,
                    supersedes=supersedes, links=list(links), lifecycle=lifecycle)
    return IndexedRecord(doc, None, record)


class PostgresStore:
    """A :class:`~eidetic.stores.base.RecordStore` kept in a PostgreSQL database."""

    backend = "postgres"
    parallel_nearest = True  # nearest() has a session of its own (``_reader``)

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.target = Target.of(dsn)
        self.key = str(self.target)
        self.location = self.key
        self._conn: Any = None
        self._reader: Any = None  # nearest()'s session, see ``reader``
        self._ready = False  # the schema exists at this version (checked once per store)
        self._vector_ready = False
        self._lock_depth = 0
        # The last keyword query's ranking, as far as it is proven exact: a recall reads its
        # pages from it (the freshness blend may ask for a second page of the same query).
        self._proven: tuple[Any, list[tuple[int, float]]] | None = None
        self._parts: dict[str, int] = {}  # partition key -> id: never change once created
        self._lower = "lower(d.text)"

    # -- connection and schema -------------------------------------------------------------

    @property
    def conn(self) -> Any:
        if self._conn is None:
            if self._lock_depth:  # a new session would write without the writer lock
                raise env_error(f"lost the connection to the PostgreSQL server at {self.target} while holding "
                                "the writer lock", "try the command again")
            self._conn = self._connect()
        return self._conn

    @property
    def reader(self) -> Any:
        """nearest()'s own session: a recall runs it on another thread while keyword() runs on
        ``conn``, so the server walks the vector graph and ranks by keywords on two cores."""
        if self._reader is None:
            from pgvector.psycopg import register_vector

            self._reader = self._connect()
            register_vector(self._reader)
        return self._reader

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn a connection lost after connecting (server restart or shutdown, network, timeout)
        into an environment error naming the server, and drop the dead connection so the next
        call connects afresh. Errors of a statement itself (bad SQL, constraints) pass through."""
        import psycopg

        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            # an operational error on a live session (disk full, statement timeout) is no lost connection
            lost = self._conn is None or any(c is not None and c.closed for c in (self._conn, self._reader))
            what = "lost the connection to" if lost else "a failure at"
            self._drop()
            lines = str(exc).strip().splitlines()
            reason = self._scrub(lines[0]) if lines else type(exc).__name__
            raise env_error(f"{what} the PostgreSQL server at {self.target}: {reason}",
                            "check that the server is running and reachable (EIDETIC_PG_DSN / --dsn), "
                            "then run the command again: eidetic reconnects") from None

    def _drop(self) -> None:
        """Forget the connection (closing it quietly: it may be dead already)."""
        conns, self._conn, self._reader, self._vector_ready = (self._conn, self._reader), None, None, False
        for conn in conns:
            if conn is not None:
                conn.close()

    def _connect(self) -> Any:
        import psycopg
        from psycopg.types.json import set_json_loads

        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise env_error(f"cannot connect to the PostgreSQL server at {self.target}: {self._scrub(reason)}",
                            "check EIDETIC_PG_DSN / --dsn (host, port, database, user, password) "
                            "and that the server is running and reachable") from None
        # Plans for the values at hand: a cached generic plan of the keyword query (psycopg
        # prepares statements run 5+ times) ignored its LIMIT and arrays and ran 5x slower; and no
        # JIT, whose compile time exceeds these short queries' run time.
        conn.execute("SET plan_cache_mode = force_custom_plan")
        conn.execute("SET jit = off")
        # Metadata (a json column) parses as the other backends parse it, whatever loader the
        # host application set for psycopg process-wide: floats stay floats, -0.0 keeps its sign.
        set_json_loads(json.loads, conn)
        collations = {name for (name,) in conn.execute(
            "SELECT collname FROM pg_collation WHERE collname IN ('pg_unicode_fast', 'pg_c_utf8')")}
        for name in ("pg_unicode_fast", "pg_c_utf8"):  # Unicode case mapping, as Python's str.lower
            if name in collations:
                self._lower = f'lower(d.text COLLATE "{name}")'
                break
        return conn

    def _scrub(self, message: str) -> str:
        """Never echo a password, even if a driver message quotes the DSN."""
        from psycopg.conninfo import conninfo_to_dict

        password = conninfo_to_dict(self.dsn).get("password")
        return message.replace(str(password), "***") if password else message

    def _schema(self, create: bool) -> bool:
        """Whether the schema is there (upgrading an older one); ``create`` makes it if absent.
        Reads pass False: they never create tables on a team's server."""
        if self._ready:
            return True
        version = self._version()
        if version is None and not create:
            return False
        if version != SCHEMA_VERSION:
            self._migrate()
        self._ready = True
        self._register_vector()
        return True

    def _version(self) -> int | None:
        # pg_class through a fresh snapshot, not to_regclass: that reads a catalog cache which an
        # advisory lock does not refresh, so a writer that waited for another to create the
        # schema would not see it yet.
        if self.conn.execute(
                "SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relname = 'eidetic_meta' AND n.nspname = ANY(current_schemas(false))").fetchone() is None:
            return None
        row = self.conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()
        return int(row[0]) if row else None

    def _migrate(self) -> None:
        """Apply the pending steps in one transaction, under an advisory lock, so several first
        writers starting at once create the schema exactly once."""
        conn = self.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            version = self._version() or 0
            if version > SCHEMA_VERSION:
                raise env_error(f"the eidetic tables at {self.target} have schema version {version}, newer than "
                                f"this eidetic understands ({SCHEMA_VERSION})", "upgrade eidetic")
            if version < SCHEMA_VERSION:
                self._ensure_vector_extension()
            for step, statements in MIGRATIONS:
                if step > version:
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute("INSERT INTO eidetic_meta VALUES('schema', %s) ON CONFLICT (key) "
                                 "DO UPDATE SET value = excluded.value", (str(step),))

    def _ensure_vector_extension(self) -> None:
        import psycopg

        conn = self.conn
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            return
        try:
            with conn.transaction():
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise env_error(f"the pgvector extension is missing at {self.target} and could not be created: "
                            f"{str(exc).strip().splitlines()[0]}",
                            "ask the database administrator to run CREATE EXTENSION vector") from None

    def _register_vector(self) -> None:
        if not self._vector_ready:
            from pgvector.psycopg import register_vector

            register_vector(self.conn)
            self._vector_ready = True

    @_guarded
    def exists(self) -> bool:
        return self._version() is not None

    def sync(self, full: bool = False) -> None:
        """Nothing to catch up with: every change goes through the server."""

    def broken(self) -> list[tuple[str, str]]:
        return []  # rows are written whole by transactions

    def close(self) -> None:
        self._drop()

    def file_of(self, item: IndexedRecord) -> str | None:
        return None

    # -- partitions --------------------------------------------------------------------------

    def _part_ids(self, keys: Iterable[str], create: bool) -> dict[str, int]:
        wanted = [key for key in set(keys) if key not in self._parts]
        if wanted and create:
            self.conn.execute(
                "INSERT INTO eidetic_partitions(key, visibility, scope) SELECT k, v, s FROM "
                "unnest(%s::text[], %s::text[], %s::text[]) AS t(k, v, s) ON CONFLICT (key) DO NOTHING",
                (wanted, ["public" if k == "public" else "private" for k in wanted],
                 [None if k == "public" else k[len("private:"):] for k in wanted]))
        if wanted:
            self._parts.update(self.conn.execute(
                "SELECT key, part FROM eidetic_partitions WHERE key = ANY(%s)", (wanted,)).fetchall())
        return {key: self._parts[key] for key in keys if key in self._parts}

    @staticmethod
    def _where(access: Access, filters: Filters) -> tuple[str, list[Any]]:
        """Scope, lifecycle and column filters as SQL over ``d``; metadata facets are checked in
        Python (``Filters.matches_meta``), the one definition of their typed comparisons."""
        scope_sql, scope_params = access.sql("d")
        filter_sql, filter_params = replace(filters, meta=()).sql("d")
        return f"{_pg(scope_sql)} AND {_pg(filter_sql)}", scope_params + filter_params

    # -- writes ------------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """A session advisory lock: one writer of this store at a time across processes and
        machines; nested use by the same store is a no-op, and a lost connection releases it."""
        import psycopg

        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        with self._guard():
            self._schema(create=True)
            conn = self.conn
            try:
                conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
                conn.execute("SELECT pg_advisory_lock(%s)", (WRITERS_LOCK,))
            except psycopg.errors.LockNotAvailable:
                raise env_error(f"another writer held the store at {self.target} for over {LOCK_TIMEOUT}",
                                "try again; if it persists, look for a stuck eidetic process") from None
            finally:
                if not conn.closed:
                    conn.execute("RESET lock_timeout")
        self._lock_depth = 1
        try:
            yield
        finally:
            self._lock_depth = 0
            if self._conn is conn:  # else the connection was lost, and the session lock with it
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (WRITERS_LOCK,))
                except (psycopg.OperationalError, psycopg.InterfaceError):
                    self._drop()  # lost just now: the server released the lock

    def current(self, item: IndexedRecord) -> Record:
        found = self.by_ids([item.record.id]).get(item.record.id)
        return found.record if found is not None else item.record

    @_guarded
    def write(self, items: Sequence[tuple[IndexedRecord | None, Record]]) -> None:
        """Upsert in one transaction: a replaced record's row and postings go, the new copy
        gets a new doc number, and thread neighbours whose context changed are re-indexed."""
        records = list({record.id: record for _, record in items}.values())
        if not records:
            return
        self._schema(create=True)
        conn = self.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            old = [doc for (doc,) in conn.execute("SELECT doc FROM eidetic_docs WHERE id = ANY(%s)",
                                                  ([r.id for r in records],))]
            retext = self._remove(old)
            retext |= self._insert(records)
            self._retext(retext)
        if len(records) >= VACUUM_AFTER:
            # After a bulk load, not at autovacuum's next visit: the keyword query reads postings
            # from the index alone only on pages the visibility map marks all-visible, and plans
            # by fresh statistics (measured at 100k right after a load: p50 334 ms, 95 ms after
            # this). Outside the transaction, as VACUUM must be; a member role that does not own
            # the tables gets a warning from the server, not an error.
            conn.execute("VACUUM (ANALYZE) eidetic_docs, eidetic_postings, eidetic_terms, eidetic_partitions")

    @_guarded
    def delete(self, item: IndexedRecord) -> None:
        """Hard delete (``forget --purge``): the row, its postings, its usage, and its vectors
        unless another record has the same text."""
        if not self._schema(create=False):
            return
        conn = self.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            rows = conn.execute("SELECT doc, hash FROM eidetic_docs WHERE id = %s", (item.record.id,)).fetchall()
            self._retext(self._remove([doc for doc, _ in rows]))
            conn.execute("DELETE FROM eidetic_usage WHERE id = %s", (item.record.id,))
            conn.execute("DELETE FROM eidetic_embeddings e WHERE e.hash = ANY(%s) AND NOT EXISTS "
                         "(SELECT 1 FROM eidetic_docs d WHERE d.hash = e.hash)", ([h for _, h in rows],))

    def _remove(self, docs: list[int]) -> set[int]:
        """Drop docs and their keyword entries; returns the thread neighbours that quoted them."""
        if not docs:
            return set()
        quoting = {n for ns in self._neighbours(docs).values() for n in ns} - set(docs)
        self._unindex(docs)
        self.conn.execute("DELETE FROM eidetic_docs WHERE doc = ANY(%s)", (docs,))
        return quoting

    def _insert(self, records: list[Record]) -> set[int]:
        """Insert rows; records outside a live thread are indexed at once (their context is their
        text). Returns the thread members, whose context needs their neighbours' rows."""
        conn = self.conn
        docs = [doc for (doc,) in conn.execute(
            "SELECT nextval('eidetic_doc_seq') FROM generate_series(1, %s)", (len(records),))]
        parts = self._part_ids({partition_of(r.scope.visibility, r.scope.name) for r in records}, create=True)
        threaded: set[int] = set()
        lone: list[Analysed] = []
        rows = []
        for doc, r in zip(docs, records):
            part = parts[partition_of(r.scope.visibility, r.scope.name)]
            ts = to_epoch(r.created)
            tkey = thread_key(r.scope.visibility, r.scope.name, thread_of(r.metadata))
            lengths, indexed = (0, 0, 0, 0), False
            if tkey is not None and r.lifecycle == "active":
                threaded.add(doc)
            else:
                entry = analyse(doc, part, r.name, r.description, r.text, r.text)
                lone.append(entry)
                lengths, indexed = entry.lengths, True
            rows.append((doc, r.id, part, r.scope.name, r.scope.visibility, r.lifecycle, r.type, r.name,
                         r.description, r.text, r.hash, len(r.text), r.created, ts, r.updated, r.added_by,
                         r.supersedes, json.dumps(r.links, ensure_ascii=False),
                         json.dumps(r.metadata, ensure_ascii=False),
                         r.metadata.get("source") if isinstance(r.metadata.get("source"), str) else None,
                         tkey, order_key(ts, r.id) if tkey else None, *lengths, indexed))
        with conn.cursor() as cur, cur.copy(
                "COPY eidetic_docs(doc, id, part, scope, visibility, lifecycle, type, name, description, text, "
                "hash, len, created, created_ts, updated, added_by, supersedes, links, metadata, source, "
                "thread_key, thread_order, tl_name, tl_description, tl_text, tl_context, indexed) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        self._index(lone, lengths_stored=True)
        return threaded

    def _retext(self, docs: set[int]) -> None:
        """(Re)index thread members and the neighbours around them: each one's context is its
        text plus the texts of the active records just before and after it in its thread."""
        conn = self.conn
        live = [doc for (doc,) in conn.execute("SELECT doc FROM eidetic_docs WHERE doc = ANY(%s)", (list(docs),))]
        if not live:
            return
        around = self._neighbours(live)
        todo = set(live) | {n for ns in around.values() for n in ns}
        around.update(self._neighbours(sorted(todo - set(around))))
        rows = {doc: rest for doc, *rest in conn.execute(
            "SELECT doc, part, name, description, text FROM eidetic_docs WHERE doc = ANY(%s)",
            (sorted(todo | {n for ns in around.values() for n in ns}),))}
        entries = []
        for doc in sorted(todo):
            part, name, description, text = rows[doc]
            context = "\n".join([text, *(rows[n][3] for n in around.get(doc, ()))])
            entries.append(analyse(doc, part, name, description, text, context))
        self._unindex(sorted(todo))
        self._index(entries, lengths_stored=False)

    def _neighbours(self, docs: Sequence[int]) -> dict[int, list[int]]:
        """Each active thread member's neighbours (before, after), as ``index.context`` defines
        them: same thread key (which includes the partition), by order key then doc."""
        if not docs:
            return {}
        result: dict[int, list[int]] = {}
        for doc, before, after in self.conn.execute(
                """SELECT doc, prev, next FROM (
                       SELECT doc, lag(doc) OVER w AS prev, lead(doc) OVER w AS next FROM eidetic_docs
                       WHERE lifecycle = 'active' AND thread_key IN (
                           SELECT thread_key FROM eidetic_docs WHERE doc = ANY(%s) AND lifecycle = 'active'
                           AND thread_key IS NOT NULL)
                       WINDOW w AS (PARTITION BY thread_key ORDER BY thread_order COLLATE "C", doc)) t
                   WHERE doc = ANY(%s)""", (list(docs), list(docs))):
            result[doc] = [n for n in (before, after) if n is not None]
        return result

    # -- keyword index maintenance -----------------------------------------------------------

    def _unindex(self, docs: Sequence[int]) -> None:
        """Take docs out of the postings and out of their partitions' statistics."""
        if not docs:
            return
        conn = self.conn
        conn.execute(
            """UPDATE eidetic_partitions p SET docs = p.docs - s.n, len_name = p.len_name - s.ln,
                   len_description = p.len_description - s.ld, len_text = p.len_text - s.lt,
                   len_context = p.len_context - s.lc
               FROM (SELECT part, count(*) AS n, sum(tl_name) AS ln, sum(tl_description) AS ld,
                            sum(tl_text) AS lt, sum(tl_context) AS lc
                     FROM eidetic_docs WHERE doc = ANY(%s) AND indexed GROUP BY part) s
               WHERE p.part = s.part""", (list(docs),))
        conn.execute(
            """WITH gone AS (DELETE FROM eidetic_postings WHERE doc = ANY(%s)
                             RETURNING part, term, tf_name, tf_description, tf_text, tf_context),
                    agg AS (SELECT part, term, count(*) AS df, count(*) FILTER (WHERE tf_name > 0) AS dn,
                                   count(*) FILTER (WHERE tf_description > 0) AS dd,
                                   count(*) FILTER (WHERE tf_text > 0) AS dt,
                                   count(*) FILTER (WHERE tf_context > 0) AS dc
                            FROM gone GROUP BY part, term)
               UPDATE eidetic_terms t SET df = t.df - agg.df, df_name = t.df_name - agg.dn,
                   df_description = t.df_description - agg.dd, df_text = t.df_text - agg.dt,
                   df_context = t.df_context - agg.dc
               FROM agg WHERE t.part = agg.part AND t.term = agg.term""", (list(docs),))
        conn.execute("UPDATE eidetic_docs SET indexed = false, tl_name = 0, tl_description = 0, tl_text = 0, "
                     "tl_context = 0 WHERE doc = ANY(%s) AND indexed", (list(docs),))

    def _index(self, entries: list[Analysed], lengths_stored: bool) -> None:
        """Add keyword entries: postings with their impact, document frequencies and partition
        totals (every record counts in N, as every document does in tantivy, even one whose
        text is all stop words). ``lengths_stored``: the rows already say so (fresh inserts)."""
        if not entries:
            return
        conn = self.conn
        totals: dict[int, list[int]] = {}
        for e in entries:
            row = totals.setdefault(e.part, [0, 0, 0, 0, 0])
            row[0] += 1
            for i, length in enumerate(e.lengths):
                row[i + 1] += length
        parts = sorted(totals)
        conn.execute(
            """UPDATE eidetic_partitions p SET docs = p.docs + t.n, len_name = p.len_name + t.ln,
                   len_description = p.len_description + t.ld, len_text = p.len_text + t.lt,
                   len_context = p.len_context + t.lc
               FROM unnest(%s::int[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[])
                    AS t(part, n, ln, ld, lt, lc) WHERE p.part = t.part""",
            [parts, *([totals[p][i] for p in parts] for i in range(5))])
        refs = self._anchor(parts)
        dfs: dict[tuple[int, str], list[int]] = {}
        with conn.cursor() as cur, cur.copy(
                "COPY eidetic_postings(doc, term, part, tf_name, tf_description, tf_text, tf_context, impact) "
                "FROM STDIN") as copy:
            for e in entries:
                lengths, ref = e.lengths, refs[e.part]
                for term in set().union(*e.fields):
                    tfs = [min(field[term], MAX_TF) for field in e.fields]
                    copy.write_row((e.doc, term, e.part, *tfs, _impact(tfs, lengths, ref)))
                    df = dfs.setdefault((e.part, term), [0, 0, 0, 0, 0])
                    df[0] += 1
                    for i, tf in enumerate(tfs):
                        df[i + 1] += tf > 0
        keys = sorted(dfs)
        conn.execute(
            """INSERT INTO eidetic_terms(part, term, df, df_name, df_description, df_text, df_context)
               SELECT * FROM unnest(%s::int[], %s::text[], %s::int[], %s::int[], %s::int[], %s::int[], %s::int[])
               ON CONFLICT (part, term) DO UPDATE SET df = eidetic_terms.df + excluded.df,
                   df_name = eidetic_terms.df_name + excluded.df_name,
                   df_description = eidetic_terms.df_description + excluded.df_description,
                   df_text = eidetic_terms.df_text + excluded.df_text,
                   df_context = eidetic_terms.df_context + excluded.df_context""",
            [[p for p, _ in keys], [t for _, t in keys], *([dfs[k][i] for k in keys] for i in range(5))])
        if not lengths_stored:
            conn.execute(
                """UPDATE eidetic_docs d SET indexed = true, tl_name = t.ln, tl_description = t.ld,
                       tl_text = t.lt, tl_context = t.lc
                   FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[], %s::int[]) AS t(doc, ln, ld, lt, lc)
                   WHERE d.doc = t.doc""",
                [[e.doc for e in entries], *([e.lengths[i] for e in entries] for i in range(4))])

    def _anchor(self, parts: list[int]) -> dict[int, list[float]]:
        """Each partition's reference averages, re-anchored first where a field's current average
        has left the ``REANCHOR`` band (or has its first tokens): the reference becomes the
        average, and the impacts of postings with that field are recomputed, so impacts stay
        close to the true term-frequency parts and keyword()'s bound stays tight."""
        conn = self.conn
        refs: dict[int, list[float]] = {}
        for part, docs, *rest in conn.execute(
                "SELECT part, docs, " + ", ".join(f"len_{f}" for f in FIELD_NAMES) + ", "
                + ", ".join(f"ref_{f}" for f in FIELD_NAMES) + " FROM eidetic_partitions WHERE part = ANY(%s)",
                (parts,)):
            averages, ref = [total / max(docs, 1) for total in rest[:4]], list(rest[4:])
            drifted = [i for i, (avg, old) in enumerate(zip(averages, ref))
                       if avg > 0 and not old / REANCHOR <= avg <= old * REANCHOR]
            for i in drifted:
                ref[i] = averages[i]
            if drifted:
                conn.execute("UPDATE eidetic_partitions SET " + ", ".join(
                    f"ref_{FIELD_NAMES[i]} = %s" for i in drifted) + " WHERE part = %s",
                    [*(ref[i] for i in drifted), part])
                conn.execute(
                    f"UPDATE eidetic_postings p SET impact = {_IMPACT_SQL} FROM eidetic_docs d, eidetic_partitions r "
                    "WHERE p.part = %s AND d.doc = p.doc AND r.part = p.part AND ("
                    + " OR ".join(f"p.tf_{FIELD_NAMES[i]} > 0" for i in drifted) + ")", (part,))
            refs[part] = ref
        return refs

    # -- lookups -----------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read, or none when the schema does not exist yet (reads never create it)."""
        if not self._schema(create=False):
            return []
        return self.conn.execute(sql, params).fetchall()

    @_guarded
    def by_ids(self, ids: Iterable[str]) -> dict[str, IndexedRecord]:
        rows = self._rows(f"SELECT {_DOC_COLUMNS} FROM eidetic_docs d WHERE d.id = ANY(%s)", (list(set(ids)),))
        return {item.record.id: item for item in map(_record, rows)}

    @_guarded
    def by_docs(self, docs: Sequence[int]) -> dict[int, IndexedRecord]:
        rows = self._rows(f"SELECT {_DOC_COLUMNS} FROM eidetic_docs d WHERE d.doc = ANY(%s)", (list(docs),))
        return {item.doc: item for item in map(_record, rows)}

    @_guarded
    def ranking_facts(self, docs: Sequence[int]) -> dict[int, tuple[str, str | None]]:
        rows = self._rows("SELECT doc, id, created FROM eidetic_docs WHERE doc = ANY(%s)", (list(docs),))
        return {doc: (rid, created) for doc, rid, created in rows}

    @_guarded
    def texts(self, docs: Sequence[int]) -> dict[int, str]:
        return dict(self._rows("SELECT doc, text FROM eidetic_docs WHERE doc = ANY(%s)", (list(docs),)))

    @_guarded
    def ids_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, Scope]]]:
        result: dict[str, list[tuple[str, Scope]]] = {}
        for h, rid, scope, visibility in self._rows(
                "SELECT hash, id, scope, visibility FROM eidetic_docs WHERE hash = ANY(%s)", (list(set(hashes)),)):
            result.setdefault(h, []).append((rid, Scope(scope, visibility)))
        return result

    @_guarded
    def all_records(self) -> list[IndexedRecord]:
        return [_record(row) for row in self._rows(
            f'SELECT {_DOC_COLUMNS} FROM eidetic_docs d ORDER BY d.id COLLATE "C"')]

    @_guarded
    def count(self, access: Access | None = None) -> int:
        if access is None:
            rows = self._rows("SELECT count(*) FROM eidetic_docs")
        else:
            where, params = access.sql("d")
            rows = self._rows(f"SELECT count(*) FROM eidetic_docs d WHERE {_pg(where)}", params)
        return rows[0][0] if rows else 0

    # -- search ------------------------------------------------------------------------------

    @_guarded
    def admitted_docs(self, docs: list[int], access: Access, filters: Filters) -> set[int]:
        where, params = self._where(access, filters)
        rows = self._rows(f"SELECT d.doc, d.metadata FROM eidetic_docs d WHERE d.doc = ANY(%s) AND {where}",
                          [list(docs), *params])
        return {doc for doc, metadata in rows if filters.matches_meta(metadata)}

    def _generation(self) -> int:
        """Moves with every write (each written record takes a new doc number): a cached
        ranking is reused only while it has not moved."""
        return int(self.conn.execute("SELECT last_value FROM eidetic_doc_seq").fetchone()[0])

    def first_page(self, top_k: int) -> int:
        """Small: the exact BM25 below scores more candidates the deeper a page reaches."""
        return max(5 * top_k, 50)

    @_guarded
    def keyword(self, terms: list[str], access: Access, filters: Filters, limit: int,
                offset: int = 0) -> list[tuple[int, float]]:
        """(doc, BM25) best first, exactly as exhaustive BM25 ranks them (ties aside), without
        scoring every record that shares a term: the threshold algorithm.

        Each round reads the top M postings of every query term by impact, with their term
        frequencies, from the impact index alone (packed on the server), bounds every record
        seen from them (``bm25_bounds``, NumPy), admits the candidates with the best upper
        bounds (scope, lifecycle, filters: one read of ``eidetic_docs``) and scores them exactly
        from the frequencies read, looking up the postings the top M left out only for records
        that could still reach the page. It stops once the (offset+limit)-th exact score reaches
        the bound on records outside every term's top M, the best upper bound of the candidates
        left unscored and the best of those left inexact. Otherwise it scores x4 candidates or,
        when records outside the top M could still rank, reads x4 postings, keeping what it
        has (all postings and all candidates, at worst: exhaustive).

        The bounds: a record's true score for term t is at most ``cap(t) * impact``, where
        ``cap(t)`` is the largest over fields of ``idf(t, field) * max(1, average / reference)``.
        An impact is the sum of weighted term-frequency parts against the partition's reference
        averages (``_anchor``), and a tf part ``tf(k1+1)/(tf + k1(1-b+b*len/avg))`` grows by at
        most ``avg/ref`` when the reference ``ref`` gives way to a larger current average
        ``avg`` (and shrinks when it is smaller), so the bound holds however the averages have
        drifted since the write. A record outside t's top M has an impact at most that of t's
        (M+1)-th posting; so a record seen in no top M scores at most the sum of those over
        terms (per partition), and a candidate at most ``cap * impact`` for the terms it was
        seen with plus that for the others."""
        if not terms or limit < 1 or not self._schema(create=False):
            return []
        parts = list(self._part_ids(partitions_in_reach(access.scope), create=False).values())
        stats = self.conn.execute(
            "SELECT p.part, p.docs, " + ", ".join(f"p.len_{f}" for f in FIELD_NAMES) + ", "
            + ", ".join(f"p.ref_{f}" for f in FIELD_NAMES) + ", t.term, t.df, "
            + ", ".join(f"t.df_{f}" for f in FIELD_NAMES)
            + " FROM eidetic_partitions p JOIN eidetic_terms t ON t.part = p.part "
            "WHERE p.part = ANY(%s) AND t.term = ANY(%s) AND t.df > 0", (parts, list(terms))).fetchall()
        if not stats:
            return []
        q: list[list[Any]] = [[], [], [], [], [], [], []]  # part, term, 4 field weights, cap
        averages: dict[int, list[float]] = {}
        for part, n, *rest in stats:
            lengths, refs, term, dfs = rest[:4], rest[4:8], rest[8], rest[10:]
            averages[part] = [max(length / max(n, 1), 1e-9) for length in lengths]
            idfs = [_idf(n, df) for df in dfs]
            cap = max((idf * (max(1.0, avg / ref) if ref else math.inf)
                       for idf, avg, ref in zip(idfs, averages[part], refs) if idf), default=0.0)
            row = [part, term, *(WEIGHTS[f] * (K1 + 1) * idf for f, idf in zip(FIELD_NAMES, idfs)),
                   cap * FLOAT4_SLACK]
            for column, value in zip(q, row):
                column.append(value)
        want = offset + limit
        key = (tuple(terms), access, filters, self._generation())
        if self._proven is not None and self._proven[0] == key and len(self._proven[1]) >= want:
            return self._proven[1][offset:want]
        import numpy as np

        from . import bm25_bounds as topk  # NumPy: loaded only once a keyword search runs

        where, params = self._where(access, filters)
        weights = [(part, ws) for part, *ws in zip(q[0], q[2], q[3], q[4], q[5])]
        admitted: dict[int, tuple[int, tuple[int, ...]] | None] = {}  # doc -> (part, field lengths); None: not
        looked_up: dict[int, dict[int, tuple[int, ...]]] = {}  # term -> doc -> tfs, for terms cut short
        depth, scored = KEYWORD_DEPTH, KEYWORD_SCORED + KEYWORD_PER_WANTED * want
        while True:
            lists = [topk.unpack(packed) for packed in self._top_postings(q[0], q[1], depth)]
            seen, upper, unseen, rest = topk.upper_bounds(lists, q[6], q[0], depth)
            while True:
                head, unscored = topk.best(seen, upper, scored)
                fresh = [doc for doc in head if doc not in admitted]
                if fresh:
                    admitted.update(self._admit(fresh, where, params, filters))
                batch = [doc for doc in head if admitted[doc] is not None]
                docs = np.array(batch, dtype=np.int64)
                homes = np.array([admitted[doc][0] for doc in batch], dtype=np.int64)  # their partitions
                lengths = np.array([admitted[doc][1] for doc in batch], dtype=np.float64).reshape(len(batch), 4)
                known = (docs, homes, lengths, lists, rest, depth, looked_up, weights, averages, K1, B)
                low, high, opened = topk.intervals(*known)
                kth_low = float(np.partition(low, len(low) - want)[len(low) - want]) if len(low) >= want else -math.inf
                pending = opened.any(axis=1) & (high >= kth_low)
                if pending.any():  # only records that might still reach the page need their exact score
                    self._look_up(docs[pending].tolist(), np.flatnonzero(opened[pending].any(axis=0)).tolist(), q,
                                  looked_up)
                    low, high, opened = topk.intervals(*known)  # looked_up has grown
                inexact = opened.any(axis=1)
                rows = sorted(zip(docs[~inexact].tolist(), low[~inexact].tolist()), key=lambda r: (-r[1], r[0]))
                kth = rows[want - 1][1] if len(rows) >= want else -math.inf
                bound = max(unseen, unscored, float(high[inexact].max()) if inexact.any() else 0.0)
                if kth >= bound or bound == 0:  # 0: every posting and candidate scored
                    # every row scoring at least every bound is in its final place
                    self._proven = (key, rows if bound == 0 else [r for r in rows if r[1] >= bound])
                    return rows[offset:want]
                if unseen > max(kth, 0):
                    break  # records outside every term's top postings might still rank: look deeper
                scored *= 4
            depth *= 4

    def _top_postings(self, parts: list[int], terms: list[str], depth: int) -> list[bytes | None]:
        """Each query term's top ``depth + 1`` postings by impact, read from the impact index
        alone and packed on the server (``bm25_bounds.POSTING``), so that tens of thousands of
        postings cross as one buffer per term rather than as Python rows."""
        rows = self.conn.execute(
            """SELECT c.packed FROM unnest(%s::int[], %s::text[]) WITH ORDINALITY AS q(part, term, i)
               CROSS JOIN LATERAL (
                   SELECT string_agg(int8send(t.doc) || float4send(t.impact) || int2send(t.tf_name)
                                     || int2send(t.tf_description) || int2send(t.tf_text)
                                     || int2send(t.tf_context), ''::bytea) AS packed
                   FROM (SELECT p.doc, p.impact, p.tf_name, p.tf_description, p.tf_text, p.tf_context
                         FROM eidetic_postings p WHERE p.part = q.part AND p.term = q.term
                         ORDER BY p.impact DESC LIMIT %s) t) c
               ORDER BY q.i""", (parts, terms, depth + 1), binary=True).fetchall()
        return [packed for (packed,) in rows]

    def _admit(self, docs: list[int], where: str, params: list[Any],
               filters: Filters) -> dict[int, tuple[int, tuple[int, ...]] | None]:
        """(partition, field lengths) of each of ``docs`` that scope, lifecycle and filters
        admit; None for the others. Metadata is read (and parsed) only for metadata facets."""
        metadata = "d.metadata" if filters.meta else "NULL"
        found = {doc: (part, tuple(lengths)) for doc, part, *lengths, meta in self.conn.execute(
            "SELECT d.doc, d.part, " + ", ".join(f"d.tl_{f}" for f in FIELD_NAMES)
            + f", {metadata} FROM eidetic_docs d WHERE d.doc = ANY(%s) AND {where}", [docs, *params])
            if meta is None or filters.matches_meta(meta)}
        return {doc: found.get(doc) for doc in docs}

    def _look_up(self, docs: list[int], terms: list[int], q: list[list[Any]],
                 looked_up: dict[int, dict[int, tuple[int, ...]]]) -> None:
        """Fill ``looked_up[term][doc]`` with the term frequencies of ``docs`` for the query
        terms ``terms`` (indexes into ``q``), zeros where a record lacks the term: one index
        descent per record, as a record's postings are adjacent in the primary key."""
        held = {(doc, part, term): tuple(tfs) for doc, part, term, *tfs in self.conn.execute(
            "SELECT p.doc, p.part, p.term, " + ", ".join(f"p.tf_{f}" for f in FIELD_NAMES)
            + " FROM eidetic_postings p WHERE p.doc = ANY(%s) AND p.term = ANY(%s)",
            (sorted(docs), sorted({q[1][i] for i in terms})))}
        for i in terms:
            answers = looked_up.setdefault(i, {})
            for doc in docs:
                answers[doc] = held.get((doc, q[0][i], q[1][i]), (0, 0, 0, 0))

    @_guarded
    def exact(self, query: str, case_sensitive: bool, access: Access, filters: Filters, limit: int,
              offset: int = 0) -> list[tuple[int, float]]:
        """(doc, min(1, len(query)/len(text))) of texts containing ``query``, shortest first
        (then by id). The server has no substring index to rely on (pg_trgm is optional), so
        this walks texts by length and stops at the first ``limit`` matches."""
        if not query or not self._schema(create=False):
            return []
        where, params = self._where(access, filters)
        check, needle = ("strpos(d.text, %s) > 0", query) if case_sensitive else \
            (f"strpos({self._lower}, %s) > 0", query.lower())
        sql = (f"SELECT d.doc, d.len, d.metadata FROM eidetic_docs d WHERE {where} AND {check} "
               f'ORDER BY d.len, d.id COLLATE "C" LIMIT %s OFFSET %s')
        want = offset + limit
        if not filters.meta:
            rows = self.conn.execute(sql, [*params, needle, limit, offset]).fetchall()
            found = [(doc, length) for doc, length, _ in rows]
        else:
            found, start = [], 0
            while len(found) < want:
                page = self.conn.execute(sql, [*params, needle, EXACT_PAGE, start]).fetchall()
                found += [(doc, length) for doc, length, metadata in page if filters.matches_meta(metadata)]
                if len(page) < EXACT_PAGE:
                    break
                start += EXACT_PAGE
            found = found[offset:want]
        qlen = len(query)
        return [(doc, min(1.0, qlen / length) if length else 0.0) for doc, length in found]

    @_guarded
    def fields_candidates(self, terms: list[str], access: Access, filters: Filters) -> list[FieldsRow]:
        """Records with any term as a lower-cased substring of name (hyphens and underscores
        read as spaces), description or text; every admitted record when ``terms`` is empty."""
        if not self._schema(create=False):
            return []
        where, params = self._where(access, filters)
        name = "lower(coalesce(d.name, ''))"
        checks = []
        for term in terms:
            spaced = term.replace("-", " ").replace("_", " ")
            checks.append(f"strpos(replace(replace({name}, '-', ' '), '_', ' '), %s) > 0 OR strpos({name}, %s) > 0"
                          f" OR strpos(lower(coalesce(d.description, '')), %s) > 0 OR strpos({self._lower}, %s) > 0")
            params += [spaced, term, term, term]
        match = f" AND ({' OR '.join(checks)})" if checks else ""
        rows = self.conn.execute(
            # last touched: the record's last write (no file, no mtime), as in the sqlite backend
            f"SELECT d.doc, d.id, d.name, d.description, d.text, d.type, coalesce(d.updated, d.created), d.metadata "
            f"FROM eidetic_docs d WHERE {where}{match}", params).fetchall()
        return [(*row[:7], None, None) for row in rows if filters.matches_meta(row[7])]

    # -- vectors -----------------------------------------------------------------------------

    @_guarded
    def sync_vectors(self, model: str, access: Access | None,
                     vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]) -> None:
        """Store vectors of ``model`` for the docs past each partition's high-water mark that
        have none yet (by text hash: a text embedded for any record, of any scope, is not
        embedded again). Docs are numbered in commit order (writers hold WRITE_LOCK when they
        draw numbers), so a mark never skips a record committed later."""
        if not self._schema(create=False):
            return
        conn = self.conn
        if access is None:
            parts = [part for (part,) in conn.execute("SELECT part FROM eidetic_partitions")]
        else:
            parts = list(self._part_ids(partitions_in_reach(access.scope), create=False).values())
        marks = dict(conn.execute("SELECT part, last_doc FROM eidetic_vector_marks WHERE model = %s AND "
                                  "part = ANY(%s)", (model, parts)).fetchall())
        upto = conn.execute("SELECT coalesce(max(doc), 0) FROM eidetic_docs").fetchone()[0]
        behind = [part for part in parts if marks.get(part, 0) < upto]
        if not behind:
            return
        rows = conn.execute(
            """SELECT d.doc, d.hash FROM eidetic_docs d
               JOIN unnest(%s::int[], %s::bigint[]) AS m(part, last_doc) ON d.part = m.part
               WHERE d.doc > m.last_doc AND d.doc <= %s AND NOT EXISTS (
                   SELECT 1 FROM eidetic_embeddings e WHERE e.model = %s AND e.hash = d.hash)
               ORDER BY d.doc""", (behind, [marks.get(p, 0) for p in behind], upto, model)).fetchall()
        if rows:
            found = vectors_for(rows)  # outside any transaction: embedding may take a while
            self._store_vectors(model, {h: found[h] for _, h in rows})
        with conn.transaction():
            conn.execute(
                """INSERT INTO eidetic_vector_marks(model, part, last_doc) SELECT %s, p, %s FROM unnest(%s::int[]) p
                   ON CONFLICT (model, part) DO UPDATE
                   SET last_doc = greatest(eidetic_vector_marks.last_doc, excluded.last_doc)""",
                (model, upto, behind))

    def _store_vectors(self, model: str, vectors: dict[str, Any]) -> None:
        """Insert vectors (binary COPY through a temporary table, then an upsert that keeps what
        a concurrent sync stored first); the model's HNSW graph is built once its first vectors
        are in (building over a full table is much faster than growing it row by row)."""
        import numpy as np

        conn = self.conn
        dims = len(next(iter(vectors.values())))
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (VECTOR_LOCK,))
            known = conn.execute("SELECT dims, graph FROM eidetic_vector_models WHERE model = %s",
                                 (model,)).fetchone()
            if known is not None and known[0] != dims:
                raise env_error(f"the store at {self.target} holds {known[0]}-dimensional vectors for {model}, "
                                f"the embedder gave {dims}", "check EIDETIC_EMBED_MODEL")
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS eidetic_incoming(hash text, embedding vector) "
                         "ON COMMIT DELETE ROWS")
            with conn.cursor() as cur, cur.copy("COPY eidetic_incoming FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "vector"])
                for h, vector in vectors.items():
                    copy.write_row((h, np.asarray(vector, dtype=np.float32)))
            conn.execute("INSERT INTO eidetic_embeddings(model, hash, embedding) SELECT %s, hash, embedding "
                         "FROM eidetic_incoming ON CONFLICT (model, hash) DO NOTHING", (model,))
            if known is None or known[1] is None:
                self._build_graph(model, dims)
        if len(vectors) >= VACUUM_AFTER:
            # Fresh statistics now, not at autovacuum's next visit: planning with the old row
            # count (a few dozen) the server scanned every vector and sorted rather than walk
            # the HNSW graph (measured at 10k right after a load: 36 ms a search, 6.5 ms after).
            conn.execute("ANALYZE eidetic_embeddings")

    def _build_graph(self, model: str, dims: int) -> None:
        """A partial HNSW index per model, on the vectors cast to its dimensions (pgvector
        indexes need fixed dimensions; one table holds every model's)."""
        from psycopg import sql

        name = "eidetic_hnsw_" + hashlib.sha256(model.encode()).hexdigest()[:16]
        self.conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
        self.conn.execute(sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON eidetic_embeddings USING hnsw ((embedding::vector({})) "
            "vector_cosine_ops) WHERE model = {}").format(sql.Identifier(name), sql.Literal(dims), sql.Literal(model)))
        self.conn.execute("INSERT INTO eidetic_vector_models(model, dims, graph) VALUES(%s, %s, %s) "
                          "ON CONFLICT (model) DO UPDATE SET graph = excluded.graph", (model, dims, name))

    def _model_dims(self, model: str, conn: Any = None) -> int | None:
        row = (conn or self.conn).execute("SELECT dims FROM eidetic_vector_models WHERE model = %s", (model,)).fetchone()
        return row[0] if row else None

    @_guarded
    def nearest(self, model: str, query: Any, access: Access, filters: Filters,
                pool: int) -> dict[int, float]:
        """The ``pool`` admitted docs nearest to ``query`` by cosine, through the model's HNSW
        graph with iterative scans (it keeps walking while scope and filters reject rows)."""
        import numpy as np
        from psycopg import sql

        if not self._schema(create=False):
            return {}
        conn = self.reader
        dims = self._model_dims(model, conn)
        if dims is None:
            return {}
        where, params = self._where(access, filters)
        q = np.asarray(query, dtype=np.float32)
        distance = sql.SQL("(e.embedding::vector({dims}) <=> %s::vector({dims}))").format(dims=sql.Literal(dims))
        statement = sql.SQL(
            "SELECT d.doc, 1 - {distance}, " + ("d.metadata" if filters.meta else "NULL") + " FROM eidetic_embeddings e "
            "JOIN eidetic_docs d ON d.hash = e.hash WHERE e.model = {model} AND " + where
            + " ORDER BY {distance} LIMIT %s").format(distance=distance, model=sql.Literal(model))
        window = pool if not filters.meta else 4 * pool
        while True:
            with conn.transaction():
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true), "
                             "set_config('hnsw.iterative_scan', 'relaxed_order', true)", (str(max(EF_SEARCH, window)),))
                rows = conn.execute(statement, [q, *params, q, window]).fetchall()
            found = {doc: float(score) for doc, score, metadata in rows if metadata is None or filters.matches_meta(metadata)}
            if len(found) >= pool or len(rows) < window:
                return dict(sorted(found.items(), key=lambda item: -item[1])[:pool])
            window *= 4

    @_guarded
    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        """Exact cosines of these docs' vectors, for docs in the caller's reach."""
        import numpy as np

        if not docs or not self._schema(create=False):
            return {}
        parts = list(self._part_ids(partitions_in_reach(access.scope), create=False).values())
        rows = self.conn.execute(
            "SELECT d.doc, 1 - (e.embedding <=> %s) FROM eidetic_docs d JOIN eidetic_embeddings e "
            "ON e.model = %s AND e.hash = d.hash WHERE d.doc = ANY(%s) AND d.part = ANY(%s)",
            (np.asarray(query, dtype=np.float32), model, list(docs), parts)).fetchall()
        return {doc: float(score) for doc, score in rows}

    # -- usage -------------------------------------------------------------------------------

    @_guarded
    def usage(self, ids: Iterable[str]) -> dict[str, tuple[float, str | None]]:
        rows = self._rows("SELECT id, recall_count, last_recall FROM eidetic_usage WHERE id = ANY(%s)",
                          (list(set(ids)),))
        return {rid: (count, last) for rid, count, last in rows}

    @_guarded
    def max_recall_count(self) -> float:
        rows = self._rows("SELECT coalesce(max(recall_count), 0) FROM eidetic_usage")
        return float(rows[0][0]) if rows else 0.0

    @_guarded
    def bump_usage(self, amounts: dict[str, float], when: str) -> None:
        """One upsert adding to the stored counts: concurrent recalls lose no increment. Ids go
        in sorted order so two bumps of overlapping ids cannot deadlock."""
        if not amounts:
            return
        self._schema(create=True)
        ids = sorted(amounts)
        self.conn.execute(
            """INSERT INTO eidetic_usage(id, recall_count, last_recall)
               SELECT id, n, %s FROM unnest(%s::text[], %s::float8[]) AS t(id, n)
               ON CONFLICT (id) DO UPDATE SET recall_count = eidetic_usage.recall_count + excluded.recall_count,
                   last_recall = greatest(coalesce(eidetic_usage.last_recall, '') COLLATE "C",
                                          excluded.last_recall COLLATE "C")""",
            (when, ids, [float(amounts[i]) for i in ids]))

    @_guarded
    def set_usage(self, rid: str, recall_count: float, last_recall: str | None) -> None:
        self._schema(create=True)
        self.conn.execute("INSERT INTO eidetic_usage VALUES(%s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                          "recall_count = excluded.recall_count, last_recall = excluded.last_recall",
                          (rid, float(recall_count), last_recall))

    @_guarded
    def forget_usage(self, rid: str) -> None:
        if self._schema(create=False):
            self.conn.execute("DELETE FROM eidetic_usage WHERE id = %s", (rid,))

    # -- maintenance -------------------------------------------------------------------------

    @_guarded
    def status(self, verify: bool = True) -> dict[str, Any]:
        vectors = []
        for model, part_key, rows, graph in self._rows(
                """SELECT m.model, p.key, count(d.doc), m.graph FROM eidetic_vector_models m
                   CROSS JOIN eidetic_partitions p
                   JOIN eidetic_docs d ON d.part = p.part
                   JOIN eidetic_embeddings e ON e.model = m.model AND e.hash = d.hash
                   GROUP BY m.model, p.key, m.graph ORDER BY m.model, p.key"""):
            vectors.append({"model": model, "partition": part_key, "rows": rows,
                            "graph_rows": rows if graph else 0})
        return {"store": self.location, "backend": self.backend, "index": self.location,
                "records": self.count(), "current": True, "unparseable": [], "conflicts": [],
                "vectors": vectors}

    @_guarded
    def rebuild(self) -> dict[str, Any]:
        """Recompute every keyword entry and statistic from the rows (impacts then use the
        store's current averages); records, vectors and usage are left as they are."""
        if self._schema(create=False):
            conn = self.conn
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                conn.execute("TRUNCATE eidetic_postings, eidetic_terms")
                conn.execute("UPDATE eidetic_partitions SET docs = 0, len_name = 0, len_description = 0, "
                             "len_text = 0, len_context = 0, ref_name = 0, ref_description = 0, ref_text = 0, "
                             "ref_context = 0")
                conn.execute("UPDATE eidetic_docs SET indexed = false, tl_name = 0, tl_description = 0, "
                             "tl_text = 0, tl_context = 0 WHERE indexed")
                lone = [analyse(doc, part, name, description, text, text) for doc, part, name, description, text
                        in conn.execute("SELECT doc, part, name, description, text FROM eidetic_docs "
                                        "WHERE thread_key IS NULL OR lifecycle <> 'active'")]
                self._index(lone, lengths_stored=False)
                self._retext({doc for (doc,) in conn.execute(
                    "SELECT doc FROM eidetic_docs WHERE thread_key IS NOT NULL AND lifecycle = 'active'")})
        return {"store": self.location, "index": self.location, "records": self.count(), "unparseable": 0}

