"""An older eidetic on the postgres backend, in this process: its schema version, its migrations
and the docs columns it wrote and read, so a test can leave a store as that version did and
check that this one upgrades it in place."""

from __future__ import annotations

import pytest

CLOCK = ", occurred, valid_from, valid_until, history"  # the docs columns schema 6 added


def older_eidetic(patch: pytest.MonkeyPatch, version: int) -> None:
    """Make this process read and write as an eidetic of schema ``version`` did."""
    from eidetic.docsql import lookups, rows
    from eidetic.index import stored
    from eidetic.stores.postgres import schema, writes

    patch.setattr(schema, "SCHEMA_VERSION", version)
    patch.setattr(schema, "MIGRATIONS", [step for step in schema.MIGRATIONS if step[0] <= version])
    if version < 6:
        patch.setattr(writes, "_COPY_DOCS", writes._COPY_DOCS.replace(CLOCK, ""))
        patch.setattr(writes, "stored", lambda record: stored.stored(record)[:-4])
        patch.setattr(
            lookups, "doc_columns", lambda dialect: rows.doc_columns(dialect).replace(CLOCK.replace(", ", ", d."), "")
        )
        patch.setattr(lookups, "indexed", lambda dialect, row: rows.indexed(dialect, (*row, None, None, None, None)))
