"""When two records say the same thing: identical once normalised, or close in meaning. Pure.

``remember`` reports a new record's near-duplicates in its scope (``similar_to``) and
``eidetic consolidate`` groups them; both use these two rules, so what one reports the other
finds. Close in meaning is a cosine of the default model's vectors (length 1) at
``SIMILAR_COSINE`` or above *and* the same particulars (``ranking.particulars``: numbers, ids,
versions, dates, addresses, names), since records made from one template come that close
while saying different things. How the line was chosen, on which data, and what the
particulars rule changes there is in docs/benchmarks.md ("Near-duplicates").
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from .particulars import differ, particulars

# Chosen on LoCoMo's tuning conversations (an observation fact and the turn it restates against
# the other turns of its conversation): the lowest line from which fact-turn precision stays
# >= 0.95; held-out precision 1.000 (benchmarks/near_duplicates.py, docs/benchmarks.md).
SIMILAR_COSINE = 0.88

_WORD = re.compile(r"\w+")  # the words; whatever lies between them (spaces, punctuation) is one space
# In ASCII text a word character is a letter, a digit or "_": every other character is a gap.
_ASCII_GAPS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})


def normalised(text: str) -> str:
    """The text as its words alone: compatibility forms folded (NFKC), case folded,
    punctuation dropped and whitespace collapsed. Two records with the same normalised text
    are near-duplicates whatever their vectors say ("Use  uv." and "use uv"). ASCII text (NFKC
    leaves it as it is, and its case folds as ``lower`` does) takes a path about twice as
    fast as the regular expression: a bulk remember normalises every text it writes."""
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_GAPS).split())
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def normal_key(text: str) -> str:
    """A hash of the text's normalised form: stored with each record, so a remember finds the
    stored records its texts repeat in one lookup, however many there are (``Record.norm``
    keeps it with the record, computed once)."""
    return hashlib.sha256(normalised(text).encode("utf-8")).hexdigest()[:32]


def same_particulars(text: str, other: str) -> bool:
    """Whether neither text has a number, id, date or name the other does not say
    (``ranking.particulars``)."""
    return not differ(particulars(text), particulars(other))


def near_in_meaning(cosine: float, text: str, other: str, threshold: float = SIMILAR_COSINE) -> bool:
    """Whether two texts whose vectors have ``cosine`` say the same memory: close enough, with
    the same particulars."""
    return cosine >= threshold and same_particulars(text, other)
