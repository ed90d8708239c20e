"""The ``postgres`` backend: a shared PostgreSQL server (with pgvector) is the store, for teams.

Everything lives in the server, so every agent of a team sees one store: records (``docs``),
their keyword postings, text embeddings (shared by text hash, so a team embeds each text once
per model) and usage counters (bumped with atomic upserts, so concurrent recalls lose nothing).
Tables are prefixed ``eidetic_`` and created in the connection's current schema (pick another
with ``options=-csearch_path=...`` in the DSN); eidetic creates and upgrades them itself.

Keyword ranking is BM25 over the same analysed terms and field weights as the embedded backends,
with statistics per visibility partition so another scope's private records never shift a
caller's scores. Ranking every record that shares a term took ~300 ms at 100k records, so
``keyword`` runs the threshold algorithm over impact-ordered postings and still returns exactly
the BM25 top.

Exact (substring) search needs no extension either (``pg_trgm`` is often missing): each row
carries its text's trigrams, which eidetic computes, in a core GIN index. A query with a rare
trigram is answered from that index; one made of common trigrams walks the texts by length,
which finds common phrases at once (``exact``, ``trigrams``).

The parts, one job each:

- ``store``: ``PostgresStore``, the storage interface, handing work to the parts below
- ``connection``: server sessions, reconnects, lost servers as environment errors, the writer lock
- ``schema``: tables, schema versions and in-place migrations, advisory lock keys
- ``scope``: partition ids and the SQL of scope, lifecycle and filters
- ``writes``: record rows and their keyword entries, re-indexing
- ``postings``: the keyword index (postings, impacts, frequencies, partition totals)
- ``keyword``: the exact BM25 top k (threshold algorithm) over that index
- ``bm25_bounds``: its arithmetic, pure NumPy
- ``exact``: substring search, by the walk or the trigram filter, picked by the column's statistics
- ``trigrams``: what the filter indexes (folding that agrees with the server's case mapping)
- ``vectors``: embeddings, the pgvector HNSW graph per model, nearest and cosines

Importing the package loads neither psycopg nor NumPy: they load once a store is used.
"""

from .schema import SCHEMA_VERSION
from .store import PostgresStore

__all__ = ["SCHEMA_VERSION", "PostgresStore"]
