"""``eidetic context``: the memories a hook would put into an agent's context, as a plain command
for any agent with shell hooks (Codex, Cursor, Aider, ...): ``--prompt TEXT`` or ``--start``,
markdown (default) or JSON, within a token budget, never the same record twice in a ``--session``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import user_error
from .output import emit_json, emit_text, warn
from .stores import open_memory

if TYPE_CHECKING:
    from ..hooks.select import ContextResult


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "context",
        help="memories for an agent's context: on a prompt, or at a session's start",
        description="Print the memories relevant to a prompt (hybrid recall, relevance floor on: "
        "nothing when nothing is relevant), or the most useful ones for a session's start, framed as "
        "quoted records within a token budget. With --session, records that session was given "
        "already are left out. See docs/hooks.md.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--prompt", metavar="TEXT", help="the user's prompt ('-': read it from stdin)")
    what.add_argument("--start", action="store_true", help="a session's start: the most useful memories")
    parser.add_argument("--session", metavar="ID", help="the agent's session id: each record at most once per session")
    parser.add_argument(
        "--budget", type=int, metavar="TOKENS", help="at most this many tokens (default: the settings')"
    )
    parser.add_argument("--type", action="append", dest="types", metavar="TYPE", help="--start: these record types")
    parser.add_argument("--mode", choices=("hybrid", "keyword"), default="hybrid", help="--prompt: how to recall")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown", help="output (default markdown)")
    parser.add_argument("--scope", help="the session's scope name (default: your configured scope)")
    parser.add_argument("--visibility", help="public or private: private also sees that scope's private records")
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..hooks.payloads import Hook
    from ..hooks.respond import context_for

    if args.budget is not None and args.budget < 0:
        raise user_error(f"--budget must be a number of tokens >= 0 (got {args.budget})", "e.g. --budget 300")
    if args.session is not None and (not args.session or len(args.session) > 256 or not args.session.isprintable()):
        raise user_error("--session must be 1 to 256 printable characters", "pass the agent's session id as it is")
    prompt = sys.stdin.read() if args.prompt == "-" else (args.prompt or "")
    event = "session-start" if args.start else "prompt"
    hook = Hook(args.session or "", Path.cwd(), prompt=prompt)
    with open_memory(args, progress=False) as memory:
        result = context_for(
            memory,
            args.settings,
            event,
            hook,
            args.mode,
            budget=args.budget,
            types=args.types,
            scope=args.scope,
            visibility=args.visibility,
        )
    for message in result.warnings:
        warn(message, args.json)
    if args.json or args.format == "json":
        emit_json(result.to_dict())
    elif result.context:
        emit_text(result.context)
    elif sys.stdout.isatty():  # a person reads it; a hook's pipe gets nothing at all
        emit_text(nothing_given(result, prompt))
    return 0


def nothing_given(result: ContextResult, prompt: str) -> str:
    """Why the context is empty, in words: nothing relevant, given already, or out of budget."""
    from .render import clip, one_line

    if not result.budget:
        return "(nothing: no tokens left in the budget)"
    if result.event == "start":
        return "(nothing for a session's start: no active record of those types, or all given already)"
    about = f"“{clip(one_line(prompt), 60)}”"
    if result.below_floor:
        hits = f"{result.below_floor} hit{'s' if result.below_floor != 1 else ''}"
        return f"(nothing relevant to {about}: {hits} fell below the relevance floor)"
    seen, over = result.skipped["seen"], result.skipped["budget"]
    if seen or over:
        return f"(nothing new for {about}: {seen} given to this session already, {over} over the budget)"
    return f"(nothing stored matches {about})"
