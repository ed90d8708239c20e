"""Records made from templates, and the same facts said twice: the near-duplicate fixture.

Meeting notes from one template with different owners and tickets, and deploy notes with
different versions and dates, come as close by the real model's cosine as true restatements
(``TEMPLATE_PAIRS``: 0.90-0.999 with all-MiniLM-L6-v2), yet each is its own memory. The true
near-duplicates (``TRUE_PAIRS``) are a note restated with its owner and ticket in another
order, facts reworded, and a text repeated in other case and punctuation.
"""

from __future__ import annotations

MEETING = "We agreed to follow up on the flaky integration tests and to freeze merges before the release."
DEPLOY = "went to production on {date}, rollback plan in the runbook."

FIRST = [  # remembered first
    {"id": "sync-alice", "text": f"Weekly sync notes: owner Alice Moreau, ticket OPS-1412. {MEETING}"},
    {"id": "sync-bruno", "text": f"Weekly sync notes: owner Bruno Keller, ticket OPS-1413. {MEETING}"},
    {"id": "sync-chen", "text": f"Weekly sync notes: owner Chen Wei, ticket OPS-1420. {MEETING}"},
    {"id": "deploy-231", "text": "Deploy note: billing-api v2.3.1 " + DEPLOY.format(date="2026-11-28")},
    {"id": "backup", "text": "The staging database is backed up every night at 2am"},
    {"id": "approvals", "text": "Deploys to production need two approvals from the Platform team."},
    {"id": "ruff", "text": "Run ruff before every commit to the Eidetic repo."},
    {"id": "cat", "text": "The cat sleeps on the sofa all afternoon"},
]
LATER = [  # remembered after them: each either repeats one of FIRST or is a template sibling
    {
        "id": "sync-alice-again",
        "text": "Weekly sync notes, ticket OPS-1412 (owner: Alice Moreau): we agreed to freeze merges before "
        "the release and to follow up on the flaky integration tests.",
    },
    {"id": "deploy-240", "text": "Deploy note: billing-api v2.4.0 " + DEPLOY.format(date="2026-12-05")},
    {"id": "deploy-231-next-day", "text": "Deploy note: billing-api v2.3.1 " + DEPLOY.format(date="2026-11-29")},
    {"id": "backup-again", "text": "Every night at 2am the staging database gets backed up"},
    {"id": "approvals-again", "text": "Two approvals from the Platform team are required for any production deploy."},
    {"id": "ruff-again", "text": "run ruff before every commit to the eidetic repo!!"},
]
RECORDS = [{**record, "created": f"2026-01-{day:02d}"} for day, record in enumerate([*FIRST, *LATER], start=1)]

TRUE_PAIRS = {  # later record -> the earlier one it repeats
    "sync-alice-again": "sync-alice",
    "backup-again": "backup",
    "approvals-again": "approvals",
    "ruff-again": "ruff",
}
TEMPLATE_PAIRS = [  # one template, different particulars: at or above the cosine line, never near-duplicates
    ("sync-alice", "sync-bruno"),
    ("sync-alice", "sync-chen"),
    ("sync-bruno", "sync-chen"),
    ("deploy-231", "deploy-240"),
    ("deploy-231", "deploy-231-next-day"),
    ("deploy-240", "deploy-231-next-day"),
]
