"""MEMORY.md revised in place: the lines of the files written change, every other byte stays."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from eidetic.records import Record
from eidetic.stores.files.memory_md import entry_line, revise, target_of


def test_entry_lines_are_one_short_line_whatever_the_record_holds():
    plain = Record(id="kiln", text="Cone 6.\nMore.", name="Kiln", description="firing times")
    assert entry_line(plain, "kiln.md") == "- [Kiln](kiln.md) — firing times"
    bare = Record(id="n1", text="\n\nFirst real line\nsecond")
    assert entry_line(bare, "n1.md") == "- [n1](n1.md) — First real line"
    hostile = Record(id="x", text="t", name="a]\n(b.md)\u202e [c\\", description="line\r\nbreak\x00\ttab")
    line = entry_line(hostile, "odd name (1).md")
    assert line == "- [a\\] (b.md) \\[c\\\\](odd%20name%20%281%29.md) — line break tab"
    assert target_of(line) == "odd name (1).md"
    long = entry_line(Record(id="y", text="t", name="n" * 500, description="d" * 500), "y.md")
    assert len(long) <= 150 and long.startswith("- [nnn") and "…](y.md) — ddd" in long and long.endswith("…")


def test_revise_replaces_removes_and_appends_keeping_everything_else():
    text = (
        "\ufeff- [Old](a.md) — old hook\r\n"
        "Some prose mentioning [a](a.md) inline.\r\n"
        "    * [Also a](./a.md#top) — nested, another bullet\r\n"
        "- [B](<b.md>) — kept\r\n"
        "- [Gone](c%20d.md)"
    )
    out = revise(text, {"a.md": "- [New](a.md) — new hook", "c d.md": None, "e.md": "- [E](e.md)"})
    assert out == (
        "\ufeff- [New](a.md) — new hook\r\n"
        "Some prose mentioning [a](a.md) inline.\r\n"
        "    * [New](a.md) — new hook\r\n"
        "- [B](<b.md>) — kept\r\n"
        "- [E](e.md)\r\n"
    )
    assert revise("# Index", {"a.md": "- [A](a.md)"}) == "# Index\n- [A](a.md)\n"
    assert revise("", {"a.md": "- [A](a.md)"}) == "- [A](a.md)\n"
    assert revise("# Index\n- [A](a.md)", {"a.md": None}) == "# Index\n"
    assert revise("x\n", {"zz.md": None}) == "x\n"


LINE = st.text(st.sampled_from("ab -*[]()\\<>#./%\r\t\u2028é"), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=8), st.booleans())
def test_adding_then_removing_a_line_gives_the_text_back(lines, crlf):
    text = "".join(line + ("\r\n" if crlf else "\n") for line in lines)
    assume(all(target_of(line.rstrip("\r")) != "x.md" for line in text.split("\n")))
    added = revise(text, {"x.md": "- [X](x.md) — hook"})
    assert added.startswith(text) and added.count("x.md") == text.count("x.md") + 1
    assert revise(added, {"x.md": None}) == text
