"""``eidetic mcp``: a Model Context Protocol server over stdio (see ``eidetic.mcp.server``)."""

from __future__ import annotations

import argparse

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
    with open_memory(args, progress=False) as memory:  # its client hears warnings as MCP log messages
        serve(memory, scope)
    return 0
