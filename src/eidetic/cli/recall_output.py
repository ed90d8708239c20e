"""How ``eidetic recall`` prints a result (the JSON of :class:`~eidetic.results.RecallResult`):
a table (a terminal's default), text with every field in full (a pipe's default, which agents
read), or markdown."""

from __future__ import annotations

import json
from typing import Any

from ..relevance_text import below_floor, word
from .clock_text import clock_facts
from .render import Column, Style, clip, count, day, floor_note, inert, markdown_table, no_results, one_line, table

Item = dict[str, Any]
TEXT_LINES = 3  # a hit's text on a terminal: its first lines, wrapped


def render_text(bundle: dict[str, Any]) -> str:
    """Every field of every hit, the text in full."""
    online = "online" if bundle["embedder"]["online"] else "offline"
    note = floor_note(bundle)
    lines = [
        f"query: {bundle['query']}  mode: {bundle['mode']}  "
        f"truncated: {'yes' if bundle['truncated'] else 'no'}  embedder: {online}"
        + (f"  as of: {bundle['as_of']}" if bundle.get("as_of") else "")
        + (f"  {note}" if note else ""),
        *_time_line(bundle),
        "",
    ]
    if not bundle["items"]:
        lines.append(_nothing(bundle))
    clear, apart = _sections(bundle["items"])
    if apart and not clear:
        lines += [_nothing_relevant(bundle, apart), ""]
    for item in [item for _, item in clear + apart]:
        if clear and apart and item is apart[0][1]:
            lines += [f"── {_below(apart)} ──", ""]
        via = f" via={item['via']} parent={item['parent']}" if item["tier"] == "traversal" else ""
        lines.append(f"[{item['tier']} depth={item['depth']}{via}] id: {item['id']}")
        lines.append(
            _relevance(item, "relevance: {number}  ") + f"score: {item['score']:.4f}  signal: {item['signal']:.3f}  "
            f"type: {item['type']}  scope: {item['scope']['name']}/{item['scope']['visibility']}"
            f"  lifecycle: {item['lifecycle']}"
        )
        if item.get("name"):
            lines.append(f"name: {item['name']}")
        if item.get("description"):
            lines.append(f"description: {item['description']}")
        lines.append(f"text: {item['text']}")
        lines.append(
            f"created: {item['created']}  recalled: {item['recall_count']}x"
            + (f", last {item['last_recall']}" if item["last_recall"] else "")
        )
        lines += [f"{label}: {value}" for label, value in clock_facts(item)]
        if item.get("path"):
            lines.append(f"path: {item['path']}")
        for key, value in item["metadata"].items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f"  {key}: {shown}")
        if item.get("explain"):
            from .score_text import explain_lines

            lines += ["  explain: " + line for line in explain_lines(item["explain"], item["score"])]
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _nothing(bundle: dict[str, Any]) -> str:
    return no_results(bundle.get("hidden", {}), bundle.get("below_floor", 0))


def _sections(items: list[Item]) -> tuple[list[tuple[str, Item]], list[tuple[str, Item]]]:
    """The ranked items (with their rank) in two parts: those a person reads as the answer, and
    those set apart below the relevance floor (``relevance_text.below_floor``); each part keeps
    the ranking's order and numbers."""
    ranked = _numbered(items)
    apart = below_floor([_placed(item) for item in items])
    return [pair for pair, low in zip(ranked, apart) if not low], [pair for pair, low in zip(ranked, apart) if low]


def _placed(item: Item) -> tuple[str, str, str | None, bool | None]:
    return item["tier"], item["id"], item.get("parent"), item.get("relevant")


def _hits(apart: list[tuple[str, Item]]) -> str:
    n = sum(item["tier"] == "primary" for _, item in apart)
    return f"{n} hit{'s' if n != 1 else ''}"


def _below(apart: list[tuple[str, Item]]) -> str:
    """What the line that sets hits apart says: how many fell below the floor."""
    return f"below the relevance floor: {_hits(apart)}"


def _nothing_relevant(bundle: dict[str, Any], apart: list[tuple[str, Item]]) -> str:
    """ "Nothing relevant", in words, when every hit is below the floor (the nearest follow)."""
    query = clip(one_line(bundle["query"]), 60)
    return f"nothing relevant to “{query}”; the nearest {_hits(apart)}, all below the relevance floor:"


def _relevance(item: Item, shape: str) -> str:
    """A judged hit's relevance as ``shape`` puts it (``{number}``: "1.42 good"); "" if not judged."""
    said = word(item.get("relevance"), item.get("relevant"))
    return shape.format(number=f"{item['relevance']:.2f} {said}") if said else ""


def _time_line(bundle: dict[str, Any]) -> list[str]:
    """The time the query names, as the window it was read as (``eidetic explain time``)."""
    window = bundle.get("time_window")
    if not window:
        return []
    searched = window.get("searched")
    rest = f"searched: {searched!r}" if searched else "nothing else to search: records recorded then, freshest first"
    return [f"time: {window['phrase']!r} = {window['start']} to {window['end']} ({window['mode']}); {rest}"]


def _rank(item: dict[str, Any], number: int) -> str:
    return str(number) if item["tier"] == "primary" else f"->{item['depth']}"


def _label(item: dict[str, Any]) -> str:
    """A hit's name, else the start of its text, marked when not active."""
    label = one_line(item.get("name") or item["text"])
    return label if item["lifecycle"] == "active" else f"[{item['lifecycle']}] {label}"


def _numbered(items: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    ranks, number = [], 0
    for item in items:
        number += item["tier"] == "primary"
        ranks.append((_rank(item, number), item))
    return ranks


def render_table(bundle: dict[str, Any], style: Style, width: int | None) -> str:
    """One row per hit: rank (linked records: ->depth), relevance when judged (its number and a
    word), score, id, type, name or text, recalls. On a terminal (a ``width``) each row also
    shows the hit's scope and creation date, and its name and the first lines of its text
    wrapped to the width (``text_table``). Hits below the relevance floor follow the others
    under a rule; when no hit clears it, a line says that nothing is relevant."""
    if not bundle["items"]:
        return _nothing(bundle)
    judged = any("relevant" in item for item in bundle["items"])
    columns = [
        Column("#", right=True),
        *([Column("RELEVANCE", style=("green",))] if judged else []),
        Column("SCORE", right=True, style=("dim",) if judged else ("green",), spare=judged),
        Column("ID", least=8, style=("cyan",)),
        Column("TYPE", least=4),
    ]
    clear, apart = _sections(bundle["items"])
    rows = [
        [
            rank,
            *([_relevance(item, "{number}") or "-"] if judged else []),
            f"{item['score']:.3f}",
            one_line(item["id"]),
            one_line(item["type"]),
        ]
        for rank, item in clear + apart
    ]
    if width is None:  # a pipe: one line a hit, every cell whole
        columns += [Column("NAME / TEXT", least=12), Column("RECALLS", right=True, style=("dim",))]
        rows = [[*row, _label(item), count(item["recall_count"])] for row, (_, item) in zip(rows, clear + apart)]
        lines = table(columns, rows, width, style, dim_from=len(clear)).split("\n")
        starts = list(range(1, len(rows) + 1))
    else:
        from .text_table import named, scope_of, text_table

        recalls = Column("RECALLS", right=True, style=("dim",), spare=True)
        columns += [Column("SCOPE", least=7), Column("CREATED"), recalls]
        hits = [item for _, item in clear + apart]
        rows = [
            [*row, scope_of(item), day(item["created"]), count(item["recall_count"])] for row, item in zip(rows, hits)
        ]
        texts = [named(item) for item in hits]
        lines, starts = text_table(columns, rows, texts, width, style, TEXT_LINES, dim_from=len(clear))
    if clear and apart:
        lines.insert(starts[len(clear)], style(f"── {_below(apart)} ──", "dim"))
    elif apart:
        lines.insert(0, style(_nothing_relevant(bundle, apart), "bold"))
    online = "online" if bundle["embedder"]["online"] else "offline"
    as_of = f", as of {bundle['as_of']}" if bundle.get("as_of") else ""
    note = floor_note(bundle)
    footer = style(
        f"{bundle['mode']}, embedder {online}{as_of}"
        + (", truncated" if bundle["truncated"] else "")
        + (f", {note}" if note else ""),
        "dim",
    )
    return "\n".join(lines) + "\n" + footer


def render_markdown(bundle: dict[str, Any]) -> str:
    """A section per hit with its facts and its whole text, as a quote."""
    if not bundle["items"]:
        return _nothing(bundle)
    out = []
    clear, apart = _sections(bundle["items"])
    if apart and not clear:
        out += [f"**{_nothing_relevant(bundle, apart)}**", ""]
    for rank, item in clear + apart:
        if clear and apart and item is apart[0][1]:
            out += ["---", "", f"*{_below(apart)}*", ""]
        via = f" (via {item['via']} from `{item['parent']}`)" if item["tier"] == "traversal" else ""
        out.append(f"### {rank}. `{one_line(item['id'])}`{via}")
        out.append("")
        facts = [
            ("relevance", _relevance(item, "{number}")),
            ("score", f"{item['score']:.4f}"),
            ("type", item["type"]),
            ("name", item.get("name")),
            ("scope", f"{item['scope']['name']}/{item['scope']['visibility']}"),
            ("lifecycle", item["lifecycle"]),
            ("created", item["created"]),
            *[fact for fact in clock_facts(item) if fact[0] != "history"],  # the history is in the JSON
            ("recalled", f"{count(item['recall_count'])}x"),
            ("path", item.get("path")),
        ]
        out.append(markdown_table([k for k, v in facts if v], [[one_line(str(v)) for _, v in facts if v]]))
        out.append("")
        out.extend("> " + inert(line) for line in item["text"].splitlines())
        out.append("")
    return "\n".join(out).rstrip("\n")
