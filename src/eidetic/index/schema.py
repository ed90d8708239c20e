"""The layout of a record database (tables, schema version, upgrades) and how it is opened.

One layout serves both kinds of record database, so the same SQL answers every query: the
derived index of a folder of record files (``stores.files.folder_index``: an older or damaged one is
dropped and rebuilt) and the database that is the sqlite backend's store
(``index.store_database``: created by the first write, upgraded in place, never dropped). Only
the first uses the ``files`` and ``dirs`` tables; only the second logs drops in ``dropped``.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

from ..docsql.dialect import SQLITE
from ..errors import env_error
from .stored import backfill_norm

SCHEMA_VERSION = "14"
CLOCK_COLUMNS = ("occurred", "valid_from", "valid_until", "history")

# The sqlite backend logs each dropped doc (and the partition of its keyword entry), in the
# transaction that drops it: every cache folder's keyword index catches up from this log,
# whichever process made the change. A files store does not use it. (Databases made before
# 2026-12-02 have two more columns, thread_key and thread_order, left empty now.)
DROPPED = """CREATE TABLE IF NOT EXISTS dropped(seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL,
    partition TEXT NOT NULL)"""

# A listing's sort keys (``docsql.listing``), in order: a page of the newest records is read
# from the front of an index, not sorted out of the whole table. Each also holds what the scope
# rule reads, so the planner walks it whatever the records' size; the first holds the column
# filters too, so counting what a caller may see reads only it. The last two find the records
# that name one (``show``'s links in) without reading every row.
_ADMITTED = "id, visibility, lifecycle, scope, winner"
LISTING = f"""
CREATE INDEX IF NOT EXISTS docs_updated ON docs(coalesce(updated, nullif(created, 'date-unknown'), ''), {_ADMITTED},
    type, source, created_ts);
CREATE INDEX IF NOT EXISTS docs_created ON docs(coalesce(created_ts, -1e300), {_ADMITTED});
CREATE INDEX IF NOT EXISTS docs_name ON docs(lower(substr(coalesce(name, text), 1, 32)), {_ADMITTED});
CREATE INDEX IF NOT EXISTS docs_supersedes ON docs(supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX IF NOT EXISTS docs_linking ON docs(doc) WHERE links <> '[]'"""

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS dirs(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, racy INTEGER NOT NULL,
    nfiles INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, dir TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    ino INTEGER NOT NULL, racy INTEGER NOT NULL, doc INTEGER, error TEXT);
CREATE INDEX IF NOT EXISTS files_dir ON files(dir);
CREATE INDEX IF NOT EXISTS files_error ON files(path) WHERE error IS NOT NULL;
CREATE INDEX IF NOT EXISTS files_racy ON files(path) WHERE racy = 1;
CREATE TABLE IF NOT EXISTS docs(
    doc INTEGER PRIMARY KEY, id TEXT NOT NULL, path TEXT NOT NULL,
    scope TEXT NOT NULL, visibility TEXT NOT NULL, lifecycle TEXT NOT NULL, type TEXT NOT NULL,
    name TEXT, description TEXT, text TEXT NOT NULL, hash TEXT NOT NULL, len INTEGER NOT NULL,
    created TEXT, created_ts REAL, updated TEXT, added_by TEXT, supersedes TEXT,
    links TEXT NOT NULL, metadata TEXT NOT NULL, source TEXT, winner INTEGER NOT NULL,
    thread_key TEXT, thread_order TEXT, occurred TEXT, valid_from TEXT, valid_until TEXT, history TEXT,
    norm TEXT);
CREATE INDEX IF NOT EXISTS docs_id ON docs(id);
CREATE INDEX IF NOT EXISTS docs_thread ON docs(thread_key, thread_order, doc) WHERE thread_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS partitions(key TEXT PRIMARY KEY, visibility TEXT NOT NULL, scope TEXT);
CREATE INDEX IF NOT EXISTS docs_hash ON docs(hash);
CREATE INDEX IF NOT EXISTS docs_len ON docs(len);
CREATE INDEX IF NOT EXISTS docs_norm ON docs(norm);
"""
    + DROPPED
    + ";"
    + LISTING
    + ";"
)

# The docs table's secondary indexes, each as its CREATE statement: a batch far larger than the
# table is inserted without them and they are built after, in the same transaction
# (``RecordDatabase._insert_rows``)
DOCS_INDEXES = {
    statement.split()[5]: statement.strip()
    for statement in SCHEMA.split(";")
    if statement.strip().startswith("CREATE INDEX") and " ON docs(" in statement
}

# Upgrades of a database that is the store, from each old schema version to the next. A change
# to SCHEMA must add its step here: such a database is never dropped and rebuilt. A step is an
# SQL script, or a function of the connection for what Python computes (a backfill).
Step = str | Callable[[sqlite3.Connection], None]
MIGRATIONS: dict[str, tuple[str, list[Step]]] = {  # from version -> (to version, steps)
    # 11: the drop log and a change stamp; each cache folder's keyword index keeps its own
    # state instead of the shared flag
    "10": (
        "11",
        [
            DROPPED + ";DELETE FROM meta WHERE key='keyword_pending'"
            ";INSERT OR REPLACE INTO meta VALUES('change', lower(hex(randomblob(16))))"
        ],
    ),
    # 12: indexes for listings by last write, creation and name
    "11": ("12", [LISTING]),
    # 13: the event clock and the dated lifecycle changes (``clocks``); NULL in older rows
    "12": ("13", [";".join(f"ALTER TABLE docs ADD COLUMN {column} TEXT" for column in CLOCK_COLUMNS)]),
    # 14: each text's normalised key (``records.normal_key``), computed for the rows
    # there already, and its index: a remember finds the stored texts it repeats in one lookup
    "13": (
        "14",
        [
            "ALTER TABLE docs ADD COLUMN norm TEXT",
            lambda conn: backfill_norm(conn, SQLITE),
            "CREATE INDEX IF NOT EXISTS docs_norm ON docs(norm)",
        ],
    ),
}


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (callers open transactions), WAL, with
    ``eidetic_icontains``: a case-insensitive substring test for what SQLite's ``lower`` does
    not fold (anything beyond ASCII; ``docsql.dialect``)."""
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA cache_size=-65536")
    conn.create_function("eidetic_icontains", 2, _icontains, deterministic=True)
    return conn


def _icontains(text: str, needle: str) -> bool:
    return needle.lower() in text.lower()


def schema_version(conn: sqlite3.Connection) -> str | None:
    """The version the database says it has; None when it has no ``meta`` table or no version."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def lay_out(conn: sqlite3.Connection, path: Path) -> None:
    """Create or upgrade the database that is the store, in one write transaction that reads
    the schema version again: concurrent first users (with any cache folders) do it once."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(conn)
        if version is None:
            _run(conn, SCHEMA)
            conn.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            conn.execute("INSERT INTO meta VALUES('instance', ?)", (uuid.uuid4().hex,))
            conn.execute("INSERT INTO meta VALUES('change', ?)", (uuid.uuid4().hex,))
        while version is not None and version != SCHEMA_VERSION:
            if version not in MIGRATIONS:
                raise env_error(
                    f"the database {path} has schema version {version}, which this eidetic "
                    f"(schema {SCHEMA_VERSION}) cannot read",
                    "upgrade eidetic; the file was left as it was",
                )
            version, steps = MIGRATIONS[version]
            for step in steps:
                if callable(step):
                    step(conn)
                else:
                    _run(conn, step)
            conn.execute("UPDATE meta SET value=? WHERE key='schema'", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        conn.close()
        raise


def _run(conn: sqlite3.Connection, script: str) -> None:
    """Run a script's statements inside the caller's transaction (``executescript`` would
    commit it first)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)
