"""``eidetic overview`` and ``doctor``: what is stored and whether it is healthy. Both show only
what the caller's scope may see (``export``, in ``port``, shares the scope flags)."""

from __future__ import annotations

import argparse

from .output import emit_json, emit_text
from .stores import open_memory


def _scope_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", help="your scope name (default: default)")
    parser.add_argument("--visibility", help="public (default) or private: private adds that scope's private records")


def add_parser(sub, add_common) -> None:
    overview = sub.add_parser("overview", help="counts by store, scope and lifecycle; contributors; links")
    _scope_flags(overview)
    add_common(overview)
    overview.set_defaults(run=run_overview)
    doctor = sub.add_parser("doctor", help="check stores, record files, index and embedder (exit 1 if unhealthy)")
    add_common(doctor)
    doctor.set_defaults(run=run_doctor)


def _access(args: argparse.Namespace, all_states: bool = True):
    from ..ranking.access import Access
    from ..records import DEFAULT_SCOPE, check_scope

    scope = check_scope(args.scope or DEFAULT_SCOPE.name, args.visibility or DEFAULT_SCOPE.visibility)
    return Access(scope, include_shadowed=all_states, include_archived=all_states)


def run_overview(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        stores = memory.overview(_access(args))
    if args.json:
        emit_json({"stores": stores})
        return 0
    lines = []
    for store in stores:
        if not store["exists"]:
            lines.append(f"- {store['store']} — no store yet")
            continue
        index = store["index"]
        lines.append(f"- {store['store']} — {store['records']} record(s), {len(store['scopes'])} scope(s), "
                     f"{store['connections']['links']} link(s), {store['connections']['supersedes']} supersedes; "
                     f"index {'current' if index and index['current'] else 'stale'}; "
                     f"embedder {'online' if store['embedder']['online'] else 'offline'}")
        for scope in store["scopes"]:
            states = ", ".join(f"{k} {scope[k]}" for k in ("active", "shadowed", "archived") if scope[k])
            lines.append(f"  - {scope['name']}/{scope['visibility']}: {scope['total']} ({states})")
            lines.append(f"    contributors: {', '.join(scope['contributors']) or '(none)'}")
    emit_text("\n".join(lines) or "no stores")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.doctor()
    if args.json:
        emit_json(report)
    else:
        lines = [f"{'ok' if c['passed'] else c['severity']:>7}  {c['message']}"
                 + (f"\n         hint: {c['remediation']}" if c["remediation"] else "") for c in report["checks"]]
        lines.append("healthy" if report["healthy"] else "UNHEALTHY")
        emit_text("\n".join(lines))
    return 0 if report["healthy"] else 1
