"""``eidetic overview`` and ``doctor``: what is stored and whether it is healthy. Both show only
what the caller's scope may see (``export``, in ``import_export``, shares the scope flags)."""

from __future__ import annotations

import argparse

from .output import emit_json, emit_text
from .stores import open_memory


def scope_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", help="your scope name (default: default)")
    parser.add_argument("--visibility", help="public (default) or private: private adds that scope's private records")


def add_parser(sub, add_common) -> None:
    overview = sub.add_parser("overview", help="counts by store, scope and lifecycle; contributors; links")
    scope_flags(overview)
    add_common(overview)
    overview.set_defaults(run=run_overview)
    doctor = sub.add_parser("doctor", help="check stores, record files, index and embedder (exit 1 if unhealthy)")
    scope_flags(doctor)
    add_common(doctor)
    doctor.set_defaults(run=run_doctor)


def access_of(args: argparse.Namespace):  # -> Access (imported lazily)
    """The caller's access from ``--scope``/``--visibility``, seeing every lifecycle state."""
    from ..ranking.access import Access

    return Access.of(args.scope, args.visibility, include_shadowed=True, include_archived=True)


def run_overview(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        stores = [store.to_dict() for store in memory.overview(access_of(args))]
    if args.json:
        emit_json({"stores": stores})
        return 0
    lines = []
    for store in stores:
        if not store["exists"]:
            lines.append(f"- {store['store']} — no store yet")
            continue
        index = store["index"]
        lines.append(
            f"- {store['store']} — {store['records']} record(s), {len(store['scopes'])} scope(s), "
            f"{store['connections']['links']} link(s), {store['connections']['supersedes']} supersedes; "
            f"index {'current' if index and index['current'] else 'stale'}; "
            f"embedder {'online' if store['embedder']['online'] else 'offline'}"
        )
        for scope in store["scopes"]:
            states = ", ".join(f"{k} {scope[k]}" for k in ("active", "shadowed", "archived") if scope[k])
            lines.append(f"  - {scope['name']}/{scope['visibility']}: {scope['total']} ({states})")
            lines.append(f"    types: {', '.join(f'{t} {n}' for t, n in scope['types'].items())}")
            lines.append(f"    contributors: {', '.join(scope['contributors']) or '(none)'}")
    emit_text("\n".join(lines) or "no stores")
    return 0


def run_doctor(args: argparse.Namespace) -> int:
    with open_memory(args) as memory:
        report = memory.doctor(access_of(args)).to_dict()
    if args.json:
        emit_json(report)
    else:
        lines = [
            f"{'ok' if c['passed'] else c['severity']:>7}  {c['message']}"
            + (f"\n         hint: {c['remediation']}" if c["remediation"] else "")
            for c in report["checks"]
        ]
        lines.append("healthy" if report["healthy"] else "UNHEALTHY")
        emit_text("\n".join(lines))
    return 0 if report["healthy"] else 1
