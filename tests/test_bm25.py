"""BM25 under summed statistics (``ranking.bm25``) and the stored term counts it reads
(``index.text_index``): the pieces the union ranking of every backend rests on."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import field_counts
from eidetic.index.analyzer import analyze, text_analyzer
from eidetic.index.term_lines import field_lines
from eidetic.index.text_index import (
    CHUNK_FIELD,
    LENGTH_FIELDS,
    TERMS_FIELD,
    TextIndex,
    chunk_line,
    decode_counts,
)
from eidetic.ranking.bm25 import FIELDS, K1, B, KeywordStats, Scorer, growth

TERMS = ["otter", "dam", "beaver", "2026", "x"]
COUNTS = st.lists(st.dictionaries(st.sampled_from(TERMS), st.integers(1, 5), max_size=4), min_size=4, max_size=4)


def _stats_of(records: list[list[dict[str, int]]], terms: list[str]) -> KeywordStats:
    return sum(
        (
            KeywordStats(1, tuple(sum(f.values()) for f in c), {t: tuple(int(t in f) for f in c) for t in terms})
            for c in records
        ),
        KeywordStats(),
    )


@settings(max_examples=50, deadline=None)
@given(records=st.lists(COUNTS, min_size=1, max_size=8), cut=st.integers(0, 8))
def test_statistics_sum_the_same_however_records_are_grouped(records, cut):
    whole = _stats_of(records, TERMS)
    parts = _stats_of(records[:cut], TERMS) + _stats_of(records[cut:], TERMS)
    assert parts == whole
    for counts in records:
        assert parts.score(TERMS, counts) == whole.score(TERMS, counts)


def test_a_score_is_the_textbook_bm25():
    counts = field_counts(None, None, "otters build dams", False)  # outside a thread: its text in context only
    other = field_counts("Beavers", None, "beavers and otters everywhere", False)
    stats = _stats_of([counts, other], ["otter"])
    n, df, average = 2, 2, (3 + 3) / 2  # context lengths 3 and 3 ("and" is a stop word)
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    expected = FIELDS[3][1] * idf * 1 * (K1 + 1) / (1 + K1 * (1 - B + B * 3 / average))
    assert stats.score(["otter"], counts) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(mine=st.lists(COUNTS, min_size=1, max_size=6), others=st.lists(COUNTS, max_size=6), which=st.integers(0, 5))
def test_growth_bounds_the_union_score_by_the_local_one(mine, others, which):
    """A partition ranks with the union's idf and its own averages; a record's union score is at
    most ``growth`` times that (what lets the embedded backends stop reading)."""
    local, union = _stats_of(mine, TERMS), _stats_of(mine + others, TERMS)
    counts = mine[which % len(mine)]
    lengths = [sum(found.values()) for found in counts]
    union_score = Scorer(union, TERMS).score(counts, lengths)
    # the union's records and document frequencies (its idf), the local averages
    as_local = KeywordStats(union.records, tuple(a * union.records for a in local.averages()), union.holding)
    local_score = Scorer(as_local, TERMS).score(counts, lengths)
    assert union_score <= growth(union, local) * local_score * (1 + 1e-9)
    assert growth(union, union) == 1.0


def test_stored_terms_give_back_the_counts_of_the_query_terms_only():
    _, lines = field_lines("Night deploy", None, "deploy on friday night, deploy 2026 deploy", True)
    assert decode_counts("\n".join(lines), ["deploy", "night", "2026", "absent", "deplo", "ploy"]) == [
        {"night": 1, "deploy": 1},
        {},
        {"deploy": 3, "night": 1, "2026": 1},
        {"deploy": 3, "night": 1, "2026": 1},
    ]
    _, empty = field_lines(None, None, "the and of", False)  # stop words only: no terms at all
    assert decode_counts("\n".join(empty), ["deploy", "the"]) == [{}, {}, {}, {}]


def test_a_thread_member_counts_its_words_in_text_and_context_alike():
    """A member's own words are in its text field and its context field (``TextIndex.add``),
    from one analysis; a record outside a thread has them in context only."""
    from collections import Counter

    text = "Otters build dams; the otters' dams hold."
    lengths, lines = field_lines("Dam notes", None, text, True)
    name, _, text_field, context = field_counts("Dam notes", None, text, True)
    assert text_field == context == dict(Counter(analyze(text)))
    assert context["otter"] == 2 and "the" not in context  # stemmed, stop words left out
    assert name == dict(Counter(analyze("Dam notes")))
    assert lengths == [2, 0, 6, 6] and lines[2] == lines[3]
    assert field_counts(None, None, text, False) == [{}, {}, {}, context]
    assert field_lines(None, None, text, False)[0] == [0, 0, 0, 6]


def _indexed_by_tantivy(index: TextIndex, rows: list[tuple[int, str | None, str | None, str, bool]]) -> None:
    """``rows`` indexed as before the terms were given to tantivy: each field's text analysed by
    tantivy itself (the keyword analyzer), the stored terms and lengths as ``add`` makes them."""
    import tantivy

    writer = index._writer_()
    for doc, name, description, text, member in rows:
        lengths, lines = field_lines(name, description, text, member)
        document = tantivy.Document()
        document.add_integer("doc", doc)
        document.add_integer("len", len(text))
        for length_field, length in zip(LENGTH_FIELDS, lengths):
            document.add_integer(length_field, length)
        document.add_bytes(TERMS_FIELD, "\n".join(lines).encode())
        document.add_text(CHUNK_FIELD, chunk_line(text))
        for field, value in (("name", name), ("description", description), ("text", text if member else None)):
            if value:
                document.add_pre_tokenized_text(field, text_analyzer().pre_tokenize(value))
        document.add_pre_tokenized_text("context", text_analyzer().pre_tokenize(text))
        writer.add_document(document)
    index.commit()


def test_the_index_given_analysed_terms_ranks_as_tantivys_own_analysis(tmp_path):
    """``TextIndex.add`` hands tantivy the terms it already analysed for the stored counts: the
    document frequencies, the BM25 scores (term frequencies, field lengths) and so the order of
    every query are those of tantivy analysing each field itself."""
    import random

    rng = random.Random(34)
    words = "otters build dams running runs ran the THE and Beaver's beavers İstanbul straße ﬁnance 2026 x".split()
    rows = [
        (
            doc,
            rng.choice([None, "", "Dam notes", "the", "Otters' running log"]),
            rng.choice([None, "", "beavers and otters", "ſtraße İİ"]),
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 40))),
            rng.random() < 0.3,
        )
        for doc in range(1, 301)
    ]
    given, own = TextIndex(tmp_path / "given"), TextIndex(tmp_path / "own")
    given.add(rows)
    given.commit()
    _indexed_by_tantivy(own, rows)
    terms = sorted({term for word in words for term in analyze(word)})
    assert len(terms) > 8
    for query in [[term] for term in terms] + [terms[:3], terms[3:9], terms]:
        stats = own.statistics(query)
        assert given.statistics(query) == stats
        assert stats.records == 300 and any(any(held) for held in stats.holding.values())
        expected = {
            doc: (score, counts, lengths) for doc, score, counts, lengths in own.ranked(query, stats, stats, 300)
        }
        found = given.ranked(query, stats, stats, 300)
        assert expected and len(found) == len(expected)
        # tied scores come in segment order, which tantivy's two indexing threads make vary
        for rank, (doc, score, counts, lengths) in enumerate(found):
            assert (counts, lengths) == expected[doc][1:]
            assert score == pytest.approx(expected[doc][0], rel=1e-6)
            assert score == pytest.approx(sorted(v[0] for v in expected.values())[::-1][rank], rel=1e-6)
