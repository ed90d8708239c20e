"""``eidetic tokens``: the members of a shared ``eidetic serve`` and their tokens (add, list,
revoke). The store flags pick the registry, as every verb picks its store: a postgres store's
database, else the state folder (``team.tokens.open_registry``)."""

from __future__ import annotations

import argparse
import sys

from .output import emit_json, emit_text
from .stores import open_memory

DESCRIPTION = (
    "Members' tokens for `eidetic serve`. Once a token exists, the server asks every request for one, "
    "and each token is its member's identity: their session scope (--scope, --visibility), their name "
    "on what they write, and whether they may write. A token is printed once, by `tokens add`; only its "
    "SHA-256 is kept. `tokens revoke` counts on the server's next request."
)


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "tokens", help="members' tokens for eidetic serve: add, list, revoke", description=DESCRIPTION
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    add = actions.add_parser(
        "add",
        help="a new member's token, printed once on stdout",
        description="Make NAME a member and print their new token once on stdout (only the token, so "
        "TOKEN=$(eidetic tokens add alice --scope alice --visibility private) keeps it).",
    )
    add.add_argument("name", metavar="NAME", help="the member's name: letters, digits, '-', '_' or '.'")
    add.add_argument("--scope", required=True, help="the scope the member's session serves (and writes into)")
    add.add_argument(
        "--visibility",
        choices=("public", "private"),
        default="public",
        help="public (default): public records only; private: also the scope's own private records",
    )
    add.add_argument("--read-only", action="store_true", help="the member may read but never write")
    add.set_defaults(run=run_add)
    listed = actions.add_parser("list", help="the members: names, scopes, created, last used (never tokens)")
    listed.add_argument("--revoked", action="store_true", help="revoked members too")
    listed.set_defaults(run=run_list)
    revoke = actions.add_parser("revoke", help="end a member's token (on the server's next request)")
    revoke.add_argument("name", metavar="NAME", help="the member whose token ends")
    revoke.set_defaults(run=run_revoke)
    for action in (add, listed, revoke):
        add_common(action)


def _registry(args: argparse.Namespace):  # noqa: ANN202 (team.tokens.Registry, imported lazily)
    from ..team.tokens import open_registry

    with open_memory(args, progress=False) as memory:
        return open_registry(memory)


def run_add(args: argparse.Namespace) -> int:
    from ..records import check_scope
    from ..team.tokens import check_name

    name, scope = check_name(args.name), check_scope(args.scope, args.visibility)
    registry = _registry(args)
    try:
        token = registry.add(name, scope, read_only=args.read_only)
    finally:
        registry.close()
    if args.json:  # the token once, inside the one JSON answer
        emit_json({"name": name, "token": token, "scope": scope.to_dict(), "read_only": args.read_only})
        return 0
    sys.stdout.write(token + "\n")
    sys.stdout.flush()
    rights = "read-only" if args.read_only else "read and write"
    sys.stderr.write(
        f"{name}'s token ({scope.name}/{scope.visibility}, {rights}; kept in {registry.where}) is shown once, "
        "above: agents send it as 'Authorization: Bearer TOKEN' to /mcp, people open the server's URL "
        "with ?token=TOKEN once\n"
    )
    return 0


def run_list(args: argparse.Namespace) -> int:
    registry = _registry(args)
    try:
        members = registry.members(revoked=args.revoked)
    finally:
        registry.close()
    if args.json:
        emit_json({"members": [member.to_dict() for member in members], "registry": registry.where})
        return 0
    if not members:
        emit_text(f"no members in {registry.where} (eidetic tokens add NAME --scope SCOPE makes one)")
        return 0
    rows = [
        [
            m.name,
            f"{m.scope}/{m.visibility}",
            "read-only" if m.read_only else "read-write",
            m.created,
            m.last_seen or "never",
        ]
        for m in members
    ]
    emit_text(_aligned([["name", "scope", "rights", "created", "last used"], *rows]))
    return 0


def _aligned(rows: list[list[str]]) -> str:
    """Rows in columns two spaces apart (names and scopes are short: nothing to wrap)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def run_revoke(args: argparse.Namespace) -> int:
    registry = _registry(args)
    try:
        registry.revoke(args.name)
    finally:
        registry.close()
    if args.json:
        emit_json({"revoked": args.name})
    else:
        sys.stderr.write(f"revoked {args.name}'s token: the server refuses it from its next request\n")
    return 0
