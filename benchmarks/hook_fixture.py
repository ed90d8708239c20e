"""A fixture for benchmarks/hook_relevance.py: the memories an agent and its team keep for one
repository (a made-up invoicing service, "tally": lessons, decisions, feedback, facts), and
prompts a developer sends while working on it, each with the ids of the memories that would help
(none for a prompt unrelated to the project). Written by hand for this benchmark; no public data.
"""

from __future__ import annotations

MEMORIES: list[tuple[str, str, str]] = [  # (id, type, text)
    (
        "deploy-days",
        "decision",
        "Production deploys happen on Tuesdays and Thursdays after the 10:00 standup; never on Fridays.",
    ),
    (
        "deploy-rollback",
        "lesson",
        "To roll back a bad deploy run `make rollback REV=<sha>`; it redeploys the previous Helm release in about four minutes.",
    ),
    (
        "migrations-online",
        "lesson",
        "Alembic migrations that add a NOT NULL column must add it nullable first, backfill, then set NOT NULL in a second release; the invoices table was locked for 9 minutes in March.",
    ),
    (
        "pg-pool",
        "lesson",
        "The API's SQLAlchemy pool is 10 connections per pod; PgBouncer in transaction mode sits in front, so never use session-level advisory locks.",
    ),
    (
        "tests-db",
        "feedback",
        "Run the test suite with `make test`, not plain pytest: it starts the throwaway Postgres container the fixtures need.",
    ),
    (
        "flaky-webhook-test",
        "lesson",
        "test_stripe_webhook_retries is flaky when the machine is loaded; it depends on a 2-second sleep. Rerun it before investigating.",
    ),
    ("style-ruff", "feedback", "Code style: ruff format with line length 100; imports sorted by ruff, no isort."),
    (
        "typing",
        "feedback",
        "Use type hints everywhere in new code and keep mypy --strict clean for the billing package.",
    ),
    ("pr-size", "feedback", "Maria prefers small pull requests, under 400 changed lines, one concern each."),
    ("commit-msg", "feedback", "Commit messages: imperative mood, with a ticket id like TAL-123 at the start."),
    (
        "money-cents",
        "decision",
        "Money is stored as integer cents in the database and handled as Decimal in Python; never float.",
    ),
    (
        "vat-rounding",
        "lesson",
        "VAT is rounded per line item, not on the invoice total; the German tax office rejected totals rounded once.",
    ),
    (
        "invoice-pdf",
        "decision",
        "Invoice PDFs are rendered with WeasyPrint from Jinja templates in templates/invoices/; we dropped wkhtmltopdf in 2025.",
    ),
    (
        "pdf-fonts",
        "lesson",
        "WeasyPrint needs the Noto fonts installed in the container image, otherwise invoices in Greek or Polish render as boxes.",
    ),
    (
        "stripe-keys",
        "lesson",
        "Stripe test keys for local development are in 1Password under 'Tally dev'; the staging webhook secret rotates monthly.",
    ),
    (
        "webhook-idempotency",
        "decision",
        "Stripe webhooks are processed idempotently by event id, recorded in the processed_events table.",
    ),
    (
        "email-provider",
        "decision",
        "Transactional email goes through Postmark; marketing email is never sent from this service.",
    ),
    (
        "email-templates",
        "lesson",
        "Postmark email templates are versioned in the repo under emails/; edit them there, not in the Postmark dashboard, which is overwritten on deploy.",
    ),
    ("frontend-state", "decision", "The React frontend uses TanStack Query for server state; no Redux."),
    (
        "node-version",
        "lesson",
        "The frontend build fails on Node 18 with syntax errors in dependencies; use Node 20 (see .nvmrc).",
    ),
    ("tailwind", "feedback", "Use Tailwind utility classes for styling; no new CSS files."),
    (
        "i18n",
        "decision",
        "UI strings go through i18next; translations are in frontend/locales/<lang>.json and German is the reference language.",
    ),
    (
        "auth",
        "decision",
        "Authentication uses Auth0 with PKCE; the API validates JWTs against the Auth0 JWKS, cached for 10 minutes.",
    ),
    (
        "roles",
        "decision",
        "Roles are owner, accountant and viewer; only owners can void invoices, accountants can issue credit notes.",
    ),
    (
        "audit-log",
        "decision",
        "Every change to an invoice writes an audit_log row with the user id and a JSON diff; GoBD compliance requires it.",
    ),
    (
        "retention",
        "decision",
        "Invoices must be kept for ten years (GoBD); deleting an invoice only marks it void, nothing is purged.",
    ),
    (
        "k8s-namespaces",
        "lesson",
        "Kubernetes namespaces are tally-staging and tally-prod, both on the eu-central-1 cluster.",
    ),
    (
        "secrets",
        "decision",
        "Secrets reach the pods through External Secrets from AWS Secrets Manager; never commit a .env file.",
    ),
    (
        "logging",
        "decision",
        "Logs are JSON through structlog, shipped to Grafana Loki; include invoice_id and tenant_id as fields.",
    ),
    (
        "latency-alert",
        "lesson",
        "The p95 latency alert on /invoices fires after large CSV imports; it is expected and clears within 15 minutes.",
    ),
    (
        "datev-csv",
        "lesson",
        "CSV exports from DATEV use semicolons and Windows-1252 encoding; detect the encoding before parsing.",
    ),
    (
        "celery",
        "decision",
        "Background jobs run on Celery with Redis as the broker; long PDF batches go to the 'slow' queue.",
    ),
    (
        "celery-stripe",
        "lesson",
        "Celery tasks that call Stripe must use acks_late and retry with exponential backoff; a worker restart once lost 40 payouts.",
    ),
    (
        "redis-memory",
        "lesson",
        "Redis ran out of memory in October because Celery kept task results forever; result_expires is now one day.",
    ),
    (
        "tenant-session",
        "decision",
        "Multi-tenancy: every query filters by tenant_id through the TenantSession helper; raw SQL must add the filter by hand.",
    ),
    (
        "tenant-leak",
        "lesson",
        "A report endpoint once leaked another tenant's totals because its raw SQL skipped tenant_id; every new report gets a test with two tenants.",
    ),
    (
        "api-versions",
        "decision",
        "The public API is versioned in the path (/v1/); a breaking change needs a new version and six months of overlap.",
    ),
    (
        "pagination",
        "decision",
        "List endpoints use cursor pagination with an opaque base64 cursor and a default page size of 50.",
    ),
    (
        "rate-limit",
        "lesson",
        "The public API is rate limited to 100 requests per minute per API key, enforced at the nginx ingress.",
    ),
    (
        "openapi-client",
        "lesson",
        "After changing any API schema regenerate the TypeScript client with `make openapi`, or the frontend build breaks.",
    ),
    (
        "ci-cache",
        "lesson",
        "GitHub Actions caches pip wheels keyed on requirements.lock; touch the lock file to bust a corrupted cache.",
    ),
    ("ci-duration", "lesson", "CI takes about 12 minutes; the end-to-end Playwright job is the slowest at 7 minutes."),
    (
        "playwright-seed",
        "lesson",
        "Playwright tests need the seed tenant from `make seed`; without it they fail with 401.",
    ),
    (
        "renovate",
        "decision",
        "Renovate opens dependency update PRs on Mondays; patch updates automerge when CI is green.",
    ),
    ("python-version", "decision", "The backend runs on Python 3.12; do not use syntax that needs 3.13 yet."),
    ("staging-access", "lesson", "New developers get access to staging by asking in the #tally-access Slack channel."),
    ("on-call", "lesson", "On-call rotates weekly on Wednesdays; the PagerDuty schedule is 'Tally primary'."),
    (
        "acme",
        "lesson",
        "ACME GmbH is the largest customer (12,000 invoices a month) and has a custom contract with net-60 payment terms.",
    ),
    (
        "plans",
        "decision",
        "Plans: Starter 19 EUR, Team 49 EUR, Business 129 EUR a month; prices are defined only in billing/plans.py.",
    ),
    (
        "feature-flags",
        "decision",
        "Feature flags live in Unleash; remove a flag within two sprints of its full rollout.",
    ),
    ("sentry", "lesson", "Backend errors go to the Sentry project tally-api; the frontend reports to tally-web."),
    (
        "backups",
        "lesson",
        "RDS takes automated snapshots nightly and keeps them 35 days; a restore to staging was tested in September and took 40 minutes.",
    ),
    (
        "timezones",
        "lesson",
        "Store timestamps in UTC; invoice due dates are plain dates in the tenant's timezone, not datetimes.",
    ),
    (
        "dunning",
        "decision",
        "Payment reminders (dunning) go out 7, 14 and 30 days after the due date; the accountant sends the third one by hand.",
    ),
    (
        "search",
        "decision",
        "Invoice search uses Postgres full-text search with the german configuration; we decided against Elasticsearch.",
    ),
    (
        "n-plus-one",
        "lesson",
        "The invoice list endpoint had an N+1 query on line items; load line_items with selectinload.",
    ),
    ("review", "feedback", "When a PR touches the API schema, ask one backend and one frontend person for review."),
    ("adr", "decision", "Architecture decisions are written as ADRs in docs/adr/, numbered, one page each."),
    (
        "answers",
        "feedback",
        "The user wants short answers with the command first, and no summary of what was just done.",
    ),
    ("windows", "lesson", "On Windows run the dev stack in WSL2; Docker volume mounts from NTFS are too slow."),
]

PROMPTS: list[tuple[str, tuple[str, ...]]] = [  # (prompt, the ids of the memories that would help)
    ("Can we ship the new payment reminder feature to production this Friday?", ("deploy-days", "dunning")),
    ("The deploy broke the invoices page, how do I go back to the previous version?", ("deploy-rollback",)),
    ("Add a non-null currency column to the invoices table", ("migrations-online",)),
    ("Write a migration that adds a required due_date column to payments", ("migrations-online", "timezones")),
    ("pytest fails with 'connection refused' on port 5432, what am I missing?", ("tests-db",)),
    ("test_stripe_webhook_retries failed in CI again, can you look at it?", ("flaky-webhook-test",)),
    ("The PDF for invoice 4711 shows the Polish characters as little squares", ("pdf-fonts", "invoice-pdf")),
    ("How should I compute the VAT for an invoice with many line items?", ("vat-rounding", "money-cents")),
    ("Add an amount field to the refund model; which type should it have?", ("money-cents",)),
    ("Change the wording of the second payment reminder email", ("email-templates", "dunning")),
    ("npm run build fails with a syntax error inside node_modules", ("node-version",)),
    ("Add German and French translations for the new settings page", ("i18n",)),
    ("Should an accountant be allowed to void an invoice?", ("roles",)),
    ("Write a raw SQL report of revenue per month", ("tenant-session", "tenant-leak")),
    ("The Celery worker restarted last night and some Stripe payouts are missing", ("celery-stripe",)),
    ("Redis memory usage keeps growing again, what could it be?", ("redis-memory",)),
    ("Import this DATEV CSV export; the umlauts come out garbled", ("datev-csv",)),
    ("We got paged for high p95 latency on /invoices right after a big import", ("latency-alert",)),
    ("I changed the InvoiceOut schema; what else do I need to update?", ("openapi-client", "review", "api-versions")),
    ("All Playwright tests fail with 401 Unauthorized on my machine", ("playwright-seed",)),
    ("CI fails while installing wheels, the pip cache looks corrupted", ("ci-cache",)),
    ("Rename the field total_gross in the public API response", ("api-versions", "openapi-client")),
    ("The invoice list endpoint is slow for invoices with many line items", ("n-plus-one",)),
    ("Can I purge the invoices from 2014 to free some space?", ("retention",)),
    ("Where do I get the Stripe API keys for local development?", ("stripe-keys",)),
    ("How do I restore the production database to yesterday's state?", ("backups",)),
    ("Write the commit message for this change", ("commit-msg",)),
    ("Which Python version can the new worker service target?", ("python-version",)),
    ("How do we add a new plan at 79 EUR a month?", ("plans",)),
    # unrelated to the project: nothing should come
    ("Write a haiku about autumn", ()),
    ("Explain the difference between a process and a thread", ()),
    ("Thanks, that's all for now", ()),
    ("What is the time complexity of heapq.heappush?", ()),
    ("Convert this loop to use xargs: for f in *.log; do gzip $f; done", ()),
    ("Summarise the plot of Hamlet in two sentences", ()),
    ("How do I exit vim?", ()),
    ("What does the functools.cache decorator do?", ()),
    ("Translate 'good morning' into Japanese", ()),
    ("Write a regular expression that matches an IPv4 address", ()),
    ("Recommend a good book on distributed systems", ()),
    ("Explain how git rebase --onto works", ()),
    ("What is the capital of Australia?", ()),
    ("Print an ASCII table of the first ten square numbers", ()),
]


def halves() -> tuple[list[int], list[int]]:
    """The prompts' tuning and held-out halves: alternate prompts of each kind (with and without
    related memories), so each half has both."""
    related = [i for i, (_, ids) in enumerate(PROMPTS) if ids]
    unrelated = [i for i, (_, ids) in enumerate(PROMPTS) if not ids]
    return related[0::2] + unrelated[0::2], related[1::2] + unrelated[1::2]
