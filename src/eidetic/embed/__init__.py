"""Embedders: texts in, unit vectors out. One interface for the local model (and, later, an
HTTP endpoint), chosen here; callers never import NumPy or a model unless they need vectors."""

from __future__ import annotations

import os
from typing import Any, Protocol

from ..errors import ENV_ERROR, EideticError


class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> Any:  # (n, dimensions) float32, rows of norm 1
        ...


def default_embedder() -> tuple[Embedder | None, str | None]:
    """The embedder to use, or (None, why not): the caller degrades to keyword and says so.
    ``EIDETIC_EMBED_URL`` selects a remote OpenAI-compatible model (a malformed one is a reason,
    like an unreachable one: recall warns and ranks by keyword); ``EIDETIC_EMBEDDER=none`` turns
    semantic recall off."""
    if os.environ.get("EIDETIC_EMBEDDER", "").strip().lower() in ("none", "off", "0"):
        return None, "EIDETIC_EMBEDDER=none"
    url = os.environ.get("EIDETIC_EMBED_URL", "").strip()
    if url:
        from .http import HttpEmbedder

        try:
            return HttpEmbedder(url, os.environ.get("EIDETIC_EMBED_MODEL", "").strip() or None), None
        except EideticError as exc:
            if exc.code != ENV_ERROR:  # a bad EIDETIC_EMBED_TIMEOUT stays an error of the command
                raise
            return None, exc.message
    try:
        from . import local

        return local.load(), None
    except EideticError as exc:
        return None, exc.message
    except ImportError as exc:  # numpy / tokenizers / safetensors missing
        return None, f"the local embedder cannot load ({exc})"
