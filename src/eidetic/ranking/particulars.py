"""A text's particulars: the tokens that tell one record of a template from another. Pure.

A sentence model reads "Sync notes, owner Alice, ticket OPS-12" and "Sync notes, owner Bob,
ticket OPS-13" as nearly the same text (cosine 0.9 and more), though they are two memories.
What separates them are few tokens the model weighs lightly: numbers, ids, versions, dates,
addresses and names. Two texts are near-duplicates by meaning only if they agree on those
(``ranking.similar.near_in_meaning``); wording, case, punctuation and stop words still vary freely.

The particulars of a text (each case-folded):
- URLs, e-mail addresses, paths (``/etc/hosts``, ``~/notes``, ``src/app.py``, ``a/b/c``; not
  two words joined by one ``/`` such as "and/or"), ``@handles`` and ``#refs`` (``#42``, ``#ops``);
- joined tokens with a digit, a ``.`` or a ``:`` inside: versions (``2.3.1``, ``v2.3``), dates
  and times (``2026-12-01``, ``14:30``), ids (``ABC-123``), hosts and files (``db.example.com``);
- words with a digit (``42``, ``1,000``, ``v2``, ``3pm``, ``x86``; "1,000" is "1000" and "v2.3"
  is "2.3" when compared);
- names: words (or hyphen-joined words) that begin with a capital letter not at the start of a
  sentence (the start of the text or a line, or after ``.``, ``!``, ``?``), other than "I".

Two texts' particulars differ when one has a number, id, date or address the other does not
say at all (among all its tokens, case-folded), or when each has a name the other does not
say: "owner Alice" / "owner Bob" differ, and so do "Deploy 2.3 on Friday" / "Deploy on
Friday"; "Alice owns it" / "the owner is alice" do not, nor "Deployed v2.3" / "v2.3 was
deployed". A name on one side only is no difference: names are found by their capital letter,
which the first word after "Joanna:" or a word of a title has too ("Joanna: Well, I had a
setback" / "Joanna had a setback"); a plural "s" is set aside ("Fridays" / "Friday"). A name
that opens a sentence is not seen as one (nothing tells "Alice went" from "Backups run"), and
the same number written two ways ("3pm" / "15:00", "three" / "3") counts as a difference: a
missed near-duplicate is an extra record, a false one could fold away a record that mattered.
What the rule changes on public data: docs/benchmarks.md ("Near-duplicates").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Longest forms first: a URL is not read as a path, nor an address as a handle. A run of letters
# that nothing joins to another token (most of a text) is taken first, in one step.
_TOKEN = re.compile(
    r"""(?P<letters>[^\W\d_]+)(?![\w@/\#]|[-.:+]\w|://)
      | (?P<url>\b[a-z][a-z0-9+.-]*://[^\s<>"'`]+|\bwww\.[^\s<>"'`]+)
      | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
      | (?P<handle>(?<![\w@])@\w+(?:[.-]\w+)*)
      | (?P<ref>(?<![\w\#])\#\w+)
      | (?P<path>(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)+/?|(?<![\w/])(?:~|\.{1,2})?/[\w.-]+)
      | (?P<number>\d{1,3}(?:,\d{3})+(?!\d))
      | (?P<joined>\w+(?:[-.:]\w+)+)
      | (?P<word>\w+)""",
    re.VERBOSE | re.IGNORECASE,
)
_SENTENCE_END = frozenset(".!?…\n")
_TRAILING = ".,;:!?)]}'\""  # punctuation that ends a sentence, not a URL or path
_ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]", re.IGNORECASE)  # e.g, i.e, a.m: not particulars
_VERSION_V = re.compile(r"^v(?=\d)")  # "v2.3.1" says the version "2.3.1" says


@dataclass(frozen=True)
class Particulars:
    """A text's particulars, ``marks`` (numbers, ids, dates, addresses) and ``names``, and
    every token it says (``said``), all case-folded."""

    marks: frozenset[str]
    names: frozenset[str]
    said: frozenset[str]


@lru_cache(maxsize=4096)  # a text is compared with each of its close neighbours in turn
def particulars(text: str) -> Particulars:
    """The particulars of ``text`` (see the module), with all its tokens for the comparison."""
    marks: set[str] = set()
    names: set[str] = set()
    said: set[str] = set()
    end = 0
    for match in _TOKEN.finditer(text):
        opens = not end or not _SENTENCE_END.isdisjoint(text[end : match.start()])  # a sentence
        kind, token = match.lastgroup, match.group()
        end = match.end()
        if kind == "letters":  # the common case, kept short: a word, perhaps a name
            folded = token.casefold()
            said.update((folded, _singular(folded)))
            if not opens and token[0].isupper() and token != "I":
                names.add(_singular(folded))
            continue
        if kind in ("url", "path"):
            token = token.rstrip(_TRAILING) or token
        folded = token.casefold()
        said.update((folded, _singular(folded), _canonical(folded)))
        if kind in ("joined", "path"):
            said.update(re.split(r"[-.:/]", folded))
        if _is_mark(kind, token):
            marks.add(_canonical(folded))
        elif token[0].isupper() and not opens and token != "I":
            names.add(_singular(folded))
    return Particulars(frozenset(marks), frozenset(names), frozenset(said))


def _canonical(token: str) -> str:
    """One spelling of a number or version: "1,000" is "1000", "v2.3.1" is "2.3.1"."""
    return _VERSION_V.sub("", token.replace(",", "") if token[0].isdigit() else token)


def _singular(word: str) -> str:
    """A name without a plural "s", so "on Fridays" and "every Friday" name the same day."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _is_mark(kind: str | None, token: str) -> bool:
    if kind in ("url", "email", "handle", "ref"):
        return True
    if kind == "path" and (token[0] in "/~." or "." in token or token.count("/") > 1):
        return True
    if any(c.isdigit() for c in token):
        return True
    return kind == "joined" and ("." in token or ":" in token) and not _ABBREVIATION.fullmatch(token)


def differing(a: Particulars, b: Particulars) -> frozenset[str]:
    """The particulars that tell the two texts apart (see the module); empty if none do."""
    marks = (a.marks - b.said) | (b.marks - a.said)
    names_a, names_b = a.names - b.said, b.names - a.said
    return marks | (names_a | names_b if names_a and names_b else frozenset())


def differ(a: Particulars, b: Particulars) -> bool:
    """Whether the two texts' particulars differ (see the module)."""
    return bool(differing(a, b))
