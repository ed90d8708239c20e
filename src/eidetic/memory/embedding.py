"""Vectors for records and queries: the per-user vector cache, the model, and the one background
thread a query is embedded on while the stores rank by keyword."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import Any, cast

from ..embed import Embedder, default_embedder
from ..embed.cache import VectorCache
from ..errors import ENV_ERROR, EideticError
from ..progress import Progress, no_steps
from ..records import text_hash
from ..settings import Settings
from ..stores.base import RecordStore

# Texts embedded (and cached) per step: enough batches for every core (the local model), a few
# seconds of work, so little is lost if interrupted (an HTTP embedder splits it into requests).
EMBED_CHUNK = 256
# From this many texts a run shows progress: ~2 s at the measured 33 short texts/s (docs/benchmarks.md).
LONG_RUN = 64


class Embedding:
    """Computes each distinct text's vector once per model and keeps it (``embed.cache``)."""

    def __init__(self, cache: VectorCache, settings: Settings, progress: Progress | None = None) -> None:
        self.cache = cache
        self.settings = settings
        self.progress = progress or Progress()
        self._executor: ThreadPoolExecutor | None = None

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        self.cache.close()

    def embedder(self) -> tuple[Embedder | None, str | None]:
        """The configured embedder, or (None, why not): callers degrade to keyword and say so."""
        return default_embedder(self.settings)

    def background(self) -> ThreadPoolExecutor:
        """One thread: the model's matrix products release the GIL, so a query embeds there while
        this thread checks the stores and ranks by keyword (~11 ms of a hybrid recall)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eidetic-embed")
        return self._executor

    def query(self, embedder: Embedder, text: str) -> Future[Any]:
        return self.background().submit(query_vector, cast(Hashable, embedder), text)

    def vectors_for(self, store: RecordStore, embedder: Embedder, docs: list[tuple[int, str]]) -> dict[str, Any]:
        """hash -> vector for these (doc, text hash) pairs; computes and caches the missing ones."""
        found = self.cache.get(embedder.name, (h for _, h in docs))
        missing = [doc for doc, h in docs if h not in found]
        if missing:
            unique: dict[str, str] = {}
            for text in store.texts(missing).values():
                unique.setdefault(text_hash(text), text)
            found.update(self._embed(embedder, unique, "for semantic recall (once: they were stored without vectors)"))
        return found

    def ahead(
        self, embedder: Embedder, texts: dict[str, str], stores: Iterable[RecordStore]
    ) -> tuple[dict[str, Any], str | None]:
        """Vectors of texts about to be remembered (hash -> text), and the stores' vectors
        brought up to date, before a write takes its locks: its near-duplicates are then found
        by meaning under them (``memory.similar``). Returns (hash -> vector, None), or ({}, why
        not) when the embedder failed: the write goes on, judging by text alone."""
        try:
            vectors = self.cache.get(embedder.name, texts)
            vectors.update(self._embed(embedder, {h: t for h, t in texts.items() if h not in vectors}, "remembered"))
            for store in stores:
                store.sync_vectors(embedder.name, None, self._vectors_of(store, embedder))
        except EideticError as exc:
            if exc.code != ENV_ERROR:
                raise
            return {}, exc.message
        return vectors, None

    def remembered(self, embedder: Embedder, texts: dict[str, str], stores: Iterable[RecordStore]) -> str | None:
        """Embed texts just remembered (hash -> text) in chunks, with progress, and let the vector
        indexes of ``stores`` take the new rows now rather than at the first recall. Returns why
        not, when the embedder failed (the records are safe: recall computes them later)."""
        cached = self.cache.get(embedder.name, texts)
        missing = {h: texts[h] for h in texts if h not in cached}
        try:
            self._embed(embedder, missing, "remembered")
            for store in stores:
                store.sync_vectors(embedder.name, None, self._vectors_of(store, embedder))
        except EideticError as exc:
            if exc.code != ENV_ERROR:
                raise
            return exc.message
        return None

    def _embed(self, embedder: Embedder, texts: dict[str, str], why: str) -> dict[str, Any]:
        """hash -> vector of these texts (hash -> text), computed and cached a chunk at a time,
        with progress when there are many."""
        total = len(texts)
        step = self.progress.start(f"embedding {total} texts {why}", "text", total) if total >= LONG_RUN else no_steps
        hashes = sorted(texts, key=lambda h: len(texts[h]))  # like lengths share a batch: little padding
        vectors: dict[str, Any] = {}
        for start in range(0, total, EMBED_CHUNK):
            chunk = hashes[start : start + EMBED_CHUNK]
            new = dict(zip(chunk, embedder.embed([texts[h] for h in chunk])))
            self.cache.put(embedder.name, new.items())
            vectors.update(new)
            step(start + len(chunk))
        return vectors

    def _vectors_of(self, store: RecordStore, embedder: Embedder) -> Callable[[list[tuple[int, str]]], dict[str, Any]]:
        return lambda rows: self.vectors_for(store, embedder, rows)


@lru_cache(maxsize=256)
def query_vector(embedder: Embedder, query: str) -> Any:
    """Queries repeat (agents, MCP servers): each is embedded once per process."""
    return embedder.embed([query], query=True)[0]
