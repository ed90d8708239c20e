"""Records and scopes: the data model, id rules, hashing and where a record's file goes. No I/O.

What enters eidetic (the ``remember`` argument, NDJSON lines, the Python API, a hand-written
file) is checked and turned into a :class:`Record` by ``record_intake``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from . import clocks
from .clocks import EVENT_FIELDS, Change
from .errors import user_error
from .timeutil import DATE_UNKNOWN

VISIBILITIES = ("public", "private")
LIFECYCLES = clocks.STATES
DEFAULT_TYPE = "note"
# types are free text; these are the ones eidetic itself names (the hooks' start context reads
# decisions, lessons and feedback), offered when a type looks mistyped
COMMON_TYPES = (DEFAULT_TYPE, "decision", "lesson", "feedback")
DEFAULT_SCOPE_NAME = "default"
MAX_ID_CHARS = 256
MAX_SCOPE_CHARS = 128


@dataclass(frozen=True, order=True)
class Scope:
    """Who may see a record: a name plus ``public`` (everyone) or ``private`` (that scope only)."""

    name: str = DEFAULT_SCOPE_NAME
    visibility: str = "public"

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "visibility": self.visibility}


DEFAULT_SCOPE = Scope()


@dataclass
class Record:
    """One memory. ``lifecycle`` is system-managed; usage state lives outside the record."""

    id: str
    text: str
    type: str = DEFAULT_TYPE
    name: str | None = None
    description: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: Scope = DEFAULT_SCOPE
    created: str = DATE_UNKNOWN
    updated: str | None = None
    added_by: str | None = None
    supersedes: str | None = None
    links: list[str] = field(default_factory=list)
    lifecycle: str = "active"
    # the event clock (``clocks``): when what it tells happened, and when what it says holds
    occurred: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    history: tuple[Change, ...] = ()  # its lifecycle changes, dated; system-managed like lifecycle

    @cached_property
    def hash(self) -> str:
        """sha256 of the text. Cached: records are never mutated in place (``with_changes``
        makes a new one), and a batch asks for it several times."""
        return text_hash(self.text)

    @cached_property
    def norm(self) -> str:
        """The key of the text once normalised (``normal_key``): what a remember's
        identical-text check looks up and stores. Cached like ``hash``."""
        return normal_key(self.text)

    def content_key(self) -> tuple[Any, ...]:
        """Everything a caller controls; two records with equal keys need no rewrite."""
        return (
            self.text,
            self.type,
            self.name,
            self.description,
            self.metadata,
            self.scope,
            self.added_by,
            self.supersedes,
            self.links,
            self.occurred,
            self.valid_from,
            self.valid_until,
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field; the event clock and the history only when the record has them."""
        data: dict[str, Any] = {
            "id": self.id,
            "text": self.text,
            "type": self.type,
            "name": self.name,
            "description": self.description,
            "metadata": self.metadata,
            "scope": self.scope.to_dict(),
            "created": self.created,
            "updated": self.updated,
            "added_by": self.added_by,
            "supersedes": self.supersedes,
            "links": list(self.links),
            "lifecycle": self.lifecycle,
            "hash": self.hash,
        }
        data.update({key: getattr(self, key) for key in EVENT_FIELDS if getattr(self, key) is not None})
        if self.history:
            data["history"] = [change.to_dict() for change in self.history]
        return data

    def with_changes(self, **changes: Any) -> Record:
        """A copy with these fields changed; the text's cached keys go along while the text
        stays (a bulk remember re-dates every record, and its norm key costs ~50 us each)."""
        changed = replace(self, **changes)
        if "text" not in changes:
            for key in ("hash", "norm"):
                if key in self.__dict__:
                    changed.__dict__[key] = self.__dict__[key]
        return changed


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_WORD = re.compile(r"\w+")  # the words; whatever lies between them (spaces, punctuation) is one space
# In ASCII text a word character is a letter, a digit or "_": every other character is a gap.
_ASCII_GAPS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})


def normalised(text: str) -> str:
    """The text as its words alone: compatibility forms folded (NFKC), case folded,
    punctuation dropped and whitespace collapsed. Two records with the same normalised text
    are near-duplicates whatever their vectors say ("Use  uv." and "use uv"). ASCII text (NFKC
    leaves it as it is, and its case folds as ``lower`` does) takes a path about twice as
    fast as the regular expression, its runs of spaces halved with ``replace`` rather than split
    into words and joined (7.5 -> 3.9 us a record): a bulk remember normalises every text it writes."""
    if text.isascii():
        spaced = text.lower().translate(_ASCII_GAPS)  # words between runs of spaces
        while "  " in spaced:  # each pass halves the runs, and makes no string per word
            spaced = spaced.replace("  ", " ")
        return spaced.strip(" ")
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def normal_key(text: str) -> str:
    """A hash of the text's normalised form: stored with each record, so a remember finds the
    stored records its texts repeat in one lookup, however many there are (``Record.norm``
    keeps it with the record, computed once)."""
    return hashlib.sha256(normalised(text).encode("utf-8")).hexdigest()[:32]


def derived_id(scope: Scope, text: str) -> str:
    """The id of a record given without one: stable for the same scope and text."""
    digest = hashlib.sha256(f"{scope.name}\0{scope.visibility}\0{text}".encode())
    return "m-" + digest.hexdigest()[:20]


# Unicode's control characters (category Cc), a range fixed by the standard: C0, DEL and C1.
# One regular expression search instead of a category lookup per character (a bulk remember
# checks every record's id, scope and type).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def has_control(value: str) -> bool:
    """Whether ``value`` holds a control character (newline, tab, NUL...): never in an id, a
    scope or a type."""
    return _CONTROL.search(value) is not None


def check_id(value: object, what: str = "id") -> str:
    if not isinstance(value, str):
        raise user_error(
            f"{what} must be a string (got {type(value).__name__})",
            f'give {what} as a JSON string, e.g. "{what}": "note-1"',
        )
    if not 1 <= len(value) <= MAX_ID_CHARS:
        raise user_error(f"{what} must be 1-{MAX_ID_CHARS} characters (got {len(value)})", f"use a shorter {what}")
    if has_control(value):
        raise user_error(
            f"{what} {value!r} contains control characters",
            "ids may not contain newlines, tabs or other control characters",
        )
    return value


def check_scope(name: object, visibility: object) -> Scope:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_SCOPE_CHARS or has_control(name):
        raise user_error(
            f"invalid scope name {name!r}", f"a scope name is 1-{MAX_SCOPE_CHARS} printable characters, e.g. 'default'"
        )
    if visibility not in VISIBILITIES:
        raise user_error(f"unknown visibility {visibility!r}", "visibility must be 'public' or 'private'")
    return Scope(name, str(visibility))


_SAFE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
RESERVED_STEMS = frozenset(  # the index file and names Windows keeps for devices
    {"memory", "con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def shard_of(record_id: str) -> str:
    return hashlib.sha256(record_id.encode("utf-8")).hexdigest()[:2]


def record_path(record_id: str) -> str:
    """Where eidetic writes a new record: ``<2 hex chars>/<file name>`` under the store.

    256 folders keep every folder small (about 400 files at 100k records), so the change
    check after a write or a hand edit re-lists one small folder instead of the whole store.
    Hand-written files may live anywhere in the store; they stay where they are.
    """
    return f"{shard_of(record_id)}/{file_name_for_id(record_id)}"


def file_name_for_id(record_id: str) -> str:
    """A safe, unique file name for any id.

    Simple lower-case ids are used as they are (``note-1`` -> ``note-1.md``). Anything else
    (upper case, slashes, dots at the start, unicode, reserved names) becomes a slug plus a
    hash: ``~`` never appears in a verbatim name, so two ids can never share a file, even on
    case-insensitive file systems, and no id can name a path outside the store.
    """
    stem = record_id[:-3] if record_id.endswith(".md") else record_id
    if _SAFE_NAME.fullmatch(record_id) and not record_id.endswith(".md") and stem.split(".")[0] not in RESERVED_STEMS:
        return record_id + ".md"
    slug = re.sub(r"[^a-z0-9._-]+", "-", record_id.lower()).strip("-.")[:60] or "record"
    digest = hashlib.sha256(record_id.encode("utf-8")).hexdigest()[:16]
    return f"{slug}~{digest}.md"
