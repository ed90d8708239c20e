"""Where a sentence model's files are: the bundled MiniLM, a local folder, or a Hugging Face id
downloaded once into the cache.

A Hugging Face id is fetched file by file from ``{endpoint}/{id}/resolve/main/{file}`` (plain
HTTPS, no account needed for public models) into a temporary folder that is renamed into place
only when every file has arrived, so an interrupted download leaves nothing half-written. Offline
(``HF_HUB_OFFLINE=1``) or unreachable, a model not yet in the cache is an environment error that
names it and says how to get it: recall then warns and ranks by keyword.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import env_error, user_error
from .http import is_loopback
from .sentence_config import CONFIG_FILES

if TYPE_CHECKING:
    import httpx

    from ..settings import Settings

BUNDLED = "sentence-transformers/all-MiniLM-L6-v2"
REQUIRED = ("config.json", "tokenizer.json", "model.safetensors")
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
COMPLETE = ".complete"  # written last into a downloaded folder


@dataclass(frozen=True)
class ModelSource:
    folder: Path | None  # None: the bundled package
    label: str  # how the user named it (errors and messages say this)
    bundled: bool  # the default model: its weights are checked against the official sha256


def locate(settings: Settings) -> ModelSource:
    """The model ``settings`` name (``EIDETIC_MODEL``), downloaded first when it is a Hugging Face
    id not yet in the cache."""
    name = settings.model.strip()
    if not name or name == BUNDLED:
        return ModelSource(settings.model_dir, BUNDLED, True)
    folder = Path(name).expanduser()
    if folder.is_dir():
        return ModelSource(folder.resolve(), str(folder.resolve()), False)
    if not HUB_ID.fullmatch(name) or ".." in name:
        raise user_error(
            f"EIDETIC_MODEL {name!r} is neither a folder nor a Hugging Face id",
            "e.g. EIDETIC_MODEL=BAAI/bge-small-en-v1.5 or a folder with model.safetensors (docs/models.md)",
        )
    target = settings.cache_dir / "models" / "hub" / name.replace("/", "--")
    if not (target / COMPLETE).exists():
        _download(name, target, settings)
    return ModelSource(target, name, False)


def _download(model: str, target: Path, settings: Settings) -> None:
    """Every file of ``model`` into ``target``, all or nothing."""
    if settings.model_offline:
        raise env_error(
            f"model {model} is not in the cache and downloads are off (HF_HUB_OFFLINE)",
            "run once online, or put its files in a folder and set EIDETIC_MODEL to it (docs/models.md)",
        )
    import httpx

    try:
        host = httpx.URL(settings.model_endpoint).host or "EIDETIC_MODEL_ENDPOINT"
    except httpx.InvalidURL:
        host = "EIDETIC_MODEL_ENDPOINT"
    partial = target.with_name(f".{target.name}.partial")  # replaced below by a unique folder
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=partial.name + ".", dir=target.parent))
        sys.stderr.write(f"downloading model {model} from {host} (once) ...\n")
        # A loopback mirror is reached directly, never through a proxy from *_PROXY (as http.py).
        transport = httpx.HTTPTransport() if is_loopback(host) else None
        with httpx.Client(timeout=settings.embed_timeout, follow_redirects=True, transport=transport) as client:
            for name in dict.fromkeys((*CONFIG_FILES, *REQUIRED)):
                _fetch(client, f"{settings.model_endpoint.rstrip('/')}/{model}/resolve/main/{name}", partial / name)
        missing = [name for name in REQUIRED if not (partial / name).exists()]
        if missing:
            raise env_error(
                f"model {model} has no {', '.join(missing)} at {host}",
                "check the id (eidetic needs model.safetensors and tokenizer.json: docs/models.md), "
                "or put its files in a folder and set EIDETIC_MODEL to it",
            )
        (partial / COMPLETE).touch()
        _move_into_place(partial, target)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise env_error(
            f"model {model} could not be downloaded from {host} ({type(exc).__name__})",
            "check the network (or EIDETIC_MODEL_ENDPOINT), or put its files in a folder and set EIDETIC_MODEL to it",
        ) from None
    except OSError as exc:
        raise env_error(f"model {model} could not be saved in the cache ({exc})", "set EIDETIC_CACHE_DIR") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _fetch(client: httpx.Client, url: str, path: Path) -> None:
    """One file; a 404 leaves it absent (most configuration files are optional)."""
    with client.stream("GET", url) as response:
        if response.status_code == 404:
            return
        response.raise_for_status()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            for block in response.iter_bytes(1 << 20):
                handle.write(block)


def _move_into_place(partial: Path, target: Path) -> None:
    """Rename the finished folder into place; another process may have got there first."""
    try:
        os.replace(partial, target)
    except OSError:
        if not (target / COMPLETE).exists():
            shutil.rmtree(target, ignore_errors=True)
            os.replace(partial, target)
