"""The postgres backend's server-side layout: its tables (created and upgraded in place by
ordered migrations), the schema version, the advisory lock keys its sessions share, and the
write size after which its tables are vacuumed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...docsql.dialect import Postgres
from ...errors import env_error
from ...index.stored import backfill_norm
from . import trigrams

if TYPE_CHECKING:
    from .connection import Session

SCHEMA_VERSION = 8
# Advisory lock keys (any bigint; these spell "eidetic" + a purpose in their low bytes).
SCHEMA_LOCK = 0x6569_6465_7469_6301  # migrations
WRITE_LOCK = 0x6569_6465_7469_6302  # transactions changing records or keyword entries: docs number in commit order
WRITERS_LOCK = 0x6569_6465_7469_6303  # the writers' session lock (``Session.writer_lock``)
VECTOR_LOCK = 0x6569_6465_7469_6304  # storing vectors and building a model's graph
VACUUM_AFTER = 5000  # records (or vectors) in one write after which the tables are vacuumed and analysed

# Ordered upgrades: (version, statements). Version 1 creates everything; a later change appends
# a step, never edits one, because a team's server keeps its data across eidetic upgrades. A
# statement may be a function of the connection, for what Python computes (a backfill).
Statement = str | Callable[[Any], Any]
MIGRATIONS: list[tuple[int, list[Statement]]] = [
    (
        1,
        [
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
            (
                'CREATE INDEX eidetic_docs_thread ON eidetic_docs(thread_key, thread_order COLLATE "C", doc) '
                "WHERE thread_key IS NOT NULL"
            ),
            """CREATE TABLE eidetic_postings(
            doc bigint NOT NULL, term text NOT NULL, part int NOT NULL,
            tf_name smallint NOT NULL, tf_description smallint NOT NULL, tf_text smallint NOT NULL,
            tf_context smallint NOT NULL, impact real NOT NULL, PRIMARY KEY(doc, term))""",
            "CREATE INDEX eidetic_postings_impact ON eidetic_postings(part, term, impact DESC) INCLUDE (doc)",
            """CREATE TABLE eidetic_terms(
            part int NOT NULL, term text NOT NULL, df int NOT NULL, df_name int NOT NULL,
            df_description int NOT NULL, df_text int NOT NULL, df_context int NOT NULL,
            PRIMARY KEY(part, term))""",
            (
                "CREATE TABLE eidetic_embeddings(model text NOT NULL, hash text NOT NULL, embedding vector NOT NULL, "
                "PRIMARY KEY(model, hash))"
            ),
            "CREATE TABLE eidetic_vector_models(model text PRIMARY KEY, dims int NOT NULL, graph text)",
            (
                "CREATE TABLE eidetic_vector_marks(model text NOT NULL, part int NOT NULL, last_doc bigint NOT NULL, "
                "PRIMARY KEY(model, part))"
            ),
            "CREATE TABLE eidetic_usage(id text PRIMARY KEY, recall_count double precision NOT NULL, last_recall text)",
            "CREATE INDEX eidetic_usage_count ON eidetic_usage(recall_count)",
        ],
    ),
    # keyword() reads a candidate's term frequencies from the impact index it has just scanned
    # (index only) instead of looking every (record, term) pair up again.
    (
        2,
        [
            "DROP INDEX eidetic_postings_impact",
            (
                "CREATE INDEX eidetic_postings_impact ON eidetic_postings(part, term, impact DESC) "
                "INCLUDE (doc, tf_name, tf_description, tf_text, tf_context)"
            ),
        ],
    ),
    # Metadata as json, which keeps the text as written, not jsonb, which normalises numbers
    # (1e300 and 1e16 read back as ints, -0.0 as 0.0) and reorders keys: the files and sqlite
    # backends give back the numbers and key order given, and migrate moves records between
    # backends. Facets are matched in Python, so no jsonb operator is lost. Rows written before
    # keep their (already normalised) values. Links are strings only, which jsonb keeps as given.
    (3, ["ALTER TABLE eidetic_docs ALTER COLUMN metadata TYPE json USING metadata::json"]),
    # A listing's sort keys (``docsql.listing``: the expressions must stay those), so a page is
    # read from the front of an index (the first also holds what a count of the admitted reads);
    # and what finds the records that name one (links in).
    (
        4,
        [
            "CREATE INDEX eidetic_docs_updated ON eidetic_docs "
            "((coalesce(updated, nullif(created, 'date-unknown'), '') COLLATE \"C\"), (id COLLATE \"C\")) "
            "INCLUDE (visibility, lifecycle, scope, type, source, created_ts)",
            'CREATE INDEX eidetic_docs_created ON eidetic_docs ((coalesce(created_ts, -1e300)), (id COLLATE "C"))',
            "CREATE INDEX eidetic_docs_name ON eidetic_docs "
            '((lower(substr(coalesce(name, text), 1, 32) COLLATE "C")), (id COLLATE "C"))',
            "CREATE INDEX eidetic_docs_supersedes ON eidetic_docs(supersedes) WHERE supersedes IS NOT NULL",
            "CREATE INDEX eidetic_docs_links ON eidetic_docs USING gin (links jsonb_path_ops)",
        ],
    ),
    # Exact search's trigram filter (``trigrams``): each text's hashed trigrams, filled from
    # Python for the rows there already, then indexed (GIN, core ``array_ops``: no extension);
    # rows left NULL (see ``trigrams``) are found through the partial index and always checked.
    (
        5,
        [
            "ALTER TABLE eidetic_docs ADD COLUMN trigrams int[]",
            trigrams.backfill,
            "CREATE INDEX eidetic_docs_trigrams ON eidetic_docs USING gin (trigrams)",
            "CREATE INDEX eidetic_docs_untrigrammed ON eidetic_docs(doc) WHERE trigrams IS NULL",
        ],
    ),
    # The event clock (occurred, valid_from, valid_until: ISO text as given) and the dated
    # lifecycle changes (``clocks``: json, as metadata is); NULL in the rows written before.
    (
        6,
        [
            "ALTER TABLE eidetic_docs ADD COLUMN IF NOT EXISTS occurred text, "
            "ADD COLUMN IF NOT EXISTS valid_from text, ADD COLUMN IF NOT EXISTS valid_until text, "
            "ADD COLUMN IF NOT EXISTS history json",
        ],
    ),
    # Each text's normalised key (``records.normal_key``), computed in Python for the
    # rows there already, and its index: a remember finds the stored texts it repeats in one
    # lookup (``docsql.lookups``).
    (
        7,
        [
            "ALTER TABLE eidetic_docs ADD COLUMN IF NOT EXISTS norm text",
            lambda conn: backfill_norm(conn, Postgres()),
            "CREATE INDEX IF NOT EXISTS eidetic_docs_norm ON eidetic_docs(norm)",
        ],
    ),
    # Keyword entries of a record's own words only: recall adds a thread member's conversation
    # context at query time, over every store and partition in reach (``ranking.windows``).
    (8, [lambda conn: _own_words(conn)]),
]


def _own_words(conn: Any) -> None:
    from .writes import reindex_keywords  # writes imports this module's locks

    reindex_keywords(conn)


class Schema:
    """Whether the store's tables exist at this eidetic's version, checked once per store;
    creating or upgrading them when asked."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.ready = False  # the schema exists at this version

    def ensure(self, create: bool) -> bool:
        """Whether the schema is there (upgrading an older one); ``create`` makes it if absent.
        Reads pass False: they never create tables on a team's server."""
        if self.ready:
            self._session.register_vector()  # again after a reconnect (a no-op otherwise)
            return True
        version = self.version()
        if version is None and not create:
            return False
        if version != SCHEMA_VERSION:
            self._migrate()
        self.ready = True
        self._session.register_vector()
        return True

    def version(self) -> int | None:
        """The stored schema version; None when there are no eidetic tables."""
        conn = self._session.conn
        # pg_class through a fresh snapshot, not to_regclass: that reads a catalog cache which an
        # advisory lock does not refresh, so a writer that waited for another to create the
        # schema would not see it yet.
        if (
            conn.execute(
                "SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relname = 'eidetic_meta' AND n.nspname = ANY(current_schemas(false))"
            ).fetchone()
            is None
        ):
            return None
        row = conn.execute("SELECT value FROM eidetic_meta WHERE key = 'schema'").fetchone()
        return int(row[0]) if row else None

    def _migrate(self) -> None:
        """Apply the pending steps in one transaction, under an advisory lock, so several first
        writers starting at once create the schema exactly once, and a reader or writer that
        opens a store while another upgrades it waits, then finds it upgraded. An upgraded
        store's tables are vacuumed and analysed afterwards, as after a bulk write: a backfill
        rewrote every row, and the planner needs the new column's statistics."""
        conn = self._session.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            version = self.version() or 0
            if version > SCHEMA_VERSION:
                raise env_error(
                    f"the eidetic tables at {self._session.target} have schema version {version}, "
                    f"newer than this eidetic understands ({SCHEMA_VERSION})",
                    "upgrade eidetic",
                )
            if version < SCHEMA_VERSION:
                self._ensure_vector_extension()
            upgraded = 0 < version < SCHEMA_VERSION
            for step, statements in MIGRATIONS:
                if step > version:
                    for statement in statements:
                        if callable(statement):
                            statement(conn)
                        else:
                            conn.execute(statement)
                    conn.execute(
                        "INSERT INTO eidetic_meta VALUES('schema', %s) ON CONFLICT (key) "
                        "DO UPDATE SET value = excluded.value",
                        (str(step),),
                    )
        if upgraded:
            conn.execute("VACUUM (ANALYZE) eidetic_docs")

    def _ensure_vector_extension(self) -> None:
        import psycopg

        conn = self._session.conn
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            return
        try:
            with conn.transaction():
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise env_error(
                f"the pgvector extension is missing at {self._session.target} and could not be "
                f"created: {str(exc).strip().splitlines()[0]}",
                "ask the database administrator to run CREATE EXTENSION vector",
            ) from None
