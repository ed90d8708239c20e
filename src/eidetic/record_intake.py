"""Records entering eidetic, checked and built: the one place their rules live. No I/O.

Every way a record enters (the ``remember`` argument, NDJSON lines, the Python API, a
hand-written file, an import) goes through :func:`record_from_input` or
:func:`record_from_stored`: system fields (lifecycle, usage, score, hash) are never taken from
input, visibility is validated on write, ids are checked for length and control characters, and
a record's shape (nesting, values, metadata size) is bounded before anything reads it deeply.
"""

from __future__ import annotations

from typing import Any

from . import clocks
from .clocks import EVENT_FIELDS
from .errors import user_error
from .records import (
    DEFAULT_SCOPE,
    DEFAULT_TYPE,
    LIFECYCLES,
    MAX_ID_CHARS,
    VISIBILITIES,
    Record,
    Scope,
    check_id,
    check_scope,
    derived_id,
    has_control,
)
from .settings import DEFAULT_MAX_TEXT_BYTES
from .timeutil import DATE_UNKNOWN, parse_ts

# Shape limits for every record that enters (input, hand-written files, imports): a few hundred
# bytes of YAML aliases can expand to millions of values, and a self-referencing or very deep
# structure exhausts any recursive reader. docs/reliability.md explains the numbers.
MAX_NESTING = 32  # levels of mappings and lists; the record (or the front matter) is level 0
MAX_VALUES = 10_000  # values in one record, aliases expanded
MAX_METADATA_BYTES = 64 * 1024  # metadata as compact JSON

# Keys that outputs carry and that re-ingesting an output may contain: accepted, never trusted.
SYSTEM_KEYS = frozenset(
    {
        "lifecycle",
        "hash",
        "score",
        "signal",
        "recall_count",
        "last_recall",
        "updated",
        "tier",
        "depth",
        "via",
        "parent",
        "explain",
        "store",
        "path",
        "history",
    }
)
INPUT_KEYS = frozenset(
    {"id", "text", "type", "name", "description", "metadata", "scope", "created", "added_by", "supersedes", "links"}
    | set(EVENT_FIELDS)
)


def load_json(text: str) -> Any:
    """``json.loads`` for input: a document nested too deeply for the parser (thousands of
    brackets) is a JSONDecodeError like any other bad JSON, not a RecursionError."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(f"nested too deeply (records nest at most {MAX_NESTING} levels)", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise json.JSONDecodeError(str(exc), text, 0) from None


def shape_problem(value: Any, children: Any = None) -> str | None:
    """Why ``value`` is too deep or too big to be a record (None when it is fine), found without
    recursion and without expanding more than ``MAX_VALUES`` values, so a cycle or an alias bomb
    costs a bounded walk. ``children(item)`` lists a container's members (None for a leaf); the
    default walks Python dicts and lists, the YAML reader passes one for its parse tree."""
    members = children or _members
    top = members(value)
    stack = [(top, 1)] if top is not None else []
    seen = 1
    while stack:  # only containers are pushed: leaves are counted where they are met
        inner, depth = stack.pop()
        if depth > MAX_NESTING:
            return f"it nests more than {MAX_NESTING} levels deep (or refers to itself)"
        seen += len(inner)
        if seen > MAX_VALUES:
            return f"it holds more than {MAX_VALUES} values (aliases expanded)"
        for child in inner:
            below = members(child)
            if below is not None:
                stack.append((below, depth + 1))
    return None


def _members(item: Any) -> Any:
    if isinstance(item, dict):
        return [*item.keys(), *item.values()]
    if isinstance(item, (list, tuple)):
        return item
    return None


def _optional_str(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise user_error(
            f"'{key}' must be a string or null (got {type(value).__name__})", f"give '{key}' as a JSON string"
        )
    return value


def _check_text(text: object, max_text_bytes: int) -> str:
    if not isinstance(text, str):
        raise user_error("'text' must be a string", 'give the memory as "text": "..."')
    if not text.strip():
        raise user_error("'text' is empty", "a record needs a non-empty 'text'")
    size = len(text.encode("utf-8"))
    if size > max_text_bytes:
        raise user_error(
            f"'text' is {size} bytes, over the limit of {max_text_bytes}",
            "split the text into several records, or raise EIDETIC_MAX_TEXT_BYTES",
        )
    return text


def _check_links(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise user_error("'links' must be a list of ids", 'e.g. "links": ["note-1", "note-2"]')
    links: list[str] = []
    for item in value:
        link = check_id(item, "link id")
        if link not in links:
            links.append(link)
    return links


def _check_created(value: object) -> str | None:
    if value is None:
        return None
    if value == DATE_UNKNOWN:
        return DATE_UNKNOWN
    if not isinstance(value, str) or parse_ts(value) is None:
        raise user_error(
            f"'created' is not an ISO-8601 date: {value!r}",
            "use e.g. 2026-11-30 or 2026-11-30T08:00:00+00:00, or 'date-unknown'",
        )
    return value


def record_from_input(
    raw: object,
    *,
    default_scope: Scope,
    added_by: str | None,
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES,
) -> tuple[Record, bool]:
    """Validate one caller-supplied object. Returns the record and whether ``created`` was given.

    System keys (lifecycle, usage, score, hash, ...) are accepted so that recall output can be
    fed back in, but they are ignored. Unknown keys are rejected: a typo such as ``metdata``
    would otherwise silently lose provenance.
    """
    raw = _checked_object(raw)
    text = _check_text(raw.get("text"), max_text_bytes)
    scope = _input_scope(raw.get("scope"), default_scope)
    record_type = raw.get("type", DEFAULT_TYPE)
    if record_type is None:
        record_type = DEFAULT_TYPE
    if not isinstance(record_type, str) or not record_type.strip() or has_control(record_type):
        raise user_error(f"invalid 'type' {record_type!r}", "type is a short word such as note or lesson")
    metadata = raw.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise user_error("'metadata' must be a JSON object", 'e.g. "metadata": {"source": "docs"}')
    record_id = raw.get("id")
    record_id = derived_id(scope, text) if record_id is None else check_id(record_id)
    supersedes = raw.get("supersedes")
    supersedes = None if supersedes is None else check_id(supersedes, "supersedes")
    created = _check_created(raw.get("created"))
    event = _event_clock(raw)
    record = Record(
        id=record_id,
        text=text,
        type=record_type,
        name=_optional_str(raw, "name"),
        description=_optional_str(raw, "description"),
        metadata=metadata,
        scope=scope,
        created=created or DATE_UNKNOWN,
        added_by=_optional_str(raw, "added_by") if "added_by" in raw else added_by,
        supersedes=supersedes,
        links=_check_links(raw.get("links")),
        occurred=event["occurred"],
        valid_from=event["valid_from"],
        valid_until=event["valid_until"],
    )
    return record, created is not None


def _event_clock(raw: dict[str, Any]) -> dict[str, str | None]:
    """``occurred``, ``valid_from`` and ``valid_until`` of an input, each an ISO date or absent."""
    try:
        event = {key: clocks.check_moment(raw.get(key), key) for key in EVENT_FIELDS}
        clocks.check_interval(event["valid_from"], event["valid_until"])
    except ValueError as exc:
        raise user_error(
            str(exc), "use e.g. 2026-11-30 or 2026-11-30T08:00:00+00:00 (or leave it out); 'eidetic explain time'"
        ) from None
    return event


def _checked_object(raw: object) -> dict[str, Any]:
    """``raw``, if it is a JSON object within the shape limits, that every backend can store,
    with known keys."""
    if not isinstance(raw, dict):
        raise user_error(
            f"a record must be a JSON object (got {type(raw).__name__})", 'e.g. {"id": "note-1", "text": "..."}'
        )
    problem = shape_problem(raw)
    if problem:
        raise user_error(
            f"the record is too complex: {problem}", f"keep records under {MAX_NESTING} levels and {MAX_VALUES} values"
        )
    _check_encodable(raw)
    unknown = sorted(set(raw) - INPUT_KEYS - SYSTEM_KEYS)
    if unknown:
        raise user_error(
            f"unknown record field(s): {', '.join(unknown)}", "record fields are: " + ", ".join(sorted(INPUT_KEYS))
        )
    return raw


def _input_scope(inline: object, default_scope: Scope) -> Scope:
    if inline is None:
        return default_scope
    if not isinstance(inline, dict) or set(inline) - {"name", "visibility"}:
        raise user_error(
            "'scope' must be an object with 'name' and 'visibility'",
            'e.g. "scope": {"name": "default", "visibility": "public"}',
        )
    return check_scope(inline.get("name", default_scope.name), inline.get("visibility", default_scope.visibility))


def _check_encodable(raw: dict[str, Any]) -> None:
    """Reject what cannot be stored faithfully by every backend: lone surrogates, NaN/Infinity
    (which Python's JSON parser accepts, but JSON, YAML files and other readers do not) and NUL
    characters (PostgreSQL text cannot hold them)."""
    import json

    try:
        dumped = json.dumps(raw, ensure_ascii=False, allow_nan=False)
        size = len(dumped.encode("utf-8"))
    except UnicodeEncodeError:
        raise user_error(
            "the record contains invalid unicode (a lone surrogate)",
            "send UTF-8 text; escape sequences like \\ud800 alone are not characters",
        ) from None
    except ValueError as exc:
        if "float" not in str(exc):  # an integer of more digits than Python converts to text
            raise user_error(
                f"the record contains a number that cannot be stored ({exc})", "send very long numbers as strings"
            ) from None
        raise user_error("the record contains NaN or Infinity", "use null or a finite number") from None
    if "\\u0000" in dumped and _has_nul(raw):
        raise user_error("the record contains a NUL character (\\u0000)", "remove it: not every backend can store it")
    if size > MAX_METADATA_BYTES:  # the whole record's JSON is never smaller than its metadata's
        size = _metadata_bytes(raw.get("metadata"))
        if size > MAX_METADATA_BYTES:
            raise user_error(
                f"'metadata' is {size} bytes as JSON, over the limit of {MAX_METADATA_BYTES}",
                "keep metadata to provenance and facets; put long content in the text",
            )


def _has_nul(value: Any) -> bool:
    """Whether any string in ``value`` (keys too) holds a NUL; ``value`` is within the shape limits."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        else:
            stack.extend(_members(item) or ())
    return False


def _metadata_bytes(metadata: Any) -> int:
    import json

    return len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _stored_problem(data: dict[str, Any], text: str) -> str | None:
    """Why a stored record (front matter within the shape limits, made JSON-able) cannot be
    served faithfully: what remember refuses (NaN, Infinity, NUL, oversized metadata) is refused
    here too, so export, import and migrate never meet it."""
    import json

    try:
        dumped = json.dumps(data, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return "a value is .nan or .inf, which JSON cannot carry (use a string or null)"
    if "\x00" in text or ("\\u0000" in dumped and _has_nul(data)):
        return "it contains a NUL character"
    if len(dumped) > MAX_METADATA_BYTES // 4 and _metadata_bytes(data.get("metadata")) > MAX_METADATA_BYTES:
        return f"its metadata is over {MAX_METADATA_BYTES} bytes as JSON"
    return None


def jsonable(value: Any) -> Any:
    """YAML can hold dates and other types JSON cannot; turn them into JSON values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _stored_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise ValueError(f"'{key}' must be a plain value")
    return jsonable(value) if not isinstance(value, str) else value


def _stored_scope(raw_scope: Any, default_scope: Scope) -> Scope:
    if raw_scope is None:
        return default_scope
    if not isinstance(raw_scope, dict):
        raise ValueError("'scope' must be a mapping with name and visibility")
    name = raw_scope.get("name", default_scope.name)
    visibility = raw_scope.get("visibility", default_scope.visibility)
    if visibility not in VISIBILITIES:  # fail closed: never serve an unknown visibility
        raise ValueError(f"unknown visibility {visibility!r}")
    if not isinstance(name, str) or not name or has_control(name):
        raise ValueError("invalid scope name")
    return Scope(name, visibility)


def record_from_stored(
    data: dict[str, Any], text: str, fallback_id: str, default_scope: Scope = DEFAULT_SCOPE
) -> Record:
    """Build a record from a file's front matter (already within the shape limits: the reader
    measures its parse tree, see ``frontmatter``); raises ValueError when it cannot be a record.

    Hand-written files (coding agents' memory folders) carry only name/description/type: the
    id then comes from the file name and the scope defaults to the store's default.
    """
    data = jsonable(data)
    problem = _stored_problem(data, text)
    if problem:
        raise ValueError(problem)
    record_id = data.get("id", fallback_id)
    if not isinstance(record_id, (str, int)) or isinstance(record_id, bool):
        raise ValueError("'id' must be a string")
    record_id = str(record_id)
    if not record_id or len(record_id) > MAX_ID_CHARS or has_control(record_id):
        raise ValueError("'id' is empty, too long or has control characters")
    scope = _stored_scope(data.get("scope"), default_scope)
    lifecycle = data.get("lifecycle") or "active"
    if lifecycle not in LIFECYCLES:
        raise ValueError(f"unknown lifecycle {lifecycle!r}")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("'metadata' must be a mapping")
    links = data.get("links") or []
    if not isinstance(links, list):
        raise ValueError("'links' must be a list")
    created = data.get("created")
    created = DATE_UNKNOWN if created is None else created
    if not isinstance(created, str):
        created = str(created)
    record_type = _stored_str(data, "type") or DEFAULT_TYPE
    supersedes = _stored_str(data, "supersedes")
    event = {key: clocks.check_moment(_stored_str(data, key), key) for key in EVENT_FIELDS}
    clocks.check_interval(event["valid_from"], event["valid_until"])
    return Record(
        id=record_id,
        text=text,
        type=str(record_type),
        name=_stored_str(data, "name"),
        description=_stored_str(data, "description"),
        metadata=metadata,
        scope=scope,
        created=created,
        updated=_stored_str(data, "updated"),
        added_by=_stored_str(data, "added_by"),
        supersedes=str(supersedes) if supersedes is not None else None,
        links=[str(link) for link in links],
        lifecycle=lifecycle,
        occurred=event["occurred"],
        valid_from=event["valid_from"],
        valid_until=event["valid_until"],
        history=clocks.parse_history(data.get("history")),
    )
