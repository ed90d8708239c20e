"""Exact recall's chunk index: each text is given to tantivy as a ``chunk_line`` split at spaces,
which must yield the chunks tantivy's regular-expression tokenizer (``(?s).{1,3}``, lower-cased)
gave before, whitespace standing for one character; and no occurrence of a query may be missed
whatever whitespace, marks or astral characters the texts hold."""

from __future__ import annotations

import random

import pytest

from eidetic.index.text_index import CHUNK_GAPS, chunk_line, chunk_splitter
from test_analyzer import HOSTILE

# spaces of every kind, the stand-in itself, a vertical tab tantivy does not split at, marks,
# case changes that change length, astral characters
ALPHABET = "aAbBzZ \t\n\r\x0c\x0b\x1f\u00a0\u2003é\u0301İßﬁ日👍𝟘"


def regex_chunks(text: str) -> list[str]:
    """The chunks as tantivy's own tokenizer cut them, whitespace made the stand-in."""
    import tantivy

    chunker = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"(?s).{1,3}")).filter(tantivy.Filter.lowercase())
    return [chunk.translate(CHUNK_GAPS) for chunk in chunker.build().analyze(text)] if text else []


@pytest.mark.parametrize("text", [*HOSTILE, "a", "ab", "abc", "abcd", "  \t", "\x1f\x1f\x1f x"])
def test_a_chunk_line_splits_into_the_texts_chunks(text: str) -> None:
    assert chunk_splitter().analyze(chunk_line(text)) == regex_chunks(text)


def test_chunk_lines_of_random_texts() -> None:
    rng = random.Random(36)
    for _ in range(2000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        assert chunk_splitter().analyze(chunk_line(text)) == regex_chunks(text), repr(text)


def test_exact_recall_misses_no_occurrence_across_whitespace(store) -> None:
    """Texts of words between tabs, newlines, carriage returns, form feeds and the stand-in
    itself; every ASCII query of 5+ characters (the ones the chunk index answers) cut from them
    finds exactly the texts that hold it, case aside: the stand-in only adds candidates, which
    the database's check turns away."""
    from eidetic import Memory

    rng = random.Random(37)
    words = ["alpha", "Beta", "gam", "x", "the", "\x1f", "é", "👍"]
    gaps = [" ", "  ", "\t", "\n", "\r\n", "\x0c", "\x1f", " \x1f"]
    made = ("".join(rng.choice(words) + rng.choice(gaps) for _ in range(rng.randint(1, 10))) for _ in range(150))
    texts = list(dict.fromkeys(text for text in made if text.strip()))
    with Memory.open() as memory:
        memory.remember([{"id": f"t{i}", "text": t} for i, t in enumerate(texts)])
        asked = 0
        while asked < 120:
            source = rng.choice(texts)
            start = rng.randrange(len(source))
            query = source[start : start + rng.randint(5, 14)]
            if len(query) < 5 or not query.isascii() or not query.strip():
                continue
            asked += 1
            got = {h.record.id for h in memory.recall(query, mode="exact", top_k=200, record=False).items}
            want = {f"t{i}" for i, t in enumerate(texts) if query.lower() in t.lower()}
            assert got == want, repr(query)
