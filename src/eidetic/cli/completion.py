"""``eidetic completion bash|zsh|fish``: a tab-completion script, generated from the parser itself
(by shtab), so every verb, flag and choice is in it and it cannot fall behind the CLI.

Some options check their values themselves, for clearer errors than argparse's (``--backend
mongo`` says mongo is not provided); the script still offers their values (``_values``), and
folders or files where an option names one.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from .output import emit_text

SHELLS = ("bash", "zsh", "fish")
COMMANDS = ("eidetic", "memory-recall")
# an option's first flag, or a positional argument's name -> what it completes to
DIRECTORIES = {"--memory-dir", "--from-dir", "--to-dir", "--repo-root", "--project-root", "dir"}
FILES = {"--db", "--from-db", "--to-db", "source"}


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "completion",
        help="print a tab-completion script for bash, zsh or fish",
        description="Print a completion script for every verb, flag and choice. Install: "
        "bash: eidetic completion bash > ~/.local/share/bash-completion/completions/eidetic; "
        "zsh: eidetic completion zsh > ~/.zfunc/_eidetic (with fpath=(~/.zfunc $fpath) before compinit); "
        "fish: eidetic completion fish > ~/.config/fish/completions/eidetic.fish",
    )
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.add_argument(
        "--command", choices=COMMANDS, default="eidetic", help="the command to complete (default: eidetic)"
    )
    parser.set_defaults(run=run, memory_dir=None, backend=None)


def run(args: argparse.Namespace) -> int:
    import shtab  # imported here: only this verb needs it, and `eidetic --help` must stay fast

    if args.command == "eidetic":
        from .main import build_parser

        parser = build_parser()
    else:
        from .memory_recall import build_parser as build_memory_recall

        parser = build_memory_recall()
    values = _values()
    for action in _actions(parser):
        name = action.option_strings[0] if action.option_strings else action.dest
        if action.choices is None and name in values:
            action.choices = values[name]
        elif name in DIRECTORIES:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif name in FILES:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
    emit_text(shtab.complete(parser, args.shell))
    return 0


def _values() -> dict[str, tuple[str, ...]]:
    """The values of options that check them themselves."""
    from ..records import VISIBILITIES
    from ..stores.backends import NAMES

    return {"--backend": NAMES, "--from": NAMES, "--to": NAMES, "--visibility": VISIBILITIES}


def _actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every argument of ``parser`` and of its verbs, at any depth (``skills install``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _actions(child)
        else:
            yield action
