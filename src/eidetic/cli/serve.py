"""``eidetic serve``: the web viewer and MCP over streamable HTTP, for one session scope."""

from __future__ import annotations

import argparse
import errno
import secrets
import socket
import sys
import threading
from typing import TYPE_CHECKING

from .stores import open_memory

if TYPE_CHECKING:
    from ..records import Scope
    from ..web.limits import Limits

# Calls served at once: reads of several members run side by side on their own connections
# (writes wait for each other in the store, never for reads); a fifth waits for a free thread.
# See docs/team-server.md and docs/benchmarks.md ("Many agents on one server").
DEFAULT_WORKERS = 4

# The same address on every start, so a bookmark, an agent's MCP configuration and a teammate's
# link keep working; 0 asks for a free one.
DEFAULT_PORT = 8377


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "serve",
        help="a web viewer for people and MCP over HTTP (at /mcp) for agents, on one warm store",
        description="Serve the store to a browser and to MCP clients (streamable HTTP at /mcp) for "
        "one session scope, as `eidetic mcp` does on stdio. On loopback (the default) no token is "
        "needed; on any other address a token is: EIDETIC_SERVE_TOKEN, else one is made and printed "
        "once, in the URL to open. Once members' tokens exist (eidetic tokens add), every request "
        "needs one, and runs as its member (their scope, their name, their rights).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one, printed)"
    )
    parser.add_argument("--open", action="store_true", help="open the viewer in your web browser once it listens")
    parser.add_argument(
        "--token",
        action="store_true",
        help="require a token on loopback too (EIDETIC_SERVE_TOKEN, else a new one)",
    )
    parser.add_argument(
        "--max-body",
        type=int,
        default=1 << 20,
        metavar="BYTES",
        help="largest request body accepted; a larger one gets 413 (default 1048576, 1 MiB)",
    )
    parser.add_argument(
        "--per-token",
        type=int,
        default=None,
        metavar="N",
        help="calls in flight per token (per address without one); more wait briefly, then get 429 "
        "(default: half the workers, at least 1, so one caller never holds every thread)",
    )
    parser.add_argument("--scope", help="the session's scope name (default: your configured scope)")
    parser.add_argument(
        "--visibility", help="public (default) or private: private also sees that scope's private records"
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=DEFAULT_WORKERS,
        metavar="N",
        help=f"calls served at once, each on a thread with its own store connections (default {DEFAULT_WORKERS}; "
        "1 serves one call at a time)",
    )
    add_common(parser)
    parser.set_defaults(run=run)


def _workers(value: str) -> int:
    """``--workers``: a whole number from 1 on, refused with a hint otherwise."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"a whole number of threads from 1 on, not {value!r}")
    return int(value)


def run(args: argparse.Namespace) -> int:
    # Imported here: the web stack, the SDK and the store are heavy; `eidetic --help` stays fast.
    import uvicorn

    from ..session import Session
    from ..team.tokens import open_registry
    from ..team.write_log import open_write_log
    from ..web.app import create_app
    from ..web.guard import given_token, is_loopback
    from ..web.stopping import GRACE, Server
    from ..workers import Workers

    limits = _limits(args.max_body, args.per_token, args.workers)
    with open_memory(args, progress=False) as memory:  # first: a bad store flag or scope binds nothing
        scope = memory.access(args.scope, args.visibility).scope
        workers = Workers(memory, args.workers)
        session = Session(memory, scope, log=open_write_log(memory, scope), workers=workers)  # every write, by whom
        registry = open_registry(memory)
        try:
            members = len(registry.members())
            with _listen(args.host, args.port) as listener:
                host, port = args.host, listener.getsockname()[1]
                given = given_token(args.settings.serve_token)  # only spaces: none, as when unset
                token = None
                if args.token or not is_loopback(host):
                    # with members, their tokens are the way in: the server makes none of its own
                    token = given or (None if members else secrets.token_urlsafe(32))
                app = create_app(session, host=host, port=port, token=token, registry=registry, limits=limits)
                shown = token is not None and given is None
                url = _announce(session.scope, host, port, token, shown=shown, members=members)
                if args.open:
                    _open_browser(url)
                # The calls in flight get GRACE seconds after the signal (``stopping.py``); the
                # connections a few more to send their answers.
                config = uvicorn.Config(
                    app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=GRACE + 5
                )
                Server(config, app.state.calls).run(sockets=[listener])
        finally:
            registry.close()
            session.close()
            workers.close()
    return 0


def _limits(max_body: int, per_token: int | None, workers: int) -> Limits:
    """The limits the flags ask for, refused before anything is opened if they make no sense. By
    default a caller may hold half the worker threads: the other half is always free for others."""
    from ..errors import user_error
    from ..web.limits import Limits

    if max_body < 1024:
        raise user_error(f"--max-body must be at least 1024 bytes (got {max_body})", "e.g. --max-body 1048576 (1 MiB)")
    if per_token is None:
        per_token = max(1, workers // 2)
    if per_token < 1:
        raise user_error(f"--per-token must be at least 1 (got {per_token})", "e.g. --per-token 2")
    return Limits(max_body=max_body, per_token=per_token)


def _announce(scope: Scope, host: str, port: int, token: str | None, *, shown: bool, members: int) -> str:
    """Where it serves, on stderr: the token only once, in the URL to open, and only if it was
    made here (a token given in the environment, or a member's, is never printed). Returns the
    URL to open."""
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    opened = f"{url}?token={token}" if shown else url
    needs = "  (Authorization: Bearer <token>)" if token or members else ""
    who = (
        f"{members} member{'s' if members != 1 else ''} (eidetic tokens list) sign{'s' if members == 1 else ''} in "
        "with their own tokens: "
        f"agents as above, people at {url}?token=TOKEN once\n"
        if members
        else ""
    )
    sys.stderr.write(
        f"eidetic serves {scope.name}/{scope.visibility} at {opened}\n"
        f"MCP (streamable HTTP): {url}mcp{needs}\n{who}"
        "Ctrl-C (or SIGTERM) stops it once the calls in flight have answered.\n"
    )
    sys.stderr.flush()
    return opened


def _open_browser(url: str) -> None:
    """``url`` in the person's browser (``webbrowser``: ``BROWSER``, else the desktop's), on a
    thread of its own: a browser named in ``BROWSER`` may not return until it is closed. The
    socket already listens, so the first request waits for the server rather than failing."""
    import webbrowser

    def opened() -> None:
        if not webbrowser.open(url, new=2):
            sys.stderr.write(f"no web browser found to open; open {url} yourself\n")
            sys.stderr.flush()

    threading.Thread(target=opened, name="open-browser", daemon=True).start()


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything is printed: the URL names the real port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        from ..errors import env_error

        listener.close()
        if exc.errno == errno.EADDRINUSE:
            where = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
            raise env_error(
                f"port {port} on {host} is taken: another program listens there "
                f"(perhaps an eidetic serve already running: open {where})",
                f"stop that program, or choose another port: --port {port + 1} (--port 0 picks a free one)",
            ) from None
        raise env_error(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "choose another --port (0 picks a free one) or --host",
        ) from None
    listener.listen(128)
    listener.set_inheritable(True)
    return listener
