"""Text analysis for the keyword index: letter/digit tokens, lower case, a stop list, Snowball
English stems.

One analysis (tantivy's filters, configured here) serves both sides: records are analysed by
:func:`analyze` for their stored terms, which are also what the keyword index is given
(``term_lines.field_lines``), and queries go through :func:`query_terms`, so a query term
matches exactly the index terms it should. Stemming with a stop list was worth +0.025 nDCG@10 on SciFact and
+0.07 recall@10 on LoCoMo over plain tokens (docs/benchmarks.md).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

MAX_TOKEN_BYTES = 64  # longer tokens (hashes, base64) are noise for BM25 and are dropped

# A short English stop list: function words that carry no topic. Kept small on purpose:
# words such as "not" or "never" can matter to a memory and stay searchable.
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t d ll m re ve
""".split()
)


STEMS_KEPT = 200_000  # words whose stem is remembered; past that the memory starts over


@lru_cache(maxsize=1)
def text_analyzer() -> Any:
    """The analysis as one tantivy analyzer, ``_words`` then the English stemmer: what
    :func:`analyze` gives in two steps (``tests/test_analyzer.py`` holds them equal)."""
    import tantivy

    return _words_builder().filter(tantivy.Filter.stemmer("english")).build()


def _words_builder() -> Any:
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword(sorted(STOP_WORDS)))
    )


@lru_cache(maxsize=1)
def _parts() -> tuple[Any, Any, dict[str, str]]:
    """The analyzer in two steps: the words (every filter but the stemmer), and the stemmer
    alone on one word (tantivy's raw tokenizer: the word whole), with the stems found so far."""
    import tantivy

    stemmer = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.stemmer("english")).build()
    return _words_builder().build(), stemmer, {}


def analyze(text: str) -> list[str]:
    """Index terms of ``text``, in order, with repeats (term frequency matters to BM25): the
    same terms as ``text_analyzer`` gives (the stemmer maps each word alone), with each word's
    stem looked up once per process. Stemming is over half of the analysis, and every record
    of a bulk remember is analysed here, once, for its stored terms and its keyword entries
    (``term_lines.field_lines``, docs/benchmarks.md)."""
    if not text:
        return []
    words, stemmer, stems = _parts()
    found = words.analyze(text)
    try:
        return list(map(stems.__getitem__, found))
    except KeyError:
        if len(stems) > STEMS_KEPT:
            stems.clear()
        terms = []
        for word in found:
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = stemmer.analyze(word)[0]
            terms.append(stem)
        return terms


def query_terms(query: str) -> list[str]:
    """Distinct index terms of a query, in order of first appearance."""
    return list(dict.fromkeys(analyze(query)))
