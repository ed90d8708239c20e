from __future__ import annotations

import sys
import unicodedata

import pytest

from eidetic import frontmatter
from eidetic.errors import EideticError
from eidetic.record_intake import record_from_input
from eidetic.records import DEFAULT_SCOPE, Record, Scope, derived_id, file_name_for_id, has_control


def make(raw, **kw):
    return record_from_input(raw, default_scope=kw.pop("scope", DEFAULT_SCOPE), added_by=kw.pop("added_by", None), **kw)


def test_defaults_and_system_fields_ignored():
    record, created_given = make(
        {"id": "a", "text": "hello", "lifecycle": "archived", "hash": "x", "recall_count": 99, "score": 3}
    )
    assert record.lifecycle == "active"
    assert record.type == "note"
    assert record.hash != "x" and len(record.hash) == 64
    assert created_given is False


def test_missing_id_is_derived_from_scope_and_text():
    first, _ = make({"text": "same text"})
    again, _ = make({"text": "same text"})
    other_scope, _ = make({"text": "same text"}, scope=Scope("team", "private"))
    assert first.id == again.id == derived_id(DEFAULT_SCOPE, "same text")
    assert other_scope.id != first.id


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ({"id": "a"}, "'text' must be a string"),
        ({"id": "a", "text": "   "}, "empty"),
        ({"id": "a\nb", "text": "x"}, "control characters"),
        ({"id": "", "text": "x"}, "1-256"),
        ({"id": "x" * 257, "text": "x"}, "1-256"),
        ({"id": 5, "text": "x"}, "must be a string"),
        ({"text": "x", "scope": {"name": "a", "visibility": "secret"}}, "unknown visibility"),
        ({"text": "x", "scope": "a"}, "'scope' must be an object"),
        ({"text": "x", "metadata": [1]}, "'metadata' must be a JSON object"),
        ({"text": "x", "links": "a"}, "'links' must be a list"),
        ({"text": "x", "created": "yesterday"}, "not an ISO-8601 date"),
        ({"text": "x", "metdata": {}}, "unknown record field(s): metdata"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_bad_input_is_a_clear_error(raw, fragment):
    with pytest.raises(EideticError) as info:
        make(raw)
    assert fragment in info.value.message
    assert info.value.code == 1
    assert info.value.remediation


def test_text_size_limit():
    make({"text": "é" * 10}, max_text_bytes=20)
    with pytest.raises(EideticError, match="over the limit"):
        make({"text": "é" * 11}, max_text_bytes=20)


@pytest.mark.parametrize(
    "rid",
    [
        "note-1",
        "Note-1",
        "../../etc/passwd",
        "/abs/path",
        "a/b",
        "MEMORY",
        "memory",
        "con",
        ".hidden",
        "ünïcödé",
        "x" * 256,
        "a b c",
        "id.md",
        "~tilde",
        "C:\\windows",
    ],
)
def test_file_names_are_safe_and_unique(rid):
    name = file_name_for_id(rid)
    assert name.endswith(".md")
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert name.lower() != "memory.md"
    assert len(name) < 120


def test_file_names_never_collide():
    ids = ["note", "Note", "NOTE", "a/b", "a-b", "a b", "a_b", "x.md", "x", "memory", "Memory"]
    names = [file_name_for_id(i) for i in ids]
    assert len({n.lower() for n in names}) == len(ids)
    assert file_name_for_id("note-1") == "note-1.md"


def test_front_matter_round_trip_is_exact():
    texts = [
        "plain",
        "two\nlines\n",
        "\nstarts with newline",
        "ends with blanks\n\n",
        "--- not a delimiter",
        "---\nlooks: like yaml\n---\n",
        "tabs\tand\r\nwindows",
        "ends with CR\r",
        "\r\nstarts with CRLF",
        "emoji 🚀 and 東京",
    ]
    for text in texts:
        record = Record(
            id="r",
            text=text,
            metadata={
                "n": 3,
                "f": 2.5,
                "b": True,
                "none": None,
                "list": [1, "two"],
                "date_like": "2026-01-01",
                "nested": {"k": "v"},
            },
            scope=Scope("team", "private"),
            created="2026-11-30T08:00:00+00:00",
            links=["a", "b"],
            supersedes="old",
            name="n",
            description="d",
        )
        back = frontmatter.parse(frontmatter.render(record), "fallback")
        assert back == record, text


def test_hand_written_file_is_a_record():
    content = "---\nname: deploy-rules\ndescription: When we deploy\ntype: feedback\n---\nNever on Fridays.\n"
    record = frontmatter.parse(content, "deploy_rules")
    assert record.id == "deploy_rules"
    assert record.name == "deploy-rules"
    assert record.type == "feedback"
    assert record.text == "Never on Fridays."
    assert record.scope == DEFAULT_SCOPE


@pytest.mark.parametrize(
    "content, reason",
    [
        ("---\nid: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\n- a list\n---\nbody\n", "not a mapping"),
        ("---\nid: a\n", "no closing"),
        ("---\nid: a\nscope: {name: x, visibility: secret}\n---\nbody\n", "unknown visibility"),
        ("---\nid: a\n---\n\n", "no text"),
        ("---\nid: a\nlifecycle: zombie\n---\nbody\n", "unknown lifecycle"),
    ],
)
def test_unparseable_files_are_rejected_with_a_reason(content, reason):
    with pytest.raises(ValueError, match=reason):
        frontmatter.parse(content, "f")


def test_unstorable_values_are_rejected():
    with pytest.raises(EideticError, match="surrogate"):
        make({"text": "bad \ud800 text"})
    with pytest.raises(EideticError, match="NaN"):
        make({"text": "x", "metadata": {"v": float("nan")}})


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

_no_nul = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")  # NUL is refused
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(_no_nul, max_size=20)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(_no_nul, max_size=8), inner, max_size=3),
    max_leaves=8,
)
_text = st.text(_no_nul, min_size=1, max_size=60).filter(str.strip)
_safe = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    text=_text,
    rid=_safe,
    name=st.none() | _safe,
    metadata=st.dictionaries(st.text(_no_nul, max_size=10), _json, max_size=4),
    links=st.lists(_safe, max_size=3, unique=True),
    scope=_safe.filter(str.strip),
)
def test_render_parse_round_trip_property(text, rid, name, metadata, links, scope):
    import yaml

    record = Record(
        id=rid,
        text=text,
        name=name,
        metadata=metadata,
        links=links,
        scope=Scope(scope, "private"),
        created="2026-11-30T08:00:00+00:00",
    )
    rendered = frontmatter.render(record)
    assert frontmatter.parse(rendered, "x") == record
    header = rendered.split("\n---\n", 1)[0][4:]
    assert yaml.safe_load(header)["metadata" if metadata else "id"] == (metadata or rid)


def test_a_changed_copy_keeps_the_text_keys_only_while_the_text_stays():
    from eidetic.records import normal_key, text_hash

    record = Record(id="a", text="Deploys run on FRIDAYS.")
    assert (record.hash, record.norm) == (text_hash(record.text), normal_key(record.text))
    renamed = record.with_changes(name="deploys")
    assert (renamed.hash, renamed.norm) == (record.hash, record.norm)
    rewritten = renamed.with_changes(text="Deploys run on Mondays.")
    assert rewritten.hash == text_hash("Deploys run on Mondays.")
    assert rewritten.norm == normal_key("Deploys run on Mondays.") != record.norm


def test_control_characters_are_unicodes_whole_cc_category():
    # has_control searches a fixed range: it must agree with Unicode's category on every code point
    disagree = [
        code
        for code in range(sys.maxunicode + 1)
        if has_control(chr(code)) != (unicodedata.category(chr(code)) == "Cc")
    ]
    assert disagree == []
    assert has_control("team\nname") and has_control("a\x85b") and not has_control("naïve-id_1")


def test_ascii_normalisation_is_the_words_joined_by_one_space():
    """The ASCII path (``lower``, gaps, runs of spaces halved) gives what the general path gives:
    the words (letters, digits, ``_``) in order, one space between them, whatever runs of
    punctuation, tabs, newlines or control characters lie between."""
    import random
    import re
    import unicodedata

    from eidetic.records import normalised

    rng = random.Random(36)
    alphabet = "aZ9_ \t\n\r\x0b\x0c\x1c\x1f.,;:!?-'\"()[]{}/\\@#$%^&*+=<>|~`\x00\x7f"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        expected = " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))
        assert normalised(text) == expected, repr(text)
