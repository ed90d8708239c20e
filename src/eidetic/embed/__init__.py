"""Embedders: texts in, unit vectors out. One interface for the local model (and, later, an
HTTP endpoint), chosen here; callers never import NumPy or a model unless they need vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EideticError

if TYPE_CHECKING:
    from ..settings import Settings


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str], query: bool = False) -> Any:  # (n, dimensions) float32, rows of norm 1
        """``query``: the texts are queries (a model may prompt them differently from documents)."""


def default_embedder(settings: Settings) -> tuple[Embedder | None, str | None]:
    """The embedder to use, or (None, why not): the caller degrades to keyword and says so.
    ``EIDETIC_EMBED_URL`` selects a remote OpenAI-compatible model (a malformed one is a reason,
    like an unreachable one: recall warns and ranks by keyword); ``EIDETIC_EMBEDDER=none`` turns
    semantic recall off."""
    if settings.semantic_off:
        return None, "EIDETIC_EMBEDDER=none"
    if settings.embed_url:
        from .http import HttpEmbedder

        try:
            return HttpEmbedder.configured(settings), None
        except EideticError as exc:
            return None, exc.message
    try:
        from . import batches, local, model_files

        model = local.load(cache=settings.cache_dir, source=model_files.locate(settings))
        model.threads = settings.embed_threads or batches.cores()
        model.runtime = settings.embed_runtime
        return model, None
    except EideticError as exc:
        return None, exc.message
    except ImportError as exc:  # numpy / tokenizers / safetensors missing
        return None, f"the local embedder cannot load ({exc})"
