"""Token budgets. eidetic has no tokenizer of the agent's model, so a text's tokens are estimated
from its size: one token per 4 bytes of UTF-8, rounded up (English prose runs ~4 characters a
token; text in scripts of 3-byte characters comes out near one token a character, as the models'
tokenizers count it). An estimate, documented in docs/hooks.md, and the same everywhere."""

from __future__ import annotations

BYTES_PER_TOKEN = 4


def tokens(text: str) -> int:
    """The estimated tokens of ``text``."""
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def clip(text: str, budget: int) -> str:
    """``text`` cut at a word boundary to fit ``budget`` tokens, ending in an ellipsis when cut."""
    if tokens(text) <= budget:
        return text
    room = max(0, budget * BYTES_PER_TOKEN - 3)
    cut = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    space = cut.rfind(" ")
    if space > len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"
