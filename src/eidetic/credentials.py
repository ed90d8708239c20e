"""Credentials in what a record would carry, found by the detect-secrets package's plugins, and the
rule for them: capture leaves such a statement out, remember refuses it in a public record (shared:
committed with a repository, read by every scope and every user of a team server) unless the caller
allows it, and keeps it in a private record with a warning (docs/reliability.md, "Credentials never
land in memory unnoticed"). Nothing here ever repeats the credential itself: only its kind.

Which plugins, and why (tests/test_credentials.py holds both lists):

- every plugin that knows a credential by its own shape: cloud and service keys and tokens (AWS,
  Azure, GitHub, GitLab, Slack, Stripe, OpenAI, npm, PyPI, SendGrid, Twilio, ...), a PEM private key
  block, a JSON web token, a URL with a password (a connection string);
- the keyword plugin's assignment forms of its own grammar (``password = x``, ``api_key: x``) and one
  form for prose made from the same parts (``the password is x``). In the colon and "is" forms the
  value must look like a password rather than a word (six characters or more, with a digit, a
  symbol or an inner capital): "the password is required" and "Note: password: see the vault" are
  prose;
- not the two high-entropy plugins: a record's content hash, a git SHA, a UUID or a base64 id is a
  high-entropy string, so they flag ordinary records; not the public-IP plugin: an address is not a
  credential; not the IBM Cloud IAM, IBM COS HMAC, Cloudant and SoftLayer plugins: each is a service
  name then a key, which the keyword forms already catch (``ibm_cloud_iam_api_key = ...``), and
  their patterns cost 45 of the 60 microseconds a 120-character line took (every record of a bulk
  remember is checked). detect-secrets' own false-positive filters (templates like
  ``${PASSWORD}``, sequences, UUIDs, id fields, indirect references) then judge every value, as its
  scanner does.

detect-secrets (it brings ``requests``) costs 0.15-0.25 s to import, so it is imported when the first
text is checked, never when a command starts. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .errors import overridable
from .records import Record

# detect-secrets' type names -> the words a person reads; the rest are its own names
_NAMES = {"Secret Keyword": "password", "Basic Auth Credentials": "password in a URL"}
_LEFT_OUT = {
    "Base64 High Entropy String",
    "Hex High Entropy String",
    "Public IP (ipv4)",
    "IBM Cloud IAM Key",
    "IBM COS HMAC Credentials",
    "Cloudant Credentials",
    "SoftLayer Credentials",
}
# a dotted name (``settings.db_password``, ``config.api_key``) names where a secret is, not the secret:
# detect-secrets' indirect-reference filter knows calls and subscripts only
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_WARNED = 5  # records named one by one in a batch's warnings; the rest are counted


@dataclass(frozen=True)
class _Detector:
    """The plugins' patterns, the keyword grammar, and detect-secrets' filters of a found value."""

    # each plugin's patterns, with a literal every match holds: of the patterns that match as
    # written, and of the case-blind ones (their literal lowered, looked for in the lowered text)
    cased: tuple[tuple[Any, re.Pattern[str], str], ...]
    folded: tuple[tuple[Any, re.Pattern[str], str], ...]
    # the same entries grouped by one character of their literal (``_sign``): a text without
    # that character holds none of the group's literals, found by one scan for it
    cased_signs: tuple[tuple[str, tuple[tuple[Any, re.Pattern[str], str], ...]], ...]
    folded_signs: tuple[tuple[str, tuple[tuple[Any, re.Pattern[str], str], ...]], ...]
    keyword: Any  # the keyword plugin
    keyword_forms: dict[re.Pattern[str], int]  # form -> the value's group
    loose_forms: frozenset[re.Pattern[str]]  # forms whose value must look like a password
    keyword_gate: re.Pattern[str]  # a lowered line without a keyword skips the keyword forms
    # words one of which every match of the gate holds, and the longest match the gate has
    gate_words: tuple[str, ...]
    gate_width: int
    dropped: Callable[[str, str, Any], bool]  # detect-secrets' filters: a value that is no secret


@cache
def _detector() -> _Detector:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword as kw

    classes: dict[str, Any] = get_mapping_from_secret_type_to_class()
    plugins = tuple(cls() for kind, cls in classes.items() if kind not in _LEFT_OUT)
    keyword = next(plugin for plugin in plugins if isinstance(plugin, kw.KeywordDetector))
    said = re.compile(  # "the password is Hunter2-Zebra!": the keyword plugin's parts, in prose
        rf"{kw.DENYLIST_REGEX}\s+(?:is|was)\s+({kw.QUOTE}?)({kw.SECRET})(\2)", re.IGNORECASE
    )

    def dropped(value: str, line: str, plugin: Any) -> bool:
        shaped = (
            heuristic.is_templated_secret(value)
            or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_sequential_string(value)
            or heuristic.is_potential_uuid(value)
            or heuristic.is_not_alphanumeric_string(value)
        )
        if plugin is not keyword:  # a key of its own shape is one wherever it stands in a line
            return shaped
        return shaped or heuristic.is_likely_id_string(value, line, plugin) or heuristic.is_indirect_reference(line)

    shaped = [
        (plugin, regex, *_literal(regex)) for plugin in plugins if plugin is not keyword for regex in plugin.denylist
    ]
    cased = tuple((plugin, regex, literal) for plugin, regex, literal, folded in shaped if not folded)
    folded = tuple((plugin, regex, literal) for plugin, regex, literal, folded in shaped if folded)
    return _Detector(
        cased=cased,
        folded=folded,
        cased_signs=_by_sign(cased),
        folded_signs=_by_sign(folded),
        keyword=keyword,
        keyword_forms={kw.FOLLOWED_BY_EQUAL_SIGNS_REGEX: 5, kw.FOLLOWED_BY_COLON_REGEX: 4, said: 3},
        loose_forms=frozenset({kw.FOLLOWED_BY_COLON_REGEX, said}),
        # its keywords (lowercase, as its own list says) searched in the lowered text: ten times
        # quicker than its case-blind pattern with the word's tail (880 -> 80 us for 1,500 characters)
        keyword_gate=re.compile("|".join(kw.DENYLIST)),
        gate_words=_required_words(kw.DENYLIST),
        gate_width=max(_width(word) for word in kw.DENYLIST),
        dropped=dropped,
    )


def kinds(text: str) -> list[str]:
    """The kinds of credential ``text`` holds (``AWS Access Key``, ``Private Key``, ``password``,
    ...), sorted, each once; empty when it holds none."""
    if not text.strip():
        return []
    detector = _detector()
    # each pattern searches the whole text first, only if the text holds the literal every match
    # of it holds (most texts hold nothing: a few character scans, ``_held``); a plugin that matches, or a
    # keyword, is then read line by line as detect-secrets reads lines
    lowered = text.lower()
    plugins: list[Any] = []
    for plugin, regex, _ in _held(detector, text, lowered):
        if plugin not in plugins and regex.search(text):
            plugins.append(plugin)
    keyword = _gated(detector, lowered)
    found: set[str] = set()
    if plugins or keyword:
        for line in text.splitlines():
            found.update(_in_line(detector, plugins, keyword, line))
    return sorted(found)


def _held(detector: _Detector, text: str, lowered: str) -> list[tuple[Any, re.Pattern[str], str]]:
    """The shaped patterns whose literal ``text`` holds (the case-blind ones' in ``lowered``),
    each group's literals scanned for only when the text holds the group's sign."""
    held = [entry for sign, group in detector.cased_signs if sign in text for entry in group if entry[2] in text]
    held += [
        entry for sign, group in detector.folded_signs if sign in lowered for entry in group if entry[2] in lowered
    ]
    return held


def _gated(detector: _Detector, lowered: str) -> bool:
    """Whether the gate matches ``lowered``. Its alternation over a whole 700-character text
    costs ~13 us (every keyword is tried at every character), so it is searched only around
    each place one of ``gate_words`` stands: every match holds one, and lies within
    ``gate_width`` characters of it (the gate has no anchors or lookarounds, so a match in a
    window is one in the text)."""
    width = detector.gate_width
    for word in detector.gate_words:
        if not word:
            return detector.keyword_gate.search(lowered) is not None
        at = lowered.find(word)
        while at >= 0:
            if detector.keyword_gate.search(lowered, max(0, at - width), at + len(word) + width):
                return True
            at = lowered.find(word, at + 1)
    return False


def _in_line(detector: _Detector, plugins: list[Any], keyword: bool, line: str) -> Iterator[str]:
    for plugin in plugins:
        if any(not detector.dropped(value, line, plugin) for value in plugin.analyze_string(line)):
            yield _NAMES.get(plugin.secret_type, plugin.secret_type)
    if keyword:
        yield from _said(detector, line)


def _said(detector: _Detector, line: str) -> Iterator[str]:
    """A password in one of the keyword forms: each form is tried where a keyword starts (every
    form starts with one), not at every character of a long line."""
    lowered = line.lower()
    starts = [found.start() for found in detector.keyword_gate.finditer(lowered)]
    if len(lowered) != len(line):  # lowering moved the characters (rare letters): search it all
        starts = starts[:1] and [0]
    for start in starts:
        for form, group in detector.keyword_forms.items():
            match = (form.search if len(lowered) != len(line) else form.match)(line, start)
            if match is None:
                continue
            value = match.group(group)
            word = value.split()[0].rstrip(".,;:)") if value.split() else ""
            if _REFERENCE.fullmatch(word) or (form in detector.loose_forms and not _looks_like_password(word)):
                continue
            if not detector.dropped(value, line, detector.keyword):
                yield _NAMES["Secret Keyword"]
                return


def _literal(regex: re.Pattern[str]) -> tuple[str, bool]:
    """The longest run of literal characters at the top level of ``regex`` (every match holds it;
    "" when there is none), lowered when the pattern is case-blind, and whether it is. Read from
    the pattern itself, so a new plugin version needs nothing here."""
    folded = bool(regex.flags & re.IGNORECASE)
    best = max(_runs(regex.pattern, regex.flags), key=len, default="")
    return (best.lower() if folded else best), folded


def _by_sign(entries: Iterable[tuple[Any, re.Pattern[str], str]]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """``entries`` grouped by the ``_sign`` of their literal, in their order. A scan for one
    character is a ``memchr``, many times quicker than one for a word, and most texts lack most
    signs: ~30 literal scans of each record's text (every record of a bulk remember is checked)
    become 16 character scans and the scans of the few groups whose sign the text holds."""
    groups: dict[str, list[Any]] = {}
    for entry in entries:
        groups.setdefault(_sign(entry[2]), []).append(entry)
    return tuple((sign, tuple(group)) for sign, group in groups.items())


def _sign(literal: str) -> str:
    """The character of ``literal`` to scan for first: its first that is not a lower-case ASCII
    letter (digits, capitals and symbols are rarer in prose), else its first; "" (held by every
    text) for an empty literal."""
    return next((ch for ch in literal if not ("a" <= ch <= "z")), literal[:1])


def _runs(pattern: str, flags: int = 0) -> list[str]:
    """The runs of literal characters at the top level of ``pattern``: every match holds each."""
    from importlib import import_module

    parser = import_module("re._parser")  # the stdlib's own parser of patterns (no stubs)

    runs: list[str] = []
    run = ""
    for op, value in parser.parse(pattern, flags):
        if op is parser.LITERAL:
            run += chr(value)
        elif run:
            runs.append(run)
            run = ""
    return [*runs, run] if run else runs


def _width(pattern: str) -> int:
    """The most characters a match of ``pattern`` can span (a bounded pattern: the gate's)."""
    from importlib import import_module

    return int(import_module("re._parser").parse(pattern).getwidth()[1])


def _required_words(alternatives: Iterable[str]) -> tuple[str, ...]:
    """Words such that every match of any of ``alternatives`` holds one of them: of each, its
    shortest literal run of three characters or more (the last of equals: ``api_?key`` gives
    ``key``), then only the words that hold no other (``password`` holds ``pass``). An
    alternative with no such run gives "", which every text holds: the gate then always runs."""
    chosen = set()
    for alternative in alternatives:
        runs = [run for run in _runs(alternative) if len(run) >= 3]
        chosen.add(min(reversed(runs), key=len) if runs else "")
    return tuple(sorted(word for word in chosen if not any(other != word and other in word for other in chosen)))


def _looks_like_password(value: str) -> bool:
    """A value said in prose that is a password rather than a word: six characters or more, with a
    digit, a symbol or a capital after the first letter."""
    return len(value) >= 6 and (any(not ch.isalpha() for ch in value) or any(ch.isupper() for ch in value[1:]))


def record_kinds(record: Record) -> list[str]:
    """The kinds of credential in what a record says: its text, name, description and metadata."""
    parts = [record.text, record.name or "", record.description or "", *_strings(record.metadata)]
    return kinds("\n".join(parts))


def _strings(value: Any) -> Iterator[str]:
    """Every string in a metadata value (keys and values, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def described(found: Iterable[str]) -> str:
    """``["AWS Access Key", "password"]`` -> ``a credential (AWS Access Key, password)``."""
    return f"a credential ({', '.join(found)})"


@dataclass
class Screen:
    """The rule over one batch: a public record that holds a credential is refused unless
    ``allow``; a private one (read by its own scope only) is kept, and the batch warns of it."""

    allow: bool = False
    kept: list[tuple[str, list[str], str]] = field(default_factory=list)  # (id, kinds, visibility)

    def check(self, record: Record) -> None:
        """Raises for a public record that holds a credential, unless allowed."""
        found = record_kinds(record)
        if not found:
            return
        if record.scope.visibility == "public" and not self.allow:
            raise overridable(
                f"the record {record.id!r} holds what looks like {described(found)}, and a public record is "
                "shared: every scope reads it, and in a repository it is committed",
                "take the secret out (say where it is kept instead), or remember the record private",
                "allow_secrets",
            )
        self.kept.append((record.id, found, record.scope.visibility))

    def warnings(self) -> list[str]:
        """One line per record kept with a credential (the first few named, the rest counted)."""
        lines = [
            f"the record {rid!r} holds what looks like {described(found)}; kept {visibility}"
            + (", as allowed" if visibility == "public" else ": only its own scope reads it")
            for rid, found, visibility in self.kept[:_WARNED]
        ]
        if len(self.kept) > _WARNED:
            lines.append(f"{len(self.kept) - _WARNED} more record(s) hold what looks like a credential")
        return lines
