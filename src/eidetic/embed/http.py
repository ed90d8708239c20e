"""An embedder behind any OpenAI-compatible ``/embeddings`` endpoint (vLLM, Ollama, a gateway).

Configured by ``EIDETIC_EMBED_URL`` (e.g. ``http://localhost:8001/v1``), ``EIDETIC_EMBED_MODEL``,
``EIDETIC_EMBED_API_KEY`` and ``EIDETIC_EMBED_TIMEOUT`` (seconds, default 10). Texts go in
batches of ``BATCH``. Key rules: the explicit key is sent wherever it is configured;
a borrowed key (``COLLEAGUE_API_KEY``, ``CULTURE_VLLM_API_KEY``) only to https or loopback URLs,
and withholding it is said on stderr. A loopback endpoint is reached directly, never through a
proxy from ``*_PROXY``, so no key meets a proxy. Any failure, a malformed URL included, raises an
environment error naming at most the host (never the URL: it may hold a password); recall turns
that into a one-line warning and keyword ranking, never a silent fallback.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import env_error
from ..settings import BORROWED_KEYS

if TYPE_CHECKING:
    from ..settings import Settings

DEFAULT_MODEL = "Qwen/Qwen3-Embedding-0.6B"
BATCH = 64
_EXAMPLE = "e.g. EIDETIC_EMBED_URL=http://localhost:8001/v1"


def is_loopback(host: str) -> bool:
    """A loopback IP literal, or ``localhost`` / ``*.localhost`` when every address it resolves to
    is loopback: the name alone proves nothing (``/etc/hosts`` or a DNS server may point it
    anywhere), and a name that does not resolve is not loopback."""
    host = host.strip("[]").lower()
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if host != "localhost" and not host.endswith(".localhost"):
        return False
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, ValueError):  # unknown name; a label too long or not encodable
        return False
    return bool(addresses) and all(ipaddress.ip_address(address).is_loopback for address in addresses)


def choose_key(url: str, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(key to send, warning) from ``EIDETIC_EMBED_API_KEY`` and the borrowed keys in ``env``:
    explicit keys go anywhere; borrowed ones only where safe."""
    explicit = env.get("EIDETIC_EMBED_API_KEY", "").strip()
    if explicit:
        return explicit, None
    for name in BORROWED_KEYS:
        borrowed = env.get(name, "").strip()
        if borrowed:
            parts = urlsplit(url)
            if parts.scheme == "https" or is_loopback(parts.hostname or ""):
                return borrowed, None
            return None, (
                f"withholding the borrowed API key {name} from {parts.scheme}://{parts.hostname} "
                "(cleartext remote endpoint); set EIDETIC_EMBED_API_KEY or use https"
            )
    return None, None


class HttpEmbedder:
    """Texts -> L2-normalised float32 vectors from a remote model."""

    dimensions = 0  # known after the first response

    def __init__(
        self, url: str, model: str | None = None, timeout: float = 10.0, keys: Mapping[str, str] | None = None
    ) -> None:
        """``keys``: ``EIDETIC_EMBED_API_KEY`` and the borrowable keys, as ``choose_key`` reads them."""
        self.host = _checked_host(url)
        self.url = url.rstrip("/")
        self.name = model or DEFAULT_MODEL
        self.timeout = timeout
        self.direct = is_loopback(self.host)
        self.key, warning = choose_key(self.url, keys or {})
        if self.key and not (self.key.isascii() and self.key.isprintable()):  # said, never quoted
            raise env_error(
                "the API key holds characters an HTTP header cannot carry",
                "check EIDETIC_EMBED_API_KEY, " + " and ".join(BORROWED_KEYS),
            )
        if warning:
            sys.stderr.write(f"warning: {warning}\n")

    @classmethod
    def configured(cls, settings: Settings) -> HttpEmbedder:
        """The endpoint, model, timeout and keys of ``settings``."""
        keys = {"EIDETIC_EMBED_API_KEY": settings.embed_api_key, **settings.borrowed_keys}
        return cls(settings.embed_url, settings.embed_model or None, settings.embed_timeout, keys)

    def embed(self, texts: list[str], query: bool = False) -> Any:
        """``query`` changes nothing: the endpoint's model takes texts as they are."""
        import httpx
        import numpy as np

        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        # A client given its own transport ignores HTTP(S)_PROXY / ALL_PROXY (SSL_CERT_FILE still
        # applies): a loopback endpoint is reached directly and its key never meets a proxy.
        transport = httpx.HTTPTransport() if self.direct else None
        vectors: list[list[float]] = []
        try:
            with httpx.Client(timeout=self.timeout, transport=transport) as client:
                for start in range(0, len(texts), BATCH):
                    batch = texts[start : start + BATCH]
                    response = client.post(
                        f"{self.url}/embeddings", headers=headers, json={"model": self.name, "input": batch}
                    )
                    response.raise_for_status()
                    data = sorted(response.json()["data"], key=lambda item: item["index"])
                    if len(data) != len(batch):
                        raise ValueError(f"{len(data)} vectors for {len(batch)} texts")
                    vectors.extend(item["embedding"] for item in data)
        except httpx.InvalidURL:  # what the checks of __init__ let through; its text may quote the URL
            raise env_error("EIDETIC_EMBED_URL is not a valid URL", _EXAMPLE) from None
        except httpx.HTTPStatusError as exc:
            raise env_error(
                f"the embedder at {self.host} answered {exc.response.status_code}",
                "check EIDETIC_EMBED_URL, EIDETIC_EMBED_MODEL and the API key",
            ) from None
        except httpx.HTTPError as exc:
            raise env_error(
                f"the embedder at {self.host} is unreachable ({type(exc).__name__})",
                "check that it runs and EIDETIC_EMBED_URL, or unset it to use the local model",
            ) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise env_error(
                f"the embedder at {self.host} sent an unexpected answer ({exc})",
                "it must speak the OpenAI /embeddings format",
            ) from None
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or (self.dimensions and matrix.shape[1] != self.dimensions):
            raise env_error(f"the embedder at {self.host} changed vector size", "check EIDETIC_EMBED_MODEL")
        self.dimensions = matrix.shape[1]
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.clip(norms, 1e-12, None)


def _checked_host(url: str) -> str:
    """The host of a well-formed http(s) URL, or an environment error (recall degrades to keyword)
    that says what is wrong without quoting the URL: it may carry ``user:password@``."""
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c.isspace() for c in url):
        raise env_error("EIDETIC_EMBED_URL holds a control character or a space", _EXAMPLE)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is no number or out of range
    except ValueError:
        raise env_error("EIDETIC_EMBED_URL has an invalid port or host", _EXAMPLE) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise env_error("EIDETIC_EMBED_URL is not an http(s) URL with a host", _EXAMPLE)
    return parts.hostname
