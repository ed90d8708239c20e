"""Helpers for tests of the postgres store: writing records, reading their ids back, and older
schema versions for upgrade tests. An older store is one written by this eidetic, then taken back
to an older version by undoing the later migrations step by step (each undo is the inverse of its
step in ``eidetic.stores.postgres.schema.MIGRATIONS``): its tables are then those the older
eidetic created, holding the records this one wrote."""

from __future__ import annotations

from eidetic.records import Record, Scope
from eidetic.stores.postgres import PostgresStore


def put(store: PostgresStore, *records: Record) -> None:
    with store.lock():
        store.write([(None, r) for r in records])


def rec(rid: str, text: str, scope: Scope | None = None, **fields) -> Record:
    return Record(id=rid, text=text, scope=scope or Scope(), **fields)


def ids(store: PostgresStore, hits) -> list[str]:
    """The record ids of (doc, score) hits, in order."""
    found = store.by_docs([doc for doc, _ in hits])
    return [found[doc].record.id for doc, _ in hits]


UNDO: dict[int, list[str]] = {
    7: ["DROP INDEX eidetic_docs_norm", "ALTER TABLE eidetic_docs DROP COLUMN norm"],
    8: [],  # keyword entries of a record's own words: data, not layout (the upgrade re-indexes)
    6: [
        "ALTER TABLE eidetic_docs DROP COLUMN occurred, DROP COLUMN valid_from, DROP COLUMN valid_until, DROP COLUMN history"
    ],
    5: [
        "DROP INDEX eidetic_docs_untrigrammed",
        "DROP INDEX eidetic_docs_trigrams",
        "ALTER TABLE eidetic_docs DROP COLUMN trigrams",
    ],
    4: [
        "DROP INDEX eidetic_docs_updated, eidetic_docs_created, eidetic_docs_name, eidetic_docs_supersedes, "
        "eidetic_docs_links"
    ],
    3: ["ALTER TABLE eidetic_docs ALTER COLUMN metadata TYPE jsonb USING metadata::jsonb"],
    2: [
        "DROP INDEX eidetic_postings_impact",
        "CREATE INDEX eidetic_postings_impact ON eidetic_postings(part, term, impact DESC) INCLUDE (doc)",
    ],
}


def downgrade(dsn: str, version: int) -> None:
    """Take the store at ``dsn`` (at the current version) back to schema ``version``."""
    import psycopg

    from eidetic.stores.postgres import SCHEMA_VERSION

    assert set(UNDO) == set(range(2, SCHEMA_VERSION + 1)), "a new migration needs its undo here"
    with psycopg.connect(dsn) as conn:
        for step in range(SCHEMA_VERSION, version, -1):
            for statement in UNDO[step]:
                conn.execute(statement)
        conn.execute("UPDATE eidetic_meta SET value = %s WHERE key = 'schema'", (str(version),))


def columns(dsn: str) -> set[str]:
    """The columns of the store's docs table."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        return {
            name
            for (name,) in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = 'eidetic_docs'::regclass AND attnum > 0 "
                "AND NOT attisdropped"
            )
        }
