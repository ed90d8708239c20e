"""The ``eidetic`` command: argument parsing and dispatch, nothing else.

Each verb lives in its own module with ``add_parser(subparsers)`` and ``run(args) -> int``.
Heavy modules are imported inside ``run`` so ``eidetic --help`` and keyword recall start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .. import __version__
from ..errors import EideticError, close_matches, did_you_mean, env_error, user_error
from ..stores.backends import BACKENDS, LOCATED, NAMES
from .output import report_error, warn
from .stores import check_memory_dirs

if TYPE_CHECKING:
    from ..settings import Settings

# The verbs, in the order ``eidetic --help`` lists them: modules of this package, each with
# ``add_parser`` and ``run``. Imported when the parser is built, so ``eidetic hook`` (below) runs
# without loading any of them.
VERBS = (
    "remember",
    "recall",
    "list_show",
    "edit",
    "sweep_forget_restore",
    "consolidate",
    "overview_doctor",
    "import_export",
    "audit",
    "index",
    "watch",
    "migrate",
    "config",
    "explain",
    "demo",
    "mcp",
    "serve",
    "tokens",
    "log",
    "skills",
    "context",
    "hooks",
    "hook",
    "capture",
    "completion",
)
# The modules that register verbs other than their own name; a command builds only the parser
# of the module its verb is in (``eidetic recall`` need not import every other verb's module).
MORE_VERBS = {
    "list_show": ("list", "show"),
    "sweep_forget_restore": ("sweep", "forget", "restore"),
    "overview_doctor": ("overview", "doctor"),
    "import_export": ("import", "export"),
}
HOOK_EVENTS = ("session-start", "prompt", "session-end")  # as cli.hook.EVENTS, without importing it
VERB_NAMES = tuple(verb for name in VERBS for verb in MORE_VERBS.get(name, (name,)))
# Verbs people bring from other tools (grep, basic-memory, a shell, a notes app), and ours that do it.
FOREIGN_VERBS = {
    "search": "recall",
    "find": "recall",
    "query": "recall",
    "grep": "recall",
    "ls": "list",
    "add": "remember",
    "save": "remember",
    "write": "remember",
    "rm": "forget",
    "delete": "forget",
    "remove": "forget",
    "cat": "show",
    "get": "show",
    "view": "show",
    "read": "show",
    "help": "explain",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error becomes an EideticError (exit 1, JSON when --json)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise user_error(message, f"run '{self.prog} --help' to see valid arguments")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """As argparse's, but a misspelt flag is named with the flag it is closest to."""
        argv = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(argv, namespace)
        if extras:
            raise self.unrecognized(extras, argv)
        return parsed

    def _check_value(self, action: argparse.Action, value: object) -> None:
        """A value not among an option's choices is named with the choices it is closest to."""
        choices = action.choices
        if choices is None or value in choices:
            return
        near = did_you_mean(str(value), map(str, choices))
        known = ", ".join(map(str, choices))
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r} ({near + ' ' if near else ''}choose from {known})"
        )

    def unrecognized(self, extras: list[str], argv: list[str]) -> EideticError:
        """Arguments this verb does not take: a misspelt flag (``--topk``) is named with the flag
        it is closest to, and the command rewritten with it."""
        import shlex

        flags = [flag for action in self._actions for flag in action.option_strings if flag.startswith("--")]
        fixes = {
            extra: near[0]
            for extra in extras
            if extra.startswith("--") and (near := close_matches(extra.split("=")[0], flags, n=1))
        }
        fixed = [fixes[word] + word[len(word.split("=")[0]) :] if word in fixes else word for word in argv]
        command = self.prog.split()[0]  # eidetic, or memory-recall
        lead = f"did you mean {' and '.join(fixes.values())}? run: {shlex.join([command, *fixed])}; " if fixes else ""
        return user_error(
            f"unrecognized arguments: {' '.join(extras)}", f"{lead}run '{self.prog} --help' to see valid arguments"
        )


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    parser.add_argument(
        "--memory-dir",
        action="append",
        metavar="DIR",
        help="use this store folder (repeatable); default: repo and home stores",
    )
    parser.add_argument(
        "--backend",
        help=f"storage backend: {NAMES[0]} (default; EIDETIC_BACKEND), {', '.join(NAMES[1:-1])} or {NAMES[-1]}",
    )
    for row in LOCATED.values():  # files: --memory-dir above
        parser.add_argument(row.flag, metavar=row.metavar, help=row.help)
    parser.add_argument("--user", help="neo4j backend: the user (default: EIDETIC_NEO4J_USER, else neo4j)")
    parser.add_argument(
        "--password",
        help="neo4j backend: the password (default: EIDETIC_NEO4J_PASSWORD, which other users cannot see in ps)",
    )


def module_of(verb: str) -> str | None:
    """The module of this package that registers ``verb``, or None for no verb."""
    return next((name for name in VERBS if verb in MORE_VERBS.get(name, (name,))), None)


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with ``verb``, only the parsers of its module (what running
    that verb needs); without, every verb's (help, completion, a verb that is not one)."""
    parser = _Parser(prog="eidetic", description="A memory store for AI agents and their teams.")
    parser.add_argument("--version", action="version", version=f"eidetic {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    module = module_of(verb) if verb else None
    for name in VERBS if module is None else (module,):
        import_module(f".{name}", __package__).add_parser(sub, add_common)
    return parser


def verbs(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """Every verb's parser and its one-line help, in the order ``eidetic --help`` lists them."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: (action.choices[choice.dest], choice.help or "") for choice in action._choices_actions}


def unknown_verb(argv: list[str]) -> EideticError:
    """A first argument that is no verb: ours for a verb of another tool (``search``), else the
    verbs it is closest to (``recal``), with the command rewritten when there is one answer."""
    import shlex

    word = argv[0]
    ours = FOREIGN_VERBS.get(word.lower())
    if ours:
        undo = " (it archives: 'eidetic restore' undoes it; --purge deletes)" if ours == "forget" else ""
        return user_error(
            f"eidetic has no verb {word!r}; its verb for that is {ours!r}{undo}",
            f"run: {shlex.join(['eidetic', ours, *argv[1:]])}",
        )
    near = close_matches(word, VERB_NAMES)
    if len(near) == 1:
        return user_error(
            f"unknown verb {word!r}",
            f"did you mean {near[0]!r}? run: {shlex.join(['eidetic', near[0], *argv[1:]])} ('eidetic --help' lists every verb)",
        )
    lead = f"did you mean {' or '.join(map(repr, near))}? " if near else ""
    return user_error(f"unknown verb {word!r}", f"{lead}'eidetic --help' lists every verb")


def check_backend(name: str) -> None:
    from ..errors import unknown_backend

    if name not in NAMES:
        raise unknown_backend(name, NAMES)


# flag (argparse dest) -> (setting, how a user spells the flag); a store's place as the table says
FLAG_SETTINGS = {
    "backend": ("backend", "--backend"),
    **{row.option: (row.setting, row.flag) for row in BACKENDS.values() if row.setting is not None},
    "user": ("neo4j_user", "--user"),
    "password": ("neo4j_password", "--password"),
    "scope": ("scope", "--scope"),
    "visibility": ("visibility", "--visibility"),
    "mode": ("mode", "--mode"),
    "top_k": ("top_k", "--top-k"),
}


def configure(args: argparse.Namespace) -> Settings:
    """The command's settings (config files, environment, then its flags); flags left out take
    the settings' values, so every verb sees one answer. Config warnings go to stderr."""
    from ..settings import Settings

    settings = Settings.load()
    args.reads_as = (settings.scope, settings.visibility)  # what a command without scope flags reads as
    for dest, (name, flag) in FLAG_SETTINGS.items():
        value = getattr(args, dest, None)
        if value is not None:
            settings = settings.with_values(flag, **{name: Path(value).expanduser() if dest == "db" else value})
    for dest in ("scope", "visibility"):
        if hasattr(args, dest) and getattr(args, dest) is None:
            setattr(args, dest, getattr(settings, dest))
    for message in settings.warnings:
        warn(message, getattr(args, "json", False))
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    wants_json = any(a == "--json" or a.startswith("--json=") or a == "--format=json" for a in args_list) or any(
        a == "--format" and b == "json" for a, b in zip(args_list, args_list[1:])
    )
    if len(args_list) == 3 and args_list[0] == "hook" and args_list[1] == "claude" and args_list[2] in HOOK_EVENTS:
        from ..hooks.client import run  # an earlier install's hook command (now eidetic-hook): nothing else is loaded

        return run(args_list[1], args_list[2])
    try:
        if args_list and not args_list[0].startswith("-") and module_of(args_list[0]) is None:
            raise unknown_verb(args_list)
        parser = build_parser(args_list[0] if args_list else None)
        if not args_list:
            parser.print_help()
            return 0
        args, extras = parser.parse_known_args(args_list)
        if extras:
            chosen = verbs(parser)[args.verb][0] if getattr(args, "verb", None) else parser
            raise cast(_Parser, chosen).unrecognized(extras, args_list)
        if not getattr(args, "verb", None):
            parser.print_help()
            return 0
        if getattr(args, "format", None) == "json":  # the same as --json, for every message too
            args.json = True
        args.settings = configure(args)
        check_backend(args.settings.backend)
        check_memory_dirs(args)
        return int(args.run(args) or 0)
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    except EideticError as exc:
        return report_error(exc, wants_json)
    except BrokenPipeError:  # the reader went away (`| head`): not an error (before OSError: a subclass)
        _quiet_stdout()
        return 0
    except OSError as exc:
        return report_error(
            env_error(
                f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "),
                "check the path, free disk space and permissions",
            ),
            wants_json,
        )
    except KeyboardInterrupt:
        return 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
