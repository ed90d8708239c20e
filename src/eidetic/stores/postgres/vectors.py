"""The postgres backend's text embeddings: one table for every model, shared by text hash (a
team embeds each text once per model), a pgvector HNSW graph per model, and the searches over
them. numpy and psycopg's SQL composition are imported only when vectors are used."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...docsql.admission import Admission
from ...errors import env_error
from ...ranking.access import Access
from ...ranking.filters import Filters
from .schema import VACUUM_AFTER, VECTOR_LOCK

if TYPE_CHECKING:
    from .connection import Session
    from .scope import Partitions

# hnsw.ef_search for nearest(), never below the pool asked for (a recall asks for 100+). Recall@10
# against exact search at 100k embedding-like vectors (benchmarks/postgres_speed.py), over two
# graph builds: ef 40 gave 0.966 and 0.941 (graphs differ between builds), ef 100 0.992 and
# 0.9835 for ~0.7 ms more; so 100, which holds >= 0.95 with a margin.
EF_SEARCH = 100
HNSW_BUILD_MEMORY = "512MB"  # maintenance_work_mem for a graph build: 100k x 384-d fits


class Vectors:
    """Stores vectors and searches them. The schema exists by the time any of these runs."""

    def __init__(self, session: Session, partitions: Partitions) -> None:
        self._session = session
        self._partitions = partitions

    def sync(
        self, model: str, access: Access | None, vectors_for: Callable[[list[tuple[int, str]]], dict[str, Any]]
    ) -> None:
        """Store vectors of ``model`` for the docs past each partition's high-water mark that
        have none yet (by text hash: a text embedded for any record, of any scope, is not
        embedded again). Docs are numbered in commit order (writers hold WRITE_LOCK when they
        draw numbers), so a mark never skips a record committed later."""
        conn = self._session.conn
        if access is None:
            parts = [part for (part,) in conn.execute("SELECT part FROM eidetic_partitions")]
        else:
            parts = self._partitions.in_reach(access)
        marks = dict(
            conn.execute(
                "SELECT part, last_doc FROM eidetic_vector_marks WHERE model = %s AND part = ANY(%s)", (model, parts)
            ).fetchall()
        )
        upto = conn.execute("SELECT coalesce(max(doc), 0) FROM eidetic_docs").fetchone()[0]
        behind = [part for part in parts if marks.get(part, 0) < upto]
        if not behind:
            return
        rows = conn.execute(
            """SELECT d.doc, d.hash FROM eidetic_docs d
               JOIN unnest(%s::int[], %s::bigint[]) AS m(part, last_doc) ON d.part = m.part
               WHERE d.doc > m.last_doc AND d.doc <= %s AND NOT EXISTS (
                   SELECT 1 FROM eidetic_embeddings e WHERE e.model = %s AND e.hash = d.hash)
               ORDER BY d.doc""",
            (behind, [marks.get(p, 0) for p in behind], upto, model),
        ).fetchall()
        if rows:
            found = vectors_for(rows)  # outside any transaction: embedding may take a while
            self._store(model, {h: found[h] for _, h in rows})
        with conn.transaction():
            conn.execute(
                """INSERT INTO eidetic_vector_marks(model, part, last_doc) SELECT %s, p, %s FROM unnest(%s::int[]) p
                   ON CONFLICT (model, part) DO UPDATE
                   SET last_doc = greatest(eidetic_vector_marks.last_doc, excluded.last_doc)""",
                (model, upto, behind),
            )

    def _store(self, model: str, vectors: dict[str, Any]) -> None:
        """Insert vectors (binary COPY through a temporary table, then an upsert that keeps what
        a concurrent sync stored first); the model's HNSW graph is built once its first vectors
        are in (building over a full table is much faster than growing it row by row)."""
        import numpy as np

        conn = self._session.conn
        dims = len(next(iter(vectors.values())))
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (VECTOR_LOCK,))
            known = conn.execute("SELECT dims, graph FROM eidetic_vector_models WHERE model = %s", (model,)).fetchone()
            if known is not None and known[0] != dims:
                raise env_error(
                    f"the store at {self._session.target} holds {known[0]}-dimensional vectors for "
                    f"{model}, the embedder gave {dims}",
                    "check EIDETIC_EMBED_MODEL",
                )
            conn.execute(
                "CREATE TEMP TABLE IF NOT EXISTS eidetic_incoming(hash text, embedding vector) ON COMMIT DELETE ROWS"
            )
            with conn.cursor() as cur, cur.copy("COPY eidetic_incoming FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "vector"])
                for h, vector in vectors.items():
                    copy.write_row((h, np.asarray(vector, dtype=np.float32)))
            conn.execute(
                "INSERT INTO eidetic_embeddings(model, hash, embedding) SELECT %s, hash, embedding "
                "FROM eidetic_incoming ON CONFLICT (model, hash) DO NOTHING",
                (model,),
            )
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

        conn = self._session.conn
        name = "eidetic_hnsw_" + hashlib.sha256(model.encode()).hexdigest()[:16]
        conn.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
        conn.execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON eidetic_embeddings USING hnsw ((embedding::vector({})) "
                "vector_cosine_ops) WHERE model = {}"
            ).format(sql.Identifier(name), sql.Literal(dims), sql.Literal(model))
        )
        conn.execute(
            "INSERT INTO eidetic_vector_models(model, dims, graph) VALUES(%s, %s, %s) "
            "ON CONFLICT (model) DO UPDATE SET graph = excluded.graph",
            (model, dims, name),
        )

    def nearest(self, model: str, query: Any, access: Access, filters: Filters, pool: int) -> dict[int, float]:
        """The ``pool`` admitted docs nearest to ``query`` by cosine, through the model's HNSW
        graph with iterative scans (it keeps walking while scope and filters reject rows). On
        the ``reader`` session, so that it may run beside a keyword search."""
        import numpy as np
        from psycopg import sql

        conn = self._session.reader
        row = conn.execute("SELECT dims FROM eidetic_vector_models WHERE model = %s", (model,)).fetchone()
        if row is None:
            return {}
        admission = Admission.of(self._session.dialect, access, filters)
        q = np.asarray(query, dtype=np.float32)
        distance = sql.SQL("(e.embedding::vector({dims}) <=> %s::vector({dims}))").format(dims=sql.Literal(row[0]))
        statement = sql.SQL(
            "SELECT d.doc, 1 - {distance}" + admission.metadata + " FROM eidetic_embeddings e "
            "JOIN eidetic_docs d ON d.hash = e.hash WHERE e.model = {model} AND "
            + admission.sql
            + " ORDER BY {distance} LIMIT %s"
        ).format(distance=distance, model=sql.Literal(model))
        window = pool if not admission.in_python else 4 * pool
        while True:
            with conn.transaction():
                conn.execute(
                    "SELECT set_config('hnsw.ef_search', %s, true), "
                    "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                    (str(max(EF_SEARCH, window)),),
                )
                rows = conn.execute(statement, [q, *admission.params, q, window]).fetchall()
            found = {doc: float(score) for doc, score in admission.kept(rows)}
            if len(found) >= pool or len(rows) < window:
                return dict(sorted(found.items(), key=lambda item: -item[1])[:pool])
            window *= 4

    def cosines(self, model: str, query: Any, access: Access, docs: Sequence[int]) -> dict[int, float]:
        """Exact cosines of these docs' vectors, for docs in the caller's reach."""
        import numpy as np

        parts = self._partitions.in_reach(access)
        rows = self._session.conn.execute(
            "SELECT d.doc, 1 - (e.embedding <=> %s) FROM eidetic_docs d JOIN eidetic_embeddings e "
            "ON e.model = %s AND e.hash = d.hash WHERE d.doc = ANY(%s) AND d.part = ANY(%s)",
            (np.asarray(query, dtype=np.float32), model, list(docs), parts),
        ).fetchall()
        return {doc: float(score) for doc, score in rows}

    def of_docs(self, model: str, access: Access, docs: Sequence[int]) -> Any:
        """These docs' vectors as one float32 matrix, a row per doc (zeros: none, or out of
        reach), read through a binary COPY (100k rows in about a second)."""
        import numpy as np

        conn = self._session.conn
        row = conn.execute("SELECT dims FROM eidetic_vector_models WHERE model = %s", (model,)).fetchone()
        out = np.zeros((len(docs), row[0] if row is not None else 0), dtype=np.float32)
        if row is None or not len(docs):
            return out
        position = {doc: i for i, doc in enumerate(docs)}
        query = (
            "COPY (SELECT d.doc, e.embedding FROM eidetic_docs d JOIN eidetic_embeddings e ON e.model = {} "
            "AND e.hash = d.hash WHERE d.doc = ANY({}) AND d.part = ANY({})) TO STDOUT WITH (FORMAT BINARY)"
        )
        from psycopg import sql

        statement = sql.SQL(query).format(
            sql.Literal(model),
            sql.Literal(list(map(int, docs))),
            sql.Literal(self._partitions.in_reach(access)),
        )
        with conn.cursor() as cur, cur.copy(statement) as copy:
            copy.set_types(["bigint", "vector"])
            for doc, vector in copy.rows():
                out[position[doc]] = vector.to_numpy()
        return out
