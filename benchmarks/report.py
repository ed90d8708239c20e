"""Writing benchmark results into docs/benchmarks.md, section by section."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def update_doc(marker: str, body: str) -> None:
    """Replace the section between ``<!-- marker -->`` and ``<!-- /marker -->`` in
    docs/benchmarks.md (appended when missing), so reruns keep the document current."""
    doc = HERE.parent / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    block = f"{start}\n{body}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text)
