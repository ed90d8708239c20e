"""The relevance floor on young stores (3 to 200 records): the obvious answer stays, an
unrelated question still comes back empty, in every mode the floor judges. Real model, a store
of realistic agent memories written here (runbooks, decisions, preferences, people), padded to
200 with notes of one team's services (``FILLER``)."""

from __future__ import annotations

import pytest

from conftest import ids, ndjson
from eidetic.ranking import relevance

MEMORIES = {
    "restore": "Restore a backup with pg_restore --clean; test restores monthly",
    "deploy": "Deploys go out on Tuesdays after the standup; never deploy on a Friday",
    "rollback": "To roll back a release, run scripts/rollback.sh with the previous tag",
    "oncall": "The on-call rotation changes every Monday at 9am; page the on-call engineer in the ops channel",
    "postgres": "Decision: we chose PostgreSQL over MySQL for its JSON support and extensions",
    "tabs": "Alice prefers tabs over spaces and a dark theme in every editor",
    "reviews": "Every pull request needs one approving review before it is merged",
    "secrets": "API keys live in the vault; never commit them to the repository",
    "certs": "TLS certificates renew automatically through certbot every 60 days",
    "standup": "Standup is at 9:30 every weekday in the small meeting room",
    "python": "The service targets Python 3.11; upgrade the base image before bumping it",
    "logs": "Application logs are shipped to Loki and kept for 30 days",
    "vacation": "Bob is on vacation from 3 to 14 March; Carol covers his reviews",
    "coffee": "Dana takes her coffee black, no sugar",
    "migrations": "Database migrations run with alembic upgrade head before the new release starts",
    "cache": "Redis caches session data with a one-hour expiry",
    "incidents": "After an incident, write a blameless postmortem within two days",
    "ci": "CI runs the test suite on every push; a red build blocks the merge",
    "pricing": "Decision: the free plan keeps three projects; paid plans start at 12 dollars a month",
    "style": "The user wants short answers without bullet points unless asked",
    "dns": "DNS for the public site is managed in Cloudflare; changes need two reviewers",
    "backups": "Nightly backups of the main database are copied to a second region",
    "alerts": "Disk usage alerts fire at 80 percent on every production host",
    "staging": "Staging is reset from a production snapshot every Sunday night",
    "feature-flags": "New features ship behind a feature flag and are enabled per customer",
    "support": "Customer support tickets are triaged by the support lead each morning",
    "release-notes": "Release notes are written by the engineer who merged the change",
    "frontend": "Decision: the frontend uses React with TypeScript; no new jQuery code",
    "queue": "Background jobs run on a Celery queue backed by RabbitMQ",
    "timezone": "All timestamps are stored in UTC and shown in the user's time zone",
    "passwords": "Passwords are hashed with argon2; never log a password, even hashed",
    "retention": "User data is deleted thirty days after an account is closed",
    "laptop": "Erin's laptop is the old one with the broken trackpad; bring a mouse",
    "lunch-order": "Frank is vegetarian; order the veggie pizza for team lunches",
    "meeting-notes": "Meeting notes go in the shared wiki under the team's page",
    "budget": "The cloud budget is 4000 dollars a month; finance reviews it quarterly",
    "interviews": "Technical interviews use the take-home exercise, then a pairing session",
    "monitoring": "Grafana dashboards for the API live in the ops folder",
    "rate-limit": "The public API allows 100 requests per minute per key",
    "mobile": "The mobile app is released every second Wednesday through the app stores",
    "search": "Product search runs on Elasticsearch; reindex after changing the mapping",
    "email": "Transactional email is sent through Postmark; marketing email through Mailchimp",
    "onboarding": "New engineers get a buddy for their first two weeks",
    "docs-style": "The user prefers examples before explanations in documentation",
    "naming": "Branch names start with the ticket number, like ENG-123-fix-login",
    "holidays": "The office is closed between Christmas and New Year",
    "vpn": "Production servers are only reachable through the company VPN",
    "billing": "Invoices are generated on the first day of each month by the billing job",
    "tests-style": "The user wants tests that use real databases rather than mocks",
    "kubernetes": "Services run on Kubernetes; each team owns its own namespace",
    "sso": "Employees sign in with Google single sign-on; no local accounts",
    "gdpr": "Data export requests must be answered within one month",
    "design": "Designs are reviewed in Figma before any frontend work starts",
    "printer": "The office printer on the second floor jams with thick paper",
    "slack": "Urgent questions go to the team channel, not to direct messages",
    "parking": "Parking spots are first come, first served; Gina has the reserved one",
    "latency": "The API's p95 latency target is 300 milliseconds",
    "dependency": "Dependabot pull requests are merged on Thursdays after CI passes",
    "analytics": "Product analytics events are tracked with PostHog",
    "offsite": "The team offsite is in Lisbon in the first week of June",
}
OBVIOUS = {  # question -> the memory that answers it (each shares a word with it: keyword mode too)
    "how do we restore the database": "restore",  # the issue's case: cosine 0.32
    "when do we deploy": "deploy",
    "how do I roll back a bad release": "rollback",
    "who is on call this week": "oncall",
    "why did we pick PostgreSQL": "postgres",
    "does Alice like tabs or spaces": "tabs",
    "where are the API keys kept": "secrets",
    "how long are logs kept": "logs",
    "who covers Bob's reviews while he is on vacation": "vacation",
    "how does Dana take her coffee": "coffee",
    "how do I run the database migrations": "migrations",
    "what does the free plan include": "pricing",
}
PARAPHRASED = {  # question -> its memory, in other words than the memory's (a semantic mode's case)
    "how should I format my replies to the user": "style",
    "where do secret credentials belong": "secrets",
    "which day is safest for shipping to production": "deploy",
    "how to undo a broken rollout": "rollback",
    "what happens to a customer's data after they leave": "retention",
    "can I push to main without a review": "reviews",
    "how are the passwords stored": "passwords",
    "who takes over Bob's work while he is away": "vacation",
    "what should I order for Frank at lunch": "lunch-order",
}
# Where approximate recall still loses a paraphrased answer: in 200 records, with the notes of
# FILLER as near as they are, the store's reference rises (0.06-0.10) and the answer stands out
# by less than the standout floor asks: "style" (cosine 0.275) by 0.196, no more than the best of
# an unrelated question in the same register does ("what is our refund policy", 0.205 in 60
# records), "secrets" (0.306) by 0.249; neither shares a rare word with its question.
PARAPHRASE_MISSES = {(200, "how should I format my replies to the user"), (200, "where do secret credentials belong")}
ALSO = {"how do we restore the database": "backups"}  # another memory that answers it, ranked above it
UNRELATED = (
    "what is the capital of France",
    "recipe for banana bread",
    "how do proteins fold in yeast mitochondria",
    "who won the football world cup in 2018",
    "best hiking trails in the Alps",
    "how do I train a puppy to sit",
    "what is our refund policy",  # the same register as the store's, answered by none of it
    "how do we configure the load balancer",
)
PEOPLE = ("Hana", "Ivan", "Jonas", "Kemal", "Lena", "Mira", "Noor", "Omar", "Priya", "Quinn")
PARTS = ("billing", "search", "checkout", "invoice", "login", "upload", "export", "report", "notification", "audit")
PARTS += ("import", "profile", "webhook", "scheduler")
NOTES = (
    "{p} owns the {c} service and answers questions about it",
    "The {c} dashboard shows errors per minute over the last day",
    "Ticket ENG-{n}: the {c} job times out when the queue is long",
    "{p} wrote the design document for the {c} rewrite",
    "The {c} feature was demoed to customers by {p} last quarter",
    "Known issue: the {c} page is slow on mobile; {p} is looking into it",
    "{p} asked for the {c} tests to be split into smaller files",
    "The {c} endpoint returns paginated results of fifty items",
    "Customers asked for a CSV option in {c}; {p} logged it as ENG-{n}",
    "Refactor the {c} module before adding new options, says {p}",
)
FILLER = {  # 140 notes in the store's own register: they raise what an answer must stand out from
    f"note-{i}": NOTES[i % 10].format(p=PEOPLE[3 * i % 10], c=PARTS[(5 * i + i // 10) % 14], n=400 + 7 * i)
    for i in range(140)
}
STORES = {  # young stores of 3, 5 (the issue's), 20, 60 and 200 records
    3: ("restore", "tabs", "coffee"),
    5: ("restore", "deploy", "rollback", "oncall", "postgres"),
    20: tuple(MEMORIES)[:20],
    60: tuple(MEMORIES),
    200: tuple(MEMORIES) + tuple(FILLER),
}
MODES = ("keyword", "approximate", "hybrid")
SEMANTIC = ("approximate", "hybrid")
AUTO = ("--relevance-floor", "auto", "--no-record", "--depth", "0", "--json")


@pytest.fixture
def young(cli, store, monkeypatch):
    """A fresh store of the real model; a function adds memories by id."""
    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)

    def remember(*names: str) -> None:
        texts = MEMORIES | FILLER
        run = cli("remember", stdin=ndjson(*({"id": name, "text": texts[name]} for name in names)))
        assert run.code == 0, run.err

    return remember


@pytest.mark.slow
@pytest.mark.parametrize("size", sorted(STORES))
def test_a_young_store_keeps_the_obvious_answer_and_drops_the_unrelated(cli, young, size):
    young(*STORES[size])
    asked = {question: answer for question, answer in OBVIOUS.items() if answer in STORES[size]}
    assert asked
    for mode in MODES:
        for question, answer in asked.items():
            found = ids(cli("recall", question, "--mode", mode, *AUTO))
            assert answer in found[:2] and found[0] in (answer, ALSO.get(question)), (size, mode, question, found)
        for question in UNRELATED:
            run = cli("recall", question, "--mode", mode, *AUTO)
            assert ids(run) == [], (size, mode, question)


def test_the_issue_s_case_with_the_default_floor_and_how_it_was_judged(cli, young):
    """Five records: the floors are drawn lower than a large store's, and ``--explain`` says by
    how much (the store's size and the floors it drew)."""
    young(*STORES[5])
    hit = cli("recall", "how do we restore the database", *AUTO, "--explain").json["items"][0]
    judged = hit["explain"]
    assert hit["id"] == "restore" and hit["relevance"] >= 1.0
    assert judged["store_records"] == 5
    model = "sentence-transformers/all-MiniLM-L6-v2"
    large = relevance.COSINE_FLOORS[model]["hybrid"]
    assert judged["cosine_floor"] == pytest.approx(large * relevance.young_scale(relevance.YOUNG_SLOPES["hybrid"], 5))
    assert judged["cosine_floor"] < large and judged["cosine"] < large  # a large store's line would drop it


def test_young_floors_are_lower_the_younger_the_store_and_equal_from_young_up():
    hybrid = relevance.Calibration.of("hybrid", "sentence-transformers/all-MiniLM-L6-v2")
    floors = [hybrid.at(n).semantic for n in (1, 5, 20, 100, relevance.YOUNG - 1)]
    assert floors == sorted(floors) and floors[0] > 0  # never zero, rising with the size
    assert hybrid.at(relevance.YOUNG) == hybrid == hybrid.at(10 * relevance.YOUNG)
    keyword = relevance.Calibration.of("keyword", None)
    assert keyword.at(5).keyword == pytest.approx(
        relevance.KEYWORD_FLOORS["keyword"] * relevance.young_scale(relevance.YOUNG_SLOPES["keyword"], 5)
    )
    assert relevance.young_scale(0.05, 0) == relevance.young_scale(0.05, 1)  # an empty store: as one record


@pytest.mark.parametrize("size", [20, 60, 200])
def test_approximate_recall_keeps_a_paraphrased_answer_that_stands_out(cli, young, size):
    """Questions in other words than their memory's meet it at a cosine of 0.27 to 0.47, under
    the line of a store of 60 or 200 records: they stay because they stand out from the store's
    other records, which an unrelated question's best hit does not."""
    young(*STORES[size])
    asked = {question: answer for question, answer in PARAPHRASED.items() if answer in STORES[size]}
    assert len(asked) >= 3
    for question, answer in asked.items():
        found = ids(cli("recall", question, "--mode", "approximate", *AUTO))
        if (size, question) in PARAPHRASE_MISSES:
            assert answer not in found, "the floor keeps it now: drop it from PARAPHRASE_MISSES"
            continue
        assert answer in found[:2], (size, question, found)


def test_an_answer_that_is_not_the_best_hit_is_kept_in_a_young_store(cli, young):
    """Two records answer: the second (the issue's case, cosine 0.32) is under the large stores'
    line for each hit (0.9 x 0.38), but the best itself lies under that line, let through by the
    young store's, so each hit needs only 0.9 of the best's relevance (or to stand out)."""
    young("backups", "restore", "coffee")
    for size in (3, 60):
        if size == 60:
            young(*(name for name in STORES[60] if name not in ("backups", "restore", "coffee")))
        run = cli("recall", "how do we restore the database", "--mode", "approximate", *AUTO, "--explain")
        found = {item["id"]: item for item in run.json["items"]}
        assert list(found)[:2] == ["backups", "restore"], (size, list(found))
        second = found["restore"]
        assert second["explain"]["cosine"] < relevance.HIT_SHARES["approximate"] * 0.38  # the old per-hit line
        judged, best = second["explain"], found["backups"]["relevance"]
        assert second["relevance"] >= min(judged["hit_share"], judged["best_share"] * best)
        assert size == 60 or second["relevance"] < judged["hit_share"]  # three records: kept for the best's sake
        assert "coffee" not in found


def test_explain_says_how_far_a_hit_stands_out(cli, young):
    """``--explain`` gives the store's reference cosine for the query and the standout floor, and
    the relevance is the larger of the two kinds of evidence."""
    young(*STORES[20])
    hit = cli("recall", "how should I format my replies to the user", "--mode", "approximate", *AUTO, "--explain").json
    judged = hit["items"][0]["explain"]
    assert hit["items"][0]["id"] == "style"
    assert judged["standout_floor"] == pytest.approx(relevance.STANDOUT_FLOORS["approximate"])
    assert -1.0 < judged["cosine_reference"] < judged["cosine"]
    stands_out = (judged["cosine"] - judged["cosine_reference"]) / judged["standout_floor"]
    words = judged["bm25"] / judged["query_idf"] / judged["keyword_floor"]
    assert hit["items"][0]["relevance"] == pytest.approx(
        max(judged["cosine"] / judged["cosine_floor"], stands_out, words)
    )
    assert hit["items"][0]["relevance"] >= 1.0 > judged["cosine"] / judged["cosine_floor"]  # kept by standing out
    text = cli(
        "recall",
        "how should I format my replies to the user",
        "--mode",
        "approximate",
        "--relevance-floor",
        "auto",
        "--no-record",
        "--explain",
    ).out
    assert f"the store's reference {judged['cosine_reference']:.4f}) / {judged['standout_floor']:g}" in text
    floor_at_0 = ("--relevance-floor", "0", "--no-record", "--depth", "0", "--json", "--explain")
    hybrid = cli("recall", "how should I format my replies to the user", "--mode", "hybrid", *floor_at_0).json
    assert "cosine_reference" not in hybrid["items"][0]["explain"]  # hybrid's words judge instead


def test_standing_out_is_judged_the_same_on_every_backend(cli, backend, monkeypatch):
    """The reference comes from recall's semantic pool, cut over the union: each backend gives
    the median of the same cosines, as the model itself computes them."""
    from eidetic.embed import default_embedder
    from eidetic.settings import Settings

    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)
    names = STORES[20]
    assert cli("remember", stdin=ndjson(*({"id": name, "text": MEMORIES[name]} for name in names))).code == 0
    question = "how should I format my replies to the user"
    items = cli("recall", question, "--mode", "approximate", *AUTO, "--explain").json["items"]
    assert [item["id"] for item in items][:1] == ["style"], backend
    model, _ = default_embedder(Settings.load())
    assert model is not None
    cosines = model.embed([MEMORIES[name] for name in names]) @ model.embed([question], query=True)[0]
    assert items[0]["explain"]["cosine_reference"] == pytest.approx(relevance.reference(cosines.tolist()), abs=1e-4)


def test_the_reference_is_the_median_of_the_nearest_and_stands_out_only_in_young_stores():
    assert relevance.reference([]) is None
    assert relevance.reference([0.1, 0.5, 0.3]) == pytest.approx(0.3)
    assert relevance.reference([0.4, 0.1, 0.2, 0.3]) == pytest.approx(0.25)
    nearest = [i / 1000 for i in range(1000)]  # past REFERENCE_POOL: the median of the nearest, above the store's
    assert relevance.reference(nearest) == pytest.approx((0.950 + 0.949) / 2)  # of the 100 nearest
    assert relevance.reference(nearest) > sorted(nearest)[len(nearest) // 2]
    approximate = relevance.Calibration.of("approximate", "sentence-transformers/all-MiniLM-L6-v2")
    assert approximate.at(relevance.YOUNG - 1).standout is not None and approximate.at(relevance.YOUNG).standout is None
    assert relevance.relevance(0.3, None, 0.0, approximate.at(relevance.YOUNG), True, 0.0) == pytest.approx(0.3 / 0.38)
    young = approximate.at(20)  # each hit: the large stores' line (share > 1), or 0.9 of a best below it
    assert young.share > 1.0 and young.of_best == relevance.HIT_SHARES["approximate"]
    assert relevance.kept([1.05, 1.0, 0.5], relevance.AUTO, young.share, young.of_best) == [True, True, False]
    assert relevance.kept([1.05, 1.0, 0.5], relevance.AUTO, young.share) == [True, False, False]  # before
    assert relevance.kept([2.0, 1.05], relevance.AUTO, young.share, young.of_best) == [True, False]  # a best far above
    assert approximate.at(relevance.YOUNG).of_best is None
    words = relevance.YOUNG_WORD_FLOORS["approximate"]  # a young store judges approximate hits by words too
    assert approximate.keyword is None and approximate.at(20).keyword == words == approximate.at(3).keyword
    assert approximate.at(relevance.YOUNG).keyword is None and approximate.at(relevance.YOUNG).young_words is None
    assert relevance.relevance(0.1, 2.0 * words, 1.0, approximate.at(20), True, 0.1) == pytest.approx(2.0)
    assert relevance.Calibration.of("hybrid", "sentence-transformers/all-MiniLM-L6-v2").at(20).keyword == pytest.approx(
        relevance.KEYWORD_FLOORS["hybrid"] * relevance.young_scale(relevance.YOUNG_SLOPES["hybrid"], 20)
    )  # a mode with words of its own keeps its keyword floor


def test_approximate_hits_are_judged_by_their_words_in_a_young_store_only(cli, young):
    """ "restore" meets its answer at cosine 0.32 among 200 notes of one team, behind a note on
    backups, and stands out too little from them; its words keep it. ``--explain`` gives the
    BM25 it was judged by, as keyword recall scores the record; a large store judges meaning only."""
    young(*STORES[200])
    question = "how do we restore the database"
    items = cli("recall", question, "--mode", "approximate", *AUTO, "--explain").json["items"]
    found = {item["id"]: item for item in items}
    assert "restore" in list(found)[:2], list(found)
    judged = found["restore"]["explain"]
    assert judged["keyword_floor"] == pytest.approx(relevance.YOUNG_WORD_FLOORS["approximate"])
    keyword = cli(
        "recall", question, "--mode", "keyword", "--relevance-floor", "0", "--no-record", "--json", "--explain"
    )
    scored = {item["id"]: item["explain"]["raw_score"] for item in keyword.json["items"]}
    assert judged["bm25"] == pytest.approx(scored["restore"], rel=1e-6)
    assert found["restore"]["relevance"] >= judged["bm25"] / judged["query_idf"] / judged["keyword_floor"] - 1e-9
    assert judged["cosine"] / judged["cosine_floor"] < 1.0  # meaning alone would not keep it


@pytest.mark.slow
def test_the_mcp_tool_s_default_keeps_the_obvious_answer_in_a_young_store(store, monkeypatch):
    """What an agent with a young store hears through the MCP tool, its floor on by default."""
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    from test_mcp import _call, _server

    monkeypatch.delenv("EIDETIC_EMBEDDER", raising=False)

    async def session() -> None:
        async with stdio_client(_server(dict(os.environ))) as streams, ClientSession(*streams) as agent:
            await agent.initialize()
            records = [{"id": name, "text": MEMORIES[name]} for name in STORES[5]]
            await _call(agent, "remember", records=records)
            found = await _call(agent, "recall", query="how do we restore the database", record=False)
            assert found["items"][0]["id"] == "restore" and found["relevance_floor"] == 1.0
            unrelated = await _call(agent, "recall", query="recipe for banana bread", record=False)
            assert unrelated["items"] == [] and unrelated["below_floor"] >= 1

    anyio.run(session)
