"""``eidetic mcp``: a Model Context Protocol server over stdio (see ``eidetic.mcp.server``)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

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
    on_terminal = sys.stdin is not None and sys.stdin.isatty()
    with open_memory(args, progress=False) as memory:  # its client hears warnings as MCP log messages
        if on_terminal:  # once the store is open: ready to serve
            _stdin_through_pipe()
            _announce(f"{scope.name}/{scope.visibility}")
        serve(memory, scope)
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


def _stdin_through_pipe() -> None:
    """Serve a terminal's input through a pipe that Ctrl-C (or Ctrl-D) closes.

    The SDK reads stdin on a worker thread that nothing can interrupt, and a terminal never ends
    by itself, so Ctrl-C alone would leave the server waiting for a line. Closing the pipe ends
    its input as an agent ends it, by closing stdin: the server stops cleanly, store closed. A
    second Ctrl-C interrupts as usual (a call that hangs)."""
    read_end, write_end = os.pipe()
    terminal = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    lock = threading.Lock()
    open_ends = [write_end]

    def close() -> None:
        with lock:
            if open_ends:
                os.close(open_ends.pop())

    def interrupted(*_: object) -> None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        close()

    def copy() -> None:
        while chunk := os.read(terminal, 65536):
            with lock:
                if not open_ends:
                    return
                os.write(write_end, chunk)
        close()

    signal.signal(signal.SIGINT, interrupted)
    threading.Thread(target=copy, name="eidetic-mcp-terminal", daemon=True).start()
