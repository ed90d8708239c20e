"""Embedders: texts in, unit vectors out. One interface for the local model (and, later, an
HTTP endpoint), chosen here; callers never import NumPy or a model unless they need vectors."""

from __future__ import annotations

import os
from typing import Any, Protocol

from ..errors import EideticError


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> Any:  # (n, dimensions) float32, rows of norm 1
        ...


def default_embedder() -> tuple[Embedder | None, str | None]:
    """The embedder to use, or (None, why not): the caller degrades to keyword and says so.
    ``EIDETIC_EMBED_URL`` selects a remote OpenAI-compatible model; ``EIDETIC_EMBEDDER=none``
    turns semantic recall off."""
    if os.environ.get("EIDETIC_EMBEDDER", "").strip().lower() in ("none", "off", "0"):
        return None, "EIDETIC_EMBEDDER=none"
    url = os.environ.get("EIDETIC_EMBED_URL", "").strip()
    if url:
        from .http import HttpEmbedder

        return HttpEmbedder(url, os.environ.get("EIDETIC_EMBED_MODEL", "").strip() or None), None
    try:
        from . import local

        return local.load(), None
    except EideticError as exc:
        return None, exc.message
    except ImportError as exc:  # numpy / tokenizers / safetensors missing
        return None, f"the local embedder cannot load ({exc})"
