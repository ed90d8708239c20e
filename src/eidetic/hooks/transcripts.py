"""Reading a transcript file for capture: a Claude Code transcript (JSON lines) or plain text,
bounded in size; the statements themselves are found by ``capture``.

A file a person names (``eidetic capture FILE``) may be any regular file, through a symlink; a
hook payload's ``transcript_path`` is the agent's word only, so it must be a regular file in the
agent's own transcript folders and no symlink (else a payload could have any file of the user's
stored). Neither is ever a FIFO or a device (``regular``: a read must not hang or run forever)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .capture import Captured, from_claude, from_text, looks_like_claude
from .payloads import MAX_TRANSCRIPT_BYTES
from .regular import read_regular


def read_transcript(
    path: Path, kind: str = "auto", within: Sequence[Path] | None = None
) -> tuple[list[Captured], dict[str, str]]:
    """The statements of the file at ``path`` (``kind``: auto, claude or text), and what a Claude
    Code transcript says of itself (``session``, ``cwd``). At most ``MAX_TRANSCRIPT_BYTES`` are read.
    ``within`` (a hook's payload): the folders the file must lie in, itself no symlink. Raises
    ``regular.Refused`` (``regular.Missing``) saying why a file is not read."""
    data = read_regular(path, MAX_TRANSCRIPT_BYTES, follow=within is None, within=within)
    text = data.decode("utf-8", "replace")
    if kind == "auto":
        first = next((line for line in text.splitlines() if line.strip()), "")
        kind = "claude" if looks_like_claude(first) else "text"
    if kind == "claude":
        return from_claude(text.splitlines())
    return from_text(text), {}
