"""The ``postgres`` backend: a shared PostgreSQL server (with pgvector) is the store, for teams."""

from .store import SCHEMA_VERSION, PostgresStore

__all__ = ["SCHEMA_VERSION", "PostgresStore"]
