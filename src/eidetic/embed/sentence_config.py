"""What a sentence model's own files say about how to use it: pooling, prompts, length.

A sentence-transformers model folder declares its modules (``modules.json``: transformer, then
pooling, then maybe ``Normalize``), its pooling (``1_Pooling/config.json``), its longest input
(``sentence_bert_config.json``) and the prompts put before queries and documents
(``config_sentence_transformers.json``). A folder with none of these is used as
sentence-transformers would use it: mean pooling, the model's longest input, no prompts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import env_error

# The files that decide a model's vectors (with the weights): all of them are fingerprinted.
CONFIG_FILES = (
    "config.json",
    "tokenizer.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)
POOLINGS = {"pooling_mode_cls_token": "cls", "pooling_mode_mean_tokens": "mean", "pooling_mode_max_tokens": "max"}
UNSUPPORTED = ("pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")


@dataclass(frozen=True)
class SentenceConfig:
    """How texts become one vector with this model."""

    pooling: str  # "mean", "cls" or "max"
    normalised: bool  # whether the model declares a Normalize module (eidetic always normalises)
    max_tokens: int
    query_prompt: str
    document_prompt: str


def _json(folder: Path, name: str, label: str) -> dict[str, Any]:
    path = folder / name
    if not path.exists():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise env_error(f"model {label}: {name} is unreadable ({exc})", "download or copy the model again") from None
    if not isinstance(value, (dict, list)):
        raise env_error(f"model {label}: {name} is not a JSON object", "download or copy the model again")
    return value if isinstance(value, dict) else {"modules": value}


def read(folder: Path, label: str, model_config: dict[str, Any]) -> SentenceConfig:
    """The sentence configuration of the model in ``folder`` (``label`` names it in errors)."""
    modules = _json(folder, "modules.json", label).get("modules", [])
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    pooling_path = next(
        (m.get("path", "") for m in modules if isinstance(m, dict) and str(m.get("type", "")).endswith("Pooling")),
        "1_Pooling",
    )
    pooling = _pooling(_json(folder, f"{pooling_path}/config.json", label), label)
    limit = int(model_config.get("max_position_embeddings", 512))
    wanted = _json(folder, "sentence_bert_config.json", label).get("max_seq_length") or limit
    settings = _json(folder, "config_sentence_transformers.json", label)
    prompts = settings.get("prompts") or {}
    default = prompts.get(settings.get("default_prompt_name") or "", "")
    document = prompts.get("document", prompts.get("passage", default))
    return SentenceConfig(
        pooling=pooling,
        normalised="Normalize" in kinds,
        max_tokens=min(int(wanted), limit),
        query_prompt=str(prompts.get("query", default) or ""),
        document_prompt=str(document or ""),
    )


def _pooling(config: dict[str, Any], label: str) -> str:
    """The one pooling mode the configuration turns on (mean when it says nothing)."""
    chosen = [name for name in (*POOLINGS, *UNSUPPORTED) if config.get(name)]
    if not chosen:
        return "mean"
    if len(chosen) > 1 or chosen[0] not in POOLINGS:
        names = ", ".join(c.removeprefix("pooling_mode_") for c in chosen)
        raise env_error(
            f"model {label} pools by {names}, which eidetic does not support",
            "use a model with mean, cls or max pooling (docs/models.md)",
        )
    return POOLINGS[chosen[0]]


def fingerprint(folder: Path, weights: Path) -> str:
    """A digest of everything that decides the model's vectors: its configuration files and its
    weights' size and modification time (hashing ~100 MB of weights on every start would cost
    ~0.3 s). Vectors are cached under it, so two models' vectors never mix."""
    digest = hashlib.sha256()
    for name in CONFIG_FILES:
        path = folder / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"-") + b"\0")
    st = weights.stat()
    digest.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return digest.hexdigest()
