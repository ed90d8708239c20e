"""Reading a transcript file for capture: a Claude Code transcript (JSON lines) or plain text,
bounded in size; the statements themselves are found by ``capture``."""

from __future__ import annotations

from pathlib import Path

from .capture import Captured, from_claude, from_text, looks_like_claude
from .payloads import MAX_TRANSCRIPT_BYTES


def read_transcript(path: Path, kind: str = "auto") -> tuple[list[Captured], dict[str, str]]:
    """The statements of the file at ``path`` (``kind``: auto, claude or text), and what a Claude
    Code transcript says of itself (``session``, ``cwd``). At most ``MAX_TRANSCRIPT_BYTES`` are read."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_TRANSCRIPT_BYTES)
    text = data.decode("utf-8", "replace")
    if kind == "auto":
        first = next((line for line in text.splitlines() if line.strip()), "")
        kind = "claude" if looks_like_claude(first) else "text"
    if kind == "claude":
        return from_claude(text.splitlines())
    return from_text(text), {}
