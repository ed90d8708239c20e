"""``eidetic edit ID``: a record in your editor, saved through the normal write path.

The record is copied to a private temporary markdown file (the files backend's own format, on
every backend) and ``$VISUAL``/``$EDITOR`` (else ``vi``) opens that copy, not the record's file:
an editor may stay open for an hour, and the store must neither be locked that long nor hold a
half-saved file meanwhile. On save the copy is checked as ``remember`` checks input and written
atomically under the store lock, only if nobody changed the record in the meantime. A refused
edit is never lost: on a terminal you may edit it again, otherwise (or if you decline) the copy
is kept and the error names it; ``--from FILE`` picks it up again.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import EideticError, env_error, user_error
from .output import emit_json, emit_text, report_error, warn
from .stores import open_memory


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "edit",
        help="edit a record in $VISUAL/$EDITOR; checked like remember before it is saved",
        description="Open a record in your editor ($VISUAL, else $EDITOR, else vi) as a markdown file with "
        "front matter. Saving checks it as remember checks input; an unchanged file changes nothing. The id "
        "and the lifecycle cannot be changed by editing (use remember and forget/restore).",
    )
    parser.add_argument("id", help="the record id")
    parser.add_argument("--scope", help="your scope name (to reach a private record)")
    parser.add_argument("--visibility", help="public (default) or private")
    parser.add_argument("--from", dest="source", metavar="FILE", help="start from this file (a refused edit kept)")
    parser.add_argument("--no-embed", action="store_true", help="do not compute the new text's vector now")
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="save a public record even when it holds what looks like a credential (refused by default)",
    )
    add_common(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shlex

    from ..memory.editing import edit_text

    with open_memory(args) as memory:
        original = memory.get(args.id, scope=args.scope, visibility=args.visibility)
        baseline = edit_text(original)
        start = _read(Path(args.source)) if args.source else baseline
        path = _copy(start)
        while True:
            status = _edit(args.settings.editor, path)
            edited = _read(path)
            if status != 0:
                if edited == start:
                    path.unlink(missing_ok=True)
                kept = f" (your edit is kept in {path})" if edited != start else ""
                raise user_error(f"the editor exited with status {status}; nothing was saved{kept}", "quit it normally")
            if edited == baseline:
                path.unlink(missing_ok=True)
                return _report(args, original.id, False)
            try:
                result = memory.save_edit(
                    original,
                    edited,
                    scope=args.scope,
                    visibility=args.visibility,
                    embed=not args.no_embed,
                    allow_secrets=args.allow_secrets,
                )
            except EideticError as exc:
                if _again(args, exc):
                    continue
                exc.message += f"; your edit is kept in {path}"
                exc.remediation = f"{exc.remediation}; then: eidetic edit {shlex.quote(args.id)} --from {path}"
                raise
            path.unlink(missing_ok=True)
            for message in result.warnings:
                warn(message, args.json)
            return _report(args, original.id, bool(result.written))


def _copy(text: str) -> Path:
    """A private temporary file (mode 0600: the record may be private) holding ``text``."""
    import tempfile

    handle, name = tempfile.mkstemp(prefix="eidetic-edit-", suffix=".md")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
        out.write(text)
    return Path(name)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise user_error(f"{path} is not UTF-8 text", "save the file as UTF-8") from None


def _edit(editor: str, path: Path) -> int:
    """Run the editor on ``path`` on this terminal; its exit status."""
    import shlex
    import subprocess

    try:
        command = [*shlex.split(editor), str(path)]
    except ValueError as exc:
        raise user_error(f"cannot read the editor command {editor!r}: {exc}", "set VISUAL or EDITOR") from None
    try:
        return subprocess.call(command)
    except OSError as exc:
        raise env_error(
            f"cannot run the editor {command[0]!r}: {exc.strerror or exc}", "set VISUAL or EDITOR to an editor"
        ) from None


def _again(args: argparse.Namespace, error: EideticError) -> bool:
    """On a terminal, offer to fix a refused edit; anything but yes declines."""
    if args.json or sys.stdin is None or not sys.stdin.isatty():
        return False
    report_error(error, False)
    sys.stderr.write("Edit again? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _report(args: argparse.Namespace, rid: str, saved: bool) -> int:
    if args.json:
        emit_json({"id": rid, "saved": saved})
    else:
        emit_text(f"Saved {rid}." if saved else f"No changes to {rid}.")
    return 0
