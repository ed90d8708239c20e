"""A record's text as HTML: CommonMark, with nothing a record could use against its reader.

Records come from agents and imports, so their text is untrusted: raw HTML is shown as text
(``html`` off), links whose address could run code (``javascript:``, ``vbscript:``, ``file:``,
most ``data:``) stay plain text (markdown-it's link validation), and images are not rendered, so
opening a record never makes the browser fetch anything from elsewhere.
"""

from __future__ import annotations

from functools import lru_cache

from markupsafe import Markup


@lru_cache(maxsize=1)
def _parser():  # -> MarkdownIt (imported on first use)
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).disable("image")


def to_html(text: str) -> Markup:
    """The text rendered; safe to put in a page as it is."""
    return Markup(_parser().render(text))
