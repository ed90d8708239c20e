"""Printing: results on stdout, diagnostics on stderr, never mixed.

With ``--json`` every verb prints only JSON: its result on stdout, and on stderr one JSON object
a line, ``{"warning"}`` for a warning, ``{"info"}`` for a note, ``{"progress", "total"}`` when a
long run starts (``cli.progress``) and ``{"code", "message", "remediation"}`` for an error. On a
terminal the result on stdout is indented for reading; in a pipe it is one line."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import EideticError


def emit_json(data: Any, stream: bool = False) -> None:
    """``data`` as JSON on one line, or indented for a person when stdout is a terminal (a
    ``stream`` of events keeps one object a line everywhere)."""
    indent = 2 if not stream and sys.stdout.isatty() else None
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=indent) + "\n")


def emit_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(message: str, as_json: bool = False) -> None:
    if as_json:
        sys.stderr.write(json.dumps({"warning": message}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"warning: {message}\n")


def inform(message: str, as_json: bool = False) -> None:
    """A fact about what a command did (stderr: stdout stays the result); ``{"info"}`` with --json."""
    if as_json:
        sys.stderr.write(json.dumps({"info": message}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"{message}\n")


def report_error(error: EideticError, as_json: bool) -> int:
    if error.option is not None or error.override is not None:
        error = _with_flags(error)
    if as_json:
        sys.stderr.write(json.dumps(error.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {error.message}\n")
        if error.remediation:
            sys.stderr.write(f"hint: {error.remediation}\n")
    return error.code


def _with_flags(error: EideticError) -> EideticError:
    """An error about a query option, named as the command line names it (``--top-k 5``)."""
    from ..query import flag_of

    def example(option: str, value: Any) -> str:
        if value is True:  # a switch
            return flag_of(option)
        return " ".join(f"{flag_of(option)} {item}" for item in (value if isinstance(value, list) else [value]))

    return error.spelled(flag_of, example)
