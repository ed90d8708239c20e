"""``eidetic config``: every effective setting, and where each value came from."""

from __future__ import annotations

import argparse

from .output import emit_json, emit_text


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "config",
        help="show every setting, its value and where it came from",
        description=(
            "Settings come from, later winning: defaults, your config file, the repository's "
            "config file (.eidetic/config.toml), EIDETIC_* variables, then flags. "
            "See docs/configuration.md for the keys."
        ),
    )
    parser.add_argument("--scope", help="as a command given --scope would see it")
    parser.add_argument("--visibility", choices=("public", "private"), help="as with --visibility")
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    user, repo = args.settings.config_files["user"], args.settings.config_files["repository"]
    files = {
        "user": {"path": str(user), "exists": user.is_file()},
        "repository": {"path": str(repo) if repo else None, "exists": bool(repo and repo.is_file())},
    }
    rows = args.settings.describe()
    if args.json:
        emit_json({"files": files, "settings": rows})
        return 0
    lines = [
        f"your config file:  {user}" + ("" if user.is_file() else " (none)"),
        "repository config: "
        + (f"{repo}" + ("" if repo.is_file() else " (none)") if repo else "(not in a repository)"),
        "",
    ]
    width = max(len(row["key"]) for row in rows)
    shown = [(row["key"], str(row["default"] or row["value"]), row["origin"]) for row in rows]
    value_width = min(max(len(value) for _, value, _ in shown), 48)
    lines.append(f"{'setting':<{width}}  {'value':<{value_width}}  from")
    for key, value, origin in shown:
        lines.append(f"{key:<{width}}  {(value or '-'):<{value_width}}  {origin}")
    emit_text("\n".join(lines))
    return 0
