"""A record's event clock and history as people read them (``recall`` text and markdown,
``show``): when what it tells happened, the interval it holds for (closed where it was
superseded), and its dated lifecycle changes. Records without them get no lines."""

from __future__ import annotations

from typing import Any

from ..clocks import interval_text, parse_history


def clock_facts(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) for each of occurred, valid and history the record (its JSON) has."""
    history = item.get("history") or []
    valid = interval_text(item.get("valid_from"), item.get("valid_until"), item["lifecycle"], parse_history(history))
    facts = [("occurred", item.get("occurred")), ("valid", valid)]
    if history:
        facts.append(("history", "; ".join(f"{c['at']} {c['from']} -> {c['to']}" for c in history)))
    return [(label, value) for label, value in facts if value]
