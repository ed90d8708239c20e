"""An embedder behind any OpenAI-compatible ``/embeddings`` endpoint (vLLM, Ollama, a gateway).

Configured by ``EIDETIC_EMBED_URL`` (e.g. ``http://localhost:8001/v1``), ``EIDETIC_EMBED_MODEL``,
``EIDETIC_EMBED_API_KEY`` and ``EIDETIC_EMBED_TIMEOUT`` (seconds, default 10). Texts go in
batches of ``BATCH``. Key rules (seed 003): the explicit key is sent wherever it is configured;
a borrowed key (``COLLEAGUE_API_KEY``, ``CULTURE_VLLM_API_KEY``) only to https or loopback URLs,
and withholding it is said on stderr. Any failure raises an environment error naming the host;
recall turns that into a one-line warning and keyword ranking, never a silent fallback.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from ..errors import env_error, user_error

DEFAULT_MODEL = "Qwen/Qwen3-Embedding-0.6B"
BORROWED_KEYS = ("COLLEAGUE_API_KEY", "CULTURE_VLLM_API_KEY")
BATCH = 64


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def choose_key(url: str, environ: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    """(key to send, warning): explicit keys go anywhere; borrowed ones only where safe."""
    env = os.environ if environ is None else environ
    explicit = env.get("EIDETIC_EMBED_API_KEY", "").strip()
    if explicit:
        return explicit, None
    for name in BORROWED_KEYS:
        borrowed = env.get(name, "").strip()
        if borrowed:
            parts = urlsplit(url)
            if parts.scheme == "https" or is_loopback(parts.hostname or ""):
                return borrowed, None
            return None, (f"withholding the borrowed API key {name} from {parts.scheme}://{parts.hostname} "
                          "(cleartext remote endpoint); set EIDETIC_EMBED_API_KEY or use https")
    return None, None


class HttpEmbedder:
    """Texts -> L2-normalised float32 vectors from a remote model."""

    dimensions = 0  # known after the first response

    def __init__(self, url: str, model: str | None = None, timeout: float | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise user_error(f"EIDETIC_EMBED_URL is not an http(s) URL: {url!r}",
                             "e.g. EIDETIC_EMBED_URL=http://localhost:8001/v1")
        self.url = url.rstrip("/")
        self.host = parts.hostname
        self.name = model or DEFAULT_MODEL
        self.timeout = timeout if timeout is not None else _timeout()
        self.key, warning = choose_key(self.url)
        if warning:
            sys.stderr.write(f"warning: {warning}\n")

    def embed(self, texts: list[str]) -> Any:
        import httpx
        import numpy as np

        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        vectors: list[list[float]] = []
        try:
            with httpx.Client(timeout=self.timeout) as client:
                for start in range(0, len(texts), BATCH):
                    batch = texts[start:start + BATCH]
                    response = client.post(f"{self.url}/embeddings", headers=headers,
                                           json={"model": self.name, "input": batch})
                    response.raise_for_status()
                    data = sorted(response.json()["data"], key=lambda item: item["index"])
                    if len(data) != len(batch):
                        raise ValueError(f"{len(data)} vectors for {len(batch)} texts")
                    vectors.extend(item["embedding"] for item in data)
        except httpx.HTTPStatusError as exc:
            raise env_error(f"the embedder at {self.host} answered {exc.response.status_code}",
                            "check EIDETIC_EMBED_URL, EIDETIC_EMBED_MODEL and the API key") from None
        except httpx.HTTPError as exc:
            raise env_error(f"the embedder at {self.host} is unreachable ({type(exc).__name__})",
                            "check that it runs and EIDETIC_EMBED_URL, or unset it to use the local model") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise env_error(f"the embedder at {self.host} sent an unexpected answer ({exc})",
                            "it must speak the OpenAI /embeddings format") from None
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or (self.dimensions and matrix.shape[1] != self.dimensions):
            raise env_error(f"the embedder at {self.host} changed vector size", "check EIDETIC_EMBED_MODEL")
        self.dimensions = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.clip(norms, 1e-12, None)


def _timeout() -> float:
    raw = os.environ.get("EIDETIC_EMBED_TIMEOUT", "").strip()
    if not raw:
        return 10.0
    try:
        value = float(raw)
    except ValueError:
        raise user_error(f"EIDETIC_EMBED_TIMEOUT is not a number: {raw!r}", "seconds, e.g. 10") from None
    if value <= 0:
        raise user_error("EIDETIC_EMBED_TIMEOUT must be positive", "seconds, e.g. 10")
    return value
