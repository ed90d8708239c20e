"""When two records say the same thing: identical once normalised, or close in meaning. Pure.

``remember`` reports a new record's near-duplicates in its scope (``similar_to``) and
``eidetic consolidate`` groups them; both use these two rules, so what one reports the other
finds. ``SIMILAR_COSINE`` is a cosine of the default model's vectors (length 1); how it was
chosen, on which data, is in docs/benchmarks.md ("Near-duplicates").
"""

from __future__ import annotations

import re
import unicodedata

SIMILAR_COSINE = 0.9  # placeholder until calibrated on data (docs/benchmarks.md)

_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """The text as its words alone: compatibility forms folded (NFKC), case folded,
    punctuation dropped and whitespace collapsed. Two records with the same normalised text
    are near-duplicates whatever their vectors say ("Use  uv." and "use uv")."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


def is_similar(cosine: float, threshold: float = SIMILAR_COSINE) -> bool:
    """Whether two records' vectors are close enough to call them the same memory."""
    return cosine >= threshold
