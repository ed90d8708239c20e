"""``eidetic hooks install|uninstall|status claude``: eidetic's hooks in Claude Code's settings,
and the warm daemon the hook commands use (``hooks daemon``, ``hooks stop``). docs/hooks.md."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from .output import emit_json, emit_text

WHERE = ("project", "local", "user")


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser(
        "hooks",
        help="install memory hooks into Claude Code; status; the warm daemon",
        description="Add eidetic's hooks to Claude Code's settings (memories at a session's start and on "
        "each prompt; capture at its end when enabled), remove exactly them, or show them. See docs/hooks.md.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(parser))
    for name, text in (
        ("install", "add the hooks to a settings file (others' entries and every other byte kept)"),
        ("uninstall", "remove exactly eidetic's hooks from a settings file"),
        ("status", "which settings files run eidetic's hooks; the daemon; the settings"),
    ):
        action = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        action.add_argument("agent", choices=("claude",), help="the agent (claude: Claude Code)")
        place = action.add_mutually_exclusive_group()
        place.add_argument(
            "--project",
            dest="where",
            action="store_const",
            const="project",
            help="the repository's .claude/settings.json, shared with the team (default)",
        )
        place.add_argument(
            "--local",
            dest="where",
            action="store_const",
            const="local",
            help="the repository's .claude/settings.local.json, yours alone",
        )
        place.add_argument(
            "--user",
            dest="where",
            action="store_const",
            const="user",
            help="~/.claude/settings.json, for every project",
        )
        place.add_argument("--file", metavar="PATH", help="this settings file")
        action.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        action.set_defaults(run={"install": run_install, "uninstall": run_uninstall, "status": run_status}[name])
    daemon = actions.add_parser("daemon", help="run the hook daemon in the foreground (hook commands start it)")
    daemon.add_argument("--warm", metavar="DIR", help="load this folder's store before listening")
    daemon.set_defaults(run=run_daemon)
    stop = actions.add_parser("stop", help="stop this environment's hook daemon")
    stop.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    stop.set_defaults(run=run_stop)


def settings_file(args: argparse.Namespace, where: str | None = None) -> Path:
    from ..locations import repo_root

    if getattr(args, "file", None) and where is None:
        return Path(args.file).expanduser().absolute()
    where = where or args.where or "project"
    if where == "user":
        return Path.home() / ".claude" / "settings.json"
    base = repo_root() or Path.cwd()
    return base / ".claude" / ("settings.json" if where == "project" else "settings.local.json")


def _command_for(path: Path) -> str:
    """The hook command to write into ``path``; an error when ``path`` is shared with the team and
    ``eidetic-hook`` is not on PATH (a path of this machine would run on no teammate's)."""
    from ..errors import user_error
    from ..hooks import commands

    command = commands.choose(commands.shared(path))
    if command is None:
        script = commands.beside()
        link = f"ln -sf {shlex.quote(str(script))} ~/.local/bin/" if script else "install eidetic as README.md says"
        raise user_error(
            f"eidetic-hook is not on PATH here, and {path} is shared with the team: a path of this machine "
            "would run on no teammate's, and their hook would silently do nothing",
            f"put it on PATH ({link}, as README.md's Install does), or keep the hooks to yourself: "
            "eidetic hooks install claude --local; nothing was written",
        )
    return command


def run_install(args: argparse.Namespace) -> int:
    from ..hooks import claude_settings as cs

    path = settings_file(args)
    before = cs.read(path)
    after = cs.with_hooks(before, _command_for(path))
    added = sorted(set(cs.installed(after)) - set(cs.installed(before)))
    if after != before:
        made = cs.write(path, after)
        cs.remember_install(args.settings.state_dir, path, before, after, made)
    report = {"path": str(path), "added": added, "updated": cs.updated(before, after), "installed": cs.installed(after)}
    if args.json:
        emit_json(report)
    else:
        what = ", ".join(added) if added else "nothing (already installed)"
        lean = f"; {', '.join(report['updated'])} now run eidetic-hook" if report["updated"] else ""
        emit_text(
            f"{path}: added {what}{lean}.\n"
            "Check with 'eidetic hooks status claude'; undo with 'eidetic hooks uninstall claude'."
        )
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from ..hooks import claude_settings as cs

    path = settings_file(args)
    now = cs.read(path)
    if now is None or not cs.installed(now):
        report = {"path": str(path), "removed": []}
    else:
        exact, earlier, made = cs.restored(args.settings.state_dir, path, now)
        if exact and earlier is None:
            path.unlink()
            cs.remove_made(path, made)
        else:
            cs.write(path, earlier if exact and earlier is not None else cs.without_hooks(now))
        report = {"path": str(path), "removed": sorted(cs.installed(now))}
    if args.json:
        emit_json(report)
    else:
        gone = ", ".join(report["removed"]) or "nothing (eidetic's hooks were not there)"
        emit_text(f"{path}: removed {gone}.")
    return 0


def run_status(args: argparse.Namespace) -> int:
    from ..hooks import claude_settings as cs
    from ..hooks import commands, runtime
    from ..hooks.client import ask

    files = [settings_file(args, where) for where in WHERE] if not args.file else [settings_file(args)]
    report: dict = {"files": []}
    for path in files:
        problems: list[str] = []
        try:
            commands_found = cs.installed(cs.read(path))
        except Exception as exc:  # noqa: BLE001 - status reports a broken file, it does not stop at it
            found: dict | str = getattr(exc, "message", str(exc))
        else:
            found, problems = commands_found, _problems(commands_found, commands.shared(path))
        report["files"].append({"path": str(path), "exists": path.exists(), "hooks": found, "problems": problems})
    where = runtime.paths()
    status = ask(where, {"control": "status"}, _soon()) if where else None
    report["daemon"] = {
        "socket": str(where.socket) if where else None,
        "log": str(where.log) if where else None,
        "running": status is not None,
        **({"pid": status.get("pid")} if status else {}),
    }
    s = args.settings
    report["settings"] = {
        "context-start-tokens": s.context_start_tokens,
        "context-prompt-tokens": s.context_prompt_tokens,
        "context-session-tokens": s.context_session_tokens,
        "capture": s.capture,
        "hook-timeout": s.hook_timeout,
    }
    if args.json:
        emit_json(report)
    else:
        emit_text(_status_text(report))
    return 0


def _problems(found: dict[str, list[str]], shared: bool) -> list[str]:
    """What keeps the hook commands of one settings file from running here, or on a teammate's
    machine (a shared file): one line per reason, with the events it concerns."""
    from ..hooks import commands

    events: dict[str, list[str]] = {}
    for event, found_commands in sorted(found.items()):
        for command in found_commands:
            why = commands.problem(command, shared)
            if why:
                events.setdefault(why, []).append(event)
    return [f"{', '.join(named)}: {why}" for why, named in events.items()]


def _status_text(report: dict) -> str:
    lines = []
    for item in report["files"]:
        hooks = item["hooks"]
        shown = hooks if isinstance(hooks, str) else (", ".join(sorted(hooks)) or "no eidetic hooks")
        lines.append(f"{item['path']}: {shown if item['exists'] else 'no file'}")
        lines.extend(f"  warning: {line}" for line in item["problems"])
    if any(item["problems"] for item in report["files"]):
        lines.append(
            "  hint: put eidetic-hook on PATH (README.md, Install), then run 'eidetic hooks install claude' "
            "again (with the same --local/--user): it writes the command by name"
        )
    daemon = report["daemon"]
    state = f"running (pid {daemon['pid']})" if daemon["running"] else "not running (the next hook starts it)"
    lines.append(f"daemon: {state}; log: {daemon['log']}")
    lines.append("settings: " + ", ".join(f"{k} = {v}" for k, v in report["settings"].items()))
    return "\n".join(lines)


def _soon() -> float:
    import time

    return time.monotonic() + 0.5


def run_daemon(args: argparse.Namespace) -> int:
    from ..hooks.daemon import serve

    return serve(Path(args.warm) if args.warm else None)


def run_stop(args: argparse.Namespace) -> int:
    from ..hooks import runtime
    from ..hooks.client import ask

    where = runtime.paths()
    answer = ask(where, {"control": "stop"}, _soon()) if where else None
    stopped = answer.get("stopped") if answer else None
    if args.json:
        emit_json({"stopped": stopped})
    else:
        emit_text(f"stopped the hook daemon (pid {stopped})" if stopped else "no hook daemon was running")
    return 0
