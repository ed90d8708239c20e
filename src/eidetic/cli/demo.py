"""``eidetic demo``: remember a dozen sample memories in a temporary store, then recall them
in every available mode. Touches nothing of the user's: store, index and usage all live in a
temporary folder that is removed afterwards."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from .output import emit_json, emit_text

SAMPLES = [
    {
        "id": "deploy-friday",
        "type": "lesson",
        "text": "Never deploy on a Friday afternoon: the on-call rota is thin and rollbacks wait until Monday.",
        "metadata": {"source": "retro", "priority": 1},
    },
    {
        "id": "db-migration",
        "type": "decision",
        "text": "We migrate the orders database to PostgreSQL 16 in two steps: replicate first, then switch writes during the Tuesday window.",
        "metadata": {"source": "meeting", "priority": 2},
    },
    {
        "id": "tabs-spaces",
        "type": "user",
        "name": "indentation",
        "description": "Formatting preference",
        "text": "Ana prefers tabs, but the repository uses four spaces; follow the repository.",
        "metadata": {"source": "chat"},
    },
    {
        "id": "api-key-env",
        "type": "feedback",
        "text": "Keep the API key out of the repository; load it from the environment (EIDETIC_EMBED_API_KEY).",
        "metadata": {"source": "review", "priority": 1},
    },
    {
        "id": "jetson-power",
        "type": "reference",
        "text": "The Orin Nano draws about 7 W idle and 15 W under load; the Jetson AGX needs a 65 W supply.",
        "metadata": {"source": "discord"},
    },
    {
        "id": "flaky-test",
        "type": "lesson",
        "text": "test_sync_large is flaky on shared CI machines because it times a sleep; assert on events instead of durations.",
        "metadata": {"source": "ci"},
    },
    {
        "id": "release-checklist",
        "type": "project",
        "text": "Release checklist: bump the version, update the changelog, tag, build wheels, and smoke-test the install on a fresh machine.",
        "metadata": {"source": "docs"},
    },
    {
        "id": "customer-lisbon",
        "type": "note",
        "text": "The Lisbon customer wants invoices in EUR with VAT shown per line; their fiscal year starts in April.",
        "metadata": {"source": "email"},
    },
    {
        "id": "cache-bug",
        "type": "lesson",
        "text": "The stale-cache bug came from comparing mtimes at one-second granularity; compare size and inode too.",
        "metadata": {"source": "postmortem", "priority": 2},
    },
    {
        "id": "standup-time",
        "type": "note",
        "text": "Daily standup moved to 09:30 CET so the Montreal team can join.",
        "metadata": {"source": "chat"},
    },
    {
        "id": "backup-restore",
        "type": "reference",
        "text": "Restore a backup with pg_restore --clean --if-exists; test restores monthly, an untested backup is not a backup.",
        "metadata": {"source": "runbook"},
    },
    {
        "id": "onboarding",
        "type": "project",
        "text": "New engineers pair with a buddy for the first two weeks and ship a small fix in their first three days.",
        "metadata": {"source": "handbook"},
    },
]

QUERIES = [
    ("exact", "Orin Nano"),
    ("keyword", "database migration window"),
    ("keyword", "deploying on fridays"),
    ("approximate", "what should we avoid before the weekend"),
    ("hybrid", "how do we restore backups"),
]


def add_parser(sub, add_common) -> None:
    parser = sub.add_parser("demo", help="remember sample memories in a temporary store and recall them")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run, memory_dir=None, backend=None)


def run(args: argparse.Namespace) -> int:
    from ..locations import plan_stores
    from ..memory import Memory
    from ..usage import UsageState
    from .recall_output import render_table, render_text
    from .render import Style, terminal_width

    with tempfile.TemporaryDirectory(prefix="eidetic-demo-") as tmp:
        base = Path(tmp)
        settings = args.settings.with_values("demo", cache_dir_override=base / "cache")
        memory = Memory(plan_stores([base / "memory"]), UsageState(base / "usage.sqlite"), settings=settings)
        with memory:
            remembered = memory.remember(SAMPLES, added_by="demo")
            bundles = [memory.recall(query, mode=mode, top_k=3, judge_relevance=True) for mode, query in QUERIES]
    if args.json:
        emit_json({"remembered": remembered.to_dict(), "recalls": [b.to_dict() for b in bundles]})
        return 0
    width, style = terminal_width(), Style.for_stdout(args.settings)  # a terminal gets recall's table
    out = [f"Remembered {remembered.upserted} sample memories in a temporary store.", ""]
    for bundle in bundles:
        out.append(style(f"$ eidetic recall {bundle.query!r} --mode {bundle.mode} --top-k 3", "bold"))
        out.extend(f"  note: {w}" for w in bundle.warnings)
        out.append(render_text(bundle.to_dict()) if width is None else render_table(bundle.to_dict(), style, width))
        out.append("")
    emit_text("\n".join(out))
    return 0
