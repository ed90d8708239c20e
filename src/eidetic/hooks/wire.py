"""What travels on the hook daemon's socket. The client's half uses built-in modules only: a
hook process that loads ``json`` (and with it ``re``) or ``socket`` pays for it on every prompt.

A hook request is one header line, ``hook<TAB>AGENT<TAB>EVENT<TAB>MODE<TAB>CWD-HEX``, then the
agent's payload exactly as it came on stdin: the daemon parses it (``request``). The answer is
the text the hook prints (Claude Code's JSON, or nothing), a NUL byte, then the lines to log
(``answer``/``parse_answer``). Control requests (``eidetic hooks status|stop``) are one JSON
object each way.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

HOOK = b"hook\t"


def hook_request(agent: str, event: str, mode: str, cwd: str, payload: bytes) -> bytes:
    """A hook request (client side)."""
    header = "\t".join((agent, event, mode, os.fsencode(cwd).hex()))
    return HOOK + header.encode("ascii") + b"\n" + payload


def parse_answer(data: bytes) -> tuple[str, list[str]]:
    """(text to print, lines to log) of an answer (client side)."""
    text, _, logged = data.partition(b"\0")
    lines = logged.decode("utf-8", "replace").split("\n")
    return text.decode("utf-8", "replace"), [line for line in lines if line.strip()]


def request(data: bytes) -> dict[str, Any] | None:
    """A hook or control request as the daemon handles it (daemon side); None when it is
    neither. A hook's payload that is not a JSON object becomes None (``payload``)."""
    import json

    if data.startswith(HOOK):
        header, _, body = data[len(HOOK) :].partition(b"\n")
        fields = header.decode("ascii", "replace").split("\t")
        if len(fields) != 4:
            return None
        agent, event, mode, cwd = fields
        try:
            folder = os.fsdecode(bytes.fromhex(cwd))
        except ValueError:
            return None
        try:
            payload = json.loads(body.decode("utf-8", "replace"))
        except ValueError:
            payload = None
        return {
            "agent": agent,
            "event": event,
            "mode": mode,
            "cwd": folder,
            "payload": payload if isinstance(payload, dict) else None,
        }
    try:
        found = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    return found if isinstance(found, dict) and "control" in found else None


def answer(found: dict[str, Any]) -> bytes:
    """A hook answer (``{"stdout", "log"}``, as ``respond.handle`` returns it) on the wire."""
    lines = [" ".join(str(line).split()) for line in found.get("log", [])]
    return str(found.get("stdout") or "").replace("\0", "").encode("utf-8") + b"\0" + "\n".join(lines).encode("utf-8")
