"""``eidetic mcp``: a Model Context Protocol server over stdio (see ``eidetic.mcp.server``)."""

from __future__ import annotations

import argparse
import sys
from contextlib import suppress

from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "mcp",
        help="serve remember / recall / sweep / overview to coding agents (MCP over stdio)",
        description="Run a Model Context Protocol server on stdin/stdout for one session scope. "
        "Tools read as that scope unless a call names another; private records are "
        "served only for the session's own scope, when it is private.",
    )
    parser.add_argument("--scope", help="the session's scope name (default: default)")
    parser.add_argument(
        "--visibility",
        help="public (default) or private: private also sees, and by default writes, that scope's private records",
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the SDK and the store stack are heavy, and `eidetic --help` must stay fast.
    from ..mcp.server import serve
    from ..ranking.access import Access

    scope = Access.of(args.scope, args.visibility).scope
    if sys.stdin is not None and sys.stdin.isatty():
        _announce(f"{scope.name}/{scope.visibility}")
    # Ctrl-C on a terminal is the server's normal end, not a failure
    with suppress(KeyboardInterrupt), open_memory(args, progress=False) as memory:
        serve(memory, scope)  # its client hears warnings as MCP log messages
    return 0


def _announce(scope: str) -> None:
    """Started by a person rather than by an agent: say what this is, on stderr (stdout is the
    protocol's), since it otherwise waits silently for JSON-RPC."""
    sys.stderr.write(
        f"eidetic mcp: a Model Context Protocol server for {scope}, waiting for an agent's JSON-RPC on stdin.\n"
        "An agent starts it itself: register it with `claude mcp add eidetic -- eidetic mcp` "
        "(or your client's mcpServers configuration). Ctrl-C stops it.\n"
    )
    sys.stderr.flush()
