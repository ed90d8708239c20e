"""``eidetic skills install [DIR]``: the ``recall`` and ``remember`` agent skills (SKILL.md plus
a wrapper script each, shipped in ``eidetic/skills``) copied into ``DIR/.claude/skills``.

A skill file someone changed is never overwritten without ``--force``: a team may have adapted
its copy, and losing that silently would be worse than a refusal that names the files.
"""

from __future__ import annotations

import argparse
import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ..errors import user_error
from .output import emit_json, emit_text

SKILLS = ("recall", "remember")


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "skills",
        help="agent skills (recall, remember) for coding agents",
        description="The recall and remember skills: a SKILL.md each and a wrapper "
        "script that finds the CLI and defaults to the agent's private scope.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    install = actions.add_parser(
        "install",
        help="copy the skills into DIR/.claude/skills",
        description="Copy the skills into DIR/.claude/skills (DIR: the repository "
        "root of the current directory, else the current directory). "
        "Changed files are left alone unless --force.",
    )
    install.add_argument("dir", nargs="?", metavar="DIR", help="where .claude/skills goes")
    install.add_argument("--force", action="store_true", help="overwrite skill files that differ")
    install.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    install.set_defaults(run=run_install)


def _files() -> list[tuple[str, Traversable]]:
    """Every shipped skill file, as (path under .claude/skills, resource)."""
    root = resources.files("eidetic") / "skills"
    found: list[tuple[str, Traversable]] = []

    def walk(node: Traversable, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name.startswith((".", "__")):
                continue
            if child.is_dir():
                walk(child, f"{rel}{child.name}/")
            else:
                found.append((f"{rel}{child.name}", child))

    for skill in SKILLS:
        walk(root / skill, f"{skill}/")
    return found


def run_install(args: argparse.Namespace) -> int:
    from ..locations import repo_root

    base = Path(args.dir).expanduser() if args.dir else (repo_root() or Path.cwd())
    if not base.is_dir():
        raise user_error(f"not a folder: {base}", "name an existing folder, e.g. your repository root")
    target = base.absolute() / ".claude" / "skills"
    plan = [(rel, target / rel, resource.read_bytes()) for rel, resource in _files()]
    changed = [rel for rel, path, data in plan if path.is_file() and path.read_bytes() != data]
    if changed and not args.force:
        raise user_error(
            f"{len(changed)} skill file(s) in {target} differ from this eidetic's: " + ", ".join(changed),
            "keep your changes, or pass --force to replace them",
        )
    written, unchanged = [], []
    for rel, path, data in plan:
        executable = rel.endswith(".sh")
        if path.is_file() and path.read_bytes() == data:
            unchanged.append(rel)
        else:
            _write(path, data)
            written.append(rel)
        if executable:
            path.chmod(path.stat().st_mode | 0o111)
    report = {"target": str(target), "skills": list(SKILLS), "written": written, "unchanged": unchanged}
    if args.json:
        emit_json(report)
    else:
        lines = [
            f"Installed skills {', '.join(SKILLS)} in {target}: {len(written)} file(s) written, "
            + f"{len(unchanged)} unchanged."
        ]
        lines += [f"  wrote {rel}" for rel in written]
        emit_text("\n".join(lines))
    return 0


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all: a temp file beside it, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(data)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
