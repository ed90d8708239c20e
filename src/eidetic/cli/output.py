"""Printing: results on stdout, diagnostics on stderr, never mixed."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import EideticError


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def emit_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


def inform(message: str) -> None:
    """A fact about what a command did, for people (stderr: stdout stays the result)."""
    sys.stderr.write(f"{message}\n")


def report_error(error: EideticError, as_json: bool) -> int:
    if as_json:
        sys.stderr.write(json.dumps(error.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"error: {error.message}\n")
        if error.remediation:
            sys.stderr.write(f"hint: {error.remediation}\n")
    return error.code
