"""What a session produced, read out of its transcript without a model, and kept as records.

Two kinds of statement are recognised (docs/hooks.md, "Capture", has the exact rules):

- the user's explicit requests to keep something, at the start of a line or sentence: "remember
  that X", "remember: X", "remember to X", "note that X", "note: X", "don't forget (that) X",
  "for future reference, X" (optionally after "please"); a question (ending in "?") is not one.
  Kept as type ``feedback``;
- the agent's decisions and lessons written as a labelled line: "Decision: X", "Decided: X",
  "Lesson: X", "Lesson learned: X" (optionally bulleted or in bold). Kept as ``decision`` or
  ``lesson``.

A Claude Code transcript (JSON lines: ``type`` user/assistant, ``message.content`` text or text
blocks) is read by role: tool results, meta and command messages and side chains are skipped. Any
other file is plain text: every line is read with both rules, after a leading role label
("User:", "Human:", "You:", "Assistant:", "AI:", "#### ") is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..timeutil import parse_ts

MIN_CHARS, MAX_CHARS = 8, 1000
MAX_LINE_BYTES = 2 * 1024 * 1024  # a longer transcript line (a pasted file) is skipped

_ASK = (
    r"(?:please\s+)?(?:remember(?:\s+that\b|\s*[:,]|(?=\s+to\s))|(?:make\s+a\s+)?note(?:\s+that\b|\s*:)|"
    r"(?:don't|do\s+not)\s+forget(?:\s+that\b|\s*[:,]|(?=\s+to\s))|for\s+future\s+reference\s*[:,])"
)
USER_ASK = re.compile(rf"(?:^|(?<=[.!;]\s))\s*{_ASK}\s*(?P<body>[^\n]+)", re.IGNORECASE | re.MULTILINE)
LABELLED = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?(?P<label>decision|decided|lesson learned|lesson)(?:\*\*|__)?\s*:"
    r"(?:\*\*|__)?\s*(?P<body>\S[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
SENTENCE_END = re.compile(r"(?<=[.!])\s+(?=[A-Z])")  # a statement ends with its sentence
ROLE_LABEL = re.compile(r"^\s*(?:(?:user|human|you|assistant|ai)\s*:|####\s)\s*", re.IGNORECASE)
KINDS = {"decision": "decision", "decided": "decision", "lesson": "lesson", "lesson learned": "lesson"}


@dataclass(frozen=True)
class Captured:
    """One statement worth keeping: its text, the record type, who said it, when (if known)."""

    text: str
    type: str
    role: str  # user or agent
    at: str | None = None


def statements(text: str, role: str, at: str | None = None) -> list[Captured]:
    """The statements of one message: ``role`` user (requests to keep), agent (labelled lines),
    or any (both: plain text)."""
    found: list[Captured] = []
    if role in ("user", "any"):
        for match in USER_ASK.finditer(text):
            body = _body(match.group("body"), strip_to=True)
            if body:
                found.append(Captured(body, "feedback", "user", at))
    if role in ("agent", "any"):
        for match in LABELLED.finditer(text):
            body = _body(match.group("body"))
            if body:
                found.append(Captured(body, KINDS[match.group("label").lower()], "agent", at))
    return found


def _body(raw: str, strip_to: bool = False) -> str | None:
    body = SENTENCE_END.split(raw.strip(), maxsplit=1)[0].strip("*_ ")
    if strip_to and body.lower().startswith("to "):
        body = body[3:].lstrip()
    if body.endswith("?") or not MIN_CHARS <= len(body) <= MAX_CHARS:
        return None
    return body[0].upper() + body[1:]


def from_claude(lines: Iterable[str]) -> tuple[list[Captured], dict[str, str]]:
    """The statements of a Claude Code transcript, and what it says of itself (``session``, ``cwd``)."""
    found: list[Captured] = []
    about: dict[str, str] = {}
    for entry in _entries(lines):
        for key, name in (("sessionId", "session"), ("cwd", "cwd")):
            if isinstance(entry.get(key), str) and name not in about:
                about[name] = entry[key]
        role = {"user": "user", "assistant": "agent"}.get(entry.get("type"))  # type: ignore[arg-type]
        if role is None or entry.get("isSidechain") or entry.get("isMeta"):
            continue
        at = entry.get("timestamp") if parse_ts(entry.get("timestamp")) else None  # a bad one is dropped, not fatal
        for text in _texts(entry.get("message")):
            if role == "user" and text.lstrip().startswith(("<command-", "<local-command", "Caveat:")):
                continue
            found.extend(statements(text, role, at))
    return found, about


def from_text(text: str) -> list[Captured]:
    """The statements of a plain text transcript: every line, both rules."""
    lines = (ROLE_LABEL.sub("", line, count=1) for line in text.splitlines())
    return statements("\n".join(lines), "any")


def looks_like_claude(head: str) -> bool:
    """Whether a file's first line is a JSON object (a Claude Code transcript line)."""
    try:
        return isinstance(json.loads(head), dict)
    except ValueError:
        return False


def _entries(lines: Iterable[str]) -> Iterator[dict]:
    for line in lines:
        if len(line) > MAX_LINE_BYTES or not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def _texts(message: object) -> list[str]:
    """A message's own text: a string, or its ``text`` blocks (tool calls and results left out)."""
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    return []


def unique(found: list[Captured]) -> list[Captured]:
    """The statements with repeats (same words, ``records.normalised``) left out, first kept."""
    from ..records import normalised

    seen: set[str] = set()
    kept = []
    for item in found:
        key = normalised(item.text)
        if key and key not in seen:
            seen.add(key)
            kept.append(item)
    return kept
