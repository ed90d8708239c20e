"""``analyze`` (the words, then each word's stem looked up once per process) gives exactly the
terms of the keyword index's own analyzer, which tantivy applies to every record: otherwise a
query term, or a record's stored term counts, would miss the index's terms."""

from __future__ import annotations

import random

import pytest

from eidetic.index import analyzer
from eidetic.index.analyzer import analyze, text_analyzer
from eidetic.index.term_lines import field_lines
from eidetic.index.text_index import term_splitter

HOSTILE = [
    "İstanbul İİ ı KELVİN Kelvin sign K ſtraße STRASSE ß ﬁnance ﬀ",  # case changes that change length
    "Ǆemal ǅ ǆ ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ Ω ω",  # title-case letters, final sigma
    "e\u0301te\u0301 cafe\u0301 n\u0303 a\u0308\u0304",  # combining marks split words
    "١٢٣ ４５６ ⅻ ½ ²³ 𝟘𝟙𝟚 ௧௨",  # digits of other scripts
    "emoji 👍🏽 🇫🇷 zwj👨‍👩‍👧 zero\u200bwidth soft\u00adhyphen",
    "日本語のテキスト 中文 한국어 ไทย עברית العربية",
    "a" * 64 + " " + "b" * 65 + " " + "é" * 32 + " " + "é" * 33 + " " + "İ" * 32 + " " + "İ" * 33,
    "running runs ran easily fairly the THE The and generously generous's it's ITS",
    "\x00\x01 tab\tnew\nline\r\n\u2028sep\u2029para \ufeffbom \ufffd",
    "",
    "   ",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_analyze_gives_the_index_analyzers_terms(text: str) -> None:
    """Twice: the second time every stem comes from what the first remembered."""
    expected = text_analyzer().analyze(text) if text else []
    assert analyze(text) == expected
    assert analyze(text) == expected


@pytest.mark.parametrize("text", HOSTILE)
def test_the_index_is_given_the_analyzers_terms_whole(text: str) -> None:
    """The keyword index takes each field as the terms already analysed (``term_splitter``):
    split again, they are the analyzer's own, none broken or merged."""
    expected = text_analyzer().analyze(text) if text else []
    assert term_splitter().analyze(field_lines(None, None, text, False)[1][3]) == expected


def test_analyze_matches_on_random_unicode_words() -> None:
    """Random words drawn from letters, digits, marks, symbols and spaces of many scripts."""
    rng = random.Random(32)
    alphabet = "aAzZéÉßİıſﬁΣσςДдЖж日本ー한ไ١４ⅻ½\u0301\u0308\u00a0\u2003\u3000\u200b'-_. 👍ǅǄ"
    for _ in range(500):
        text = " ".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(20))
        expected = text_analyzer().analyze(text)
        assert analyze(text) == expected
        assert term_splitter().analyze(field_lines(None, None, text, False)[1][3]) == expected


def test_analyze_starts_over_past_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The remembered stems are bounded: past the limit they are dropped, and the terms stay right."""
    monkeypatch.setattr(analyzer, "STEMS_KEPT", 3)
    text = "alpha betas gammas deltas epsilons zetas etas"
    assert analyze(text) == text_analyzer().analyze(text)
    assert len(analyzer._parts()[2]) <= 3 + len(text.split())
    assert analyze("running") == ["run"]
