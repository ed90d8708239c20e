"""The viewer's text rendering, alone: matched words marked as each mode matches them, and
record text (untrusted) never becoming markup: raw HTML shown as text, no live javascript:
links, no outside images."""

from __future__ import annotations

import pytest

from eidetic.web.highlight import highlight, spans
from eidetic.web.markdown_text import to_html


def test_keyword_and_hybrid_mark_words_whose_stem_is_a_query_term():
    text = "Deploys ran; the deployment DEPLOY was deployed by Über"
    for mode in ("keyword", "hybrid"):
        out = str(highlight(text, "the deploy über", mode))
        assert out == (
            "<mark>Deploys</mark> ran; the <mark>deployment</mark> <mark>DEPLOY</mark> was "
            "<mark>deployed</mark> by <mark>Über</mark>"
        )  # "the" is a stop word: the index never matched it, so it is not marked
    assert spans("redeploy predeployment", "deploy", "keyword") == []  # other stems, as the index sees them


def test_exact_marks_the_substring_ignoring_case_unless_asked():
    text = "Run a.b( twice: A.B( and axb("
    assert str(highlight(text, "a.b(", "exact")) == "Run <mark>a.b(</mark> twice: <mark>A.B(</mark> and axb("
    assert str(highlight(text, "A.B(", "exact", case_sensitive=True)) == "Run a.b( twice: <mark>A.B(</mark> and axb("
    assert spans("aaaa", "aa", "exact") == [(0, 2), (2, 4)]  # occurrences do not overlap


def test_fields_marks_each_word_and_approximate_marks_nothing():
    assert str(highlight("Deploy checklist: run deploy-check", "checklist deploy-check", "fields")) == (
        "Deploy <mark>checklist</mark>: run <mark>deploy-check</mark>"
    )
    assert str(highlight("deploy <now>", "deploy", "approximate")) == "deploy &lt;now&gt;"  # by meaning: no words
    assert str(highlight("deploy", "   ", "keyword")) == "deploy"


@pytest.mark.parametrize("mode", ["exact", "keyword", "hybrid", "fields", "approximate"])
def test_record_text_is_escaped_before_it_is_marked(mode):
    text = '<script>alert("deploy")</script> & <b onclick=x>deploy</b>'
    for query in ("deploy", "<b", "script", '"'):
        out = str(highlight(text, query, mode))
        without_marks = out.replace("<mark>", "").replace("</mark>", "")
        assert "<" not in without_marks and ">" not in without_marks, (mode, query, out)
        assert (
            without_marks.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").replace("&#34;", '"') == text
        )  # nothing lost or added
    assert str(highlight("<b>", "<b>", "exact")) == "<mark>&lt;b&gt;</mark>"


def test_an_excerpt_is_cut_at_words_around_the_first_match():
    text = "early " * 200 + "the target is here " + "late " * 200
    out = str(highlight(text, "target", "keyword", width=80))
    assert out.startswith("…early") and out.endswith("late…") and "<mark>target</mark>" in out
    assert len(out) < 130
    assert str(highlight("short text", "text", "keyword", width=80)) == "short <mark>text</mark>"


def test_markdown_renders_but_raw_html_is_text():
    html = str(
        to_html("# Title\n\nDeploys run on **Tuesdays**.\n\n<script>alert(1)</script>\n\n<b onmouseover=x>b</b>")
    )
    assert "<h1>Title</h1>" in html and "<strong>Tuesdays</strong>" in html
    assert "<script" not in html and "<b " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize(
    "source",
    [
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click](java&#x73;cript:alert(1))",
        "[click]( javascript:alert(1))",
        "<javascript:alert(1)>",
        "[click](vbscript:msgbox(1))",
        "[click](data:text/html,<script>alert(1)</script>)",
        "[click][ref]\n\n[ref]: javascript:alert(1)",
    ],
)
def test_links_that_could_run_code_are_not_links(source):
    html = str(to_html(source)).lower()
    assert "<a" not in html and "href" not in html, html


def test_ordinary_links_work_and_images_are_not_fetched():
    html = str(to_html("[docs](https://example.org/a?b=1&c=2) and ![pixel](https://tracker.example/p.png)"))
    assert '<a href="https://example.org/a?b=1&amp;c=2">docs</a>' in html
    assert "<img" not in html and "src=" not in html
