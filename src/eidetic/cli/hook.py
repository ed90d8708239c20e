"""``eidetic hook claude session-start|prompt|session-end``: the command Claude Code runs for each
hook event, as earlier installs wrote it (``eidetic hooks install claude`` now writes the lean
``eidetic-hook claude EVENT``, the same client). It reads the event's JSON on stdin, prints the
context to add, and always exits 0; ``cli.main`` runs it before loading anything else
(``hooks.client``), so it starts in milliseconds."""

from __future__ import annotations

import argparse

EVENTS = ("session-start", "prompt", "session-end")


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "hook",
        help="the command an agent's hook runs: reads its JSON on stdin, prints context",
        description="Answer one hook event of an agent (Claude Code's JSON on stdin; its output on stdout). "
        "Always exits 0: a failure or a timeout (EIDETIC_HOOK_TIMEOUT) adds nothing and is logged. "
        "Installed by 'eidetic hooks install claude'; see docs/hooks.md.",
    )
    parser.add_argument("agent", choices=("claude",), help="the agent whose hook this is")
    parser.add_argument("event", choices=EVENTS, help="session-start, prompt or session-end")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..hooks.client import run as answer

    return answer(args.agent, args.event)
