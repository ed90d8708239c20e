"""Record <-> markdown file text: YAML front matter between ``---`` lines, then the body.

The layout round-trips ``text`` exactly: we write ``---``, the YAML, ``---``, one blank line,
the text and a final newline; reading strips exactly that one leading blank line and one
trailing newline. Hand-written files (no blank line, no trailing newline) read naturally too.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from .clocks import EVENT_FIELDS
from .record_intake import record_from_stored, shape_problem
from .records import DEFAULT_SCOPE, Record, Scope
from .timeutil import DATE_UNKNOWN

DELIMITER = "---"


@lru_cache(maxsize=1)
def _yaml() -> tuple[Any, type, type]:
    """PyYAML and its fastest safe loader/dumper, imported on first use: a keyword recall on
    an up-to-date index never parses a file and should not pay for the import."""
    import yaml

    try:  # libyaml makes dumping and parsing several times faster; PyYAML wheels ship it
        return yaml, yaml.CSafeLoader, yaml.CSafeDumper
    except AttributeError:  # pragma: no cover - pure-Python PyYAML
        return yaml, yaml.SafeLoader, yaml.SafeDumper


def front_matter_of(record: Record, lead: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields a record file stores, in a stable, readable order (the fields named in
    ``lead`` first); empty optionals omitted."""
    data: dict[str, Any] = {"id": record.id, "type": record.type}
    if record.name is not None:
        data["name"] = record.name
    if record.description is not None:
        data["description"] = record.description
    data["scope"] = record.scope.to_dict()
    data["created"] = record.created
    if record.updated:
        data["updated"] = record.updated
    for key in EVENT_FIELDS:
        if getattr(record, key) is not None:
            data[key] = getattr(record, key)
    if record.added_by is not None:
        data["added_by"] = record.added_by
    if record.supersedes is not None:
        data["supersedes"] = record.supersedes
    if record.links:
        data["links"] = list(record.links)
    data["lifecycle"] = record.lifecycle
    if record.history:
        data["history"] = [change.to_dict() for change in record.history]
    if record.metadata:
        data["metadata"] = record.metadata
    if lead:
        return {**{key: data[key] for key in lead if key in data}, **data}
    return data


def render(record: Record, lead: tuple[str, ...] = ()) -> str:
    """The file text of a record (``lead``: the fields written first). The YAML is written
    directly (a subset: plain words, JSON-style double-quoted strings, numbers, flow
    collections): about 10x faster than PyYAML's representer, and every value reads back as
    exactly what was written (tested against PyYAML's loader)."""
    lines = [DELIMITER]
    for key, value in front_matter_of(record, lead).items():
        if isinstance(value, dict) and value:
            lines.append(f"{key}:")
            lines.extend(f"  {_scalar(str(k))}: {_flow(v)}" for k, v in value.items())
        elif key == "history":  # one change a line, oldest first
            lines.append(f"{key}:")
            lines.extend(f"  - {_flow(change)}" for change in value)
        else:
            lines.append(f"{key}: {_flow(value)}")
    lines.append(DELIMITER)
    return "\n".join(lines) + f"\n\n{record.text}\n"


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf"})
# JSON leaves these raw, but YAML does not allow them unescaped (non-printable or line breaks)
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _scalar(text: str) -> str:
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def _flow(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text:  # YAML 1.1 floats need a dot: 1e+100 -> 1.0e+100
            mantissa, _, exponent = text.partition("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, str):
        return _scalar(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(str(value))


def split(content: str) -> tuple[dict[str, Any], str]:
    """Split file text into (front matter mapping, body). Raises ValueError when malformed."""
    if content.startswith("\ufeff"):
        content = content[1:]
    first, sep, rest = content.partition("\n")
    if first.rstrip("\r") != DELIMITER or not sep:
        return {}, _body(content)  # plain markdown: no front matter at all
    end = _closing(rest)
    if end < 0:
        raise ValueError("front matter has no closing '---' line")
    header = rest[:end]
    after = rest[end:].partition("\n")[2]
    data = _load_yaml(header) if header.strip() else {}
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping of fields")
    return data, _body(after)


def _load_yaml(header: str) -> Any:
    """The front matter's value, built only after its parse tree passed the shape limits
    (``record_intake.shape_problem``): aliases can make a few hundred bytes stand for millions of
    values, or for a structure that contains itself, and building that would take the store
    down with it."""
    yaml, loader_class, _ = _yaml()
    loader = loader_class(header)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = shape_problem(node, _node_children)
        if problem:
            raise ValueError(f"front matter refused: {problem}")
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise ValueError(f"front matter is not valid YAML{where}") from None
    finally:
        loader.dispose()


def _node_children(node: Any) -> list[Any] | None:
    """A YAML parse-tree node's members (keys and values of a mapping); None for a scalar."""
    value = node.value
    if isinstance(value, str):
        return None
    if value and isinstance(value[0], tuple):
        return [part for pair in value for part in pair]
    return value


def _closing(rest: str) -> int:
    """Offset of the closing delimiter line in ``rest``, or -1."""
    pos = 0
    while pos <= len(rest):
        nl = rest.find("\n", pos)
        line = rest[pos:] if nl < 0 else rest[pos:nl]
        if line.rstrip("\r") == DELIMITER:
            return pos
        if nl < 0:
            return -1
        pos = nl + 1
    return -1


def _body(body: str) -> str:
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    if body.endswith("\n"):
        return body[:-1]
    return body


def parse(content: str, fallback_id: str, default_scope: Scope = DEFAULT_SCOPE) -> Record:
    """A record from file text; raises ValueError with a reason when it is not one."""
    data, text = split(content)
    if not text.strip():
        raise ValueError("the record has no text")
    record = record_from_stored(data, text, fallback_id, default_scope)
    if record.created is None:
        record.created = DATE_UNKNOWN
    return record
