"""The viewer's reading pages (search, record, browse, overview) over the real app and a real
store: what each shows, on every backend for the main paths, and that they follow the store
as it changes (hand edits, other writers) without a restart."""

from __future__ import annotations

import pytest

from conftest import rec
from eidetic import Memory
from eidetic.records import Record
from web_client import hit_ids, page, row_ids, served

RECORDS = [
    {"id": "old-day", "text": "Deploys used to run on Mondays"},
    {
        "id": "deploy-day",
        "name": "Deploy day",
        "type": "lesson",
        "text": "Deploys run on **Tuesdays** after the standup.\n\n<script>alert('x')</script> [go](javascript:alert(1))",
        "links": ["deploy-key", "gone"],
        "supersedes": "old-day",
        "metadata": {"source": "retro", "priority": 2},
    },
    {"id": "deploy-key", "text": "The deploy key rotates monthly", "links": ["deploy-day"]},
]
FACTS = (".score", ".signal", ".type", ".scope", ".lifecycle", ".created", ".updated", ".recall_count", ".last_recall")


@pytest.fixture
def notes(store, monkeypatch):
    """The files backend with RECORDS, no embedder (hybrid ranks by keyword)."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    seed()
    return store


def seed() -> None:
    with Memory.open() as memory:
        memory.remember(RECORDS)
        memory.remember([{"id": "mine", "text": "my own deploy notes"}], scope="me", visibility="private")


def test_search_shows_each_hit_with_its_facts_on_every_backend(backend):
    seed()
    with served() as client:
        found = client.get("/", params={"q": "tuesdays standup", "mode": "keyword"})
        assert found.status_code == 200
        hits = page(found).select("#results li.hit")
        assert [li["data-id"] for li in hits] == ["deploy-day", "deploy-key"]
        first = hits[0]
        assert first.select_one("a.id")["href"] == "/record?id=deploy-day"
        assert all(first.select_one(fact) is not None for fact in FACTS)
        assert first.select_one(".scope").text == "default/public" and first.select_one(".type").text == "lesson"
        assert [m.text for m in first.select("p.text mark")] == ["Tuesdays", "standup"]
        assert "&lt;script&gt;" in str(first.select_one("p.text"))  # the text as text
        assert [li["data-id"] for li in page(found).select("li.hit.linked")] == ["deploy-key"]
        assert hit_ids(client.get("/", params={"q": "ROTATES", "mode": "exact", "depth": 0})) == ["deploy-key"]
        assert hit_ids(client.get("/", params={"q": "ROTATES", "mode": "exact", "case_sensitive": "1"})) == []
        assert hit_ids(client.get("/", params={"q": "my own", "mode": "exact"})) == []  # me/private: not here


def test_the_form_is_plain_html_and_htmx_gets_only_the_results(notes):
    with served() as client:
        home = page(client.get("/"))
        form = home.select_one("form#search")
        assert (form["method"], form["action"], form["hx-get"], form["hx-push-url"]) == ("get", "/", "/", "true")
        assert form["hx-target"] == "#results" and home.select_one("section#results") is not None
        names = {field["name"] for field in form.select("[name]")}
        assert {"q", "mode", "top_k", "types", "filters", "source", "since", "until", "depth"} <= names
        assert {"include_archived", "include_shadowed", "case_sensitive"} <= names
        assert [o["value"] for o in form.select("select[name=mode] option")] == [
            "exact",
            "keyword",
            "approximate",
            "hybrid",
            "fields",
        ]
        assert [a["href"] for a in home.select("nav a")][1:] == ["/", "/browse", "/overview"]
        assert home.select_one("span.session").text == "default/public"
        fragment = client.get("/?q=rotates&mode=keyword", headers={"HX-Request": "true", "HX-Target": "results"})
        assert "<html" not in fragment.text and hit_ids(fragment) == ["deploy-key", "deploy-day"]
        restore = client.get(
            "/?q=rotates", headers={"HX-Request": "true", "HX-Target": "results", "HX-History-Restore-Request": "true"}
        )
        assert "<html" in restore.text  # a history restore gets the whole page
        headers = fragment.headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["referrer-policy"] == "no-referrer" and headers["cache-control"] == "no-store"


def test_filters_depth_and_the_hint_for_hidden_records(notes):
    with Memory.open() as memory:
        memory.set_lifecycle("deploy-key", "archived")
    with served() as client:
        lessons = "/?q=deploys&mode=keyword&types=lesson&include_shadowed=1"
        assert hit_ids(client.get(lessons)) == ["deploy-day", "old-day"]  # old-day: what it supersedes, linked
        assert hit_ids(client.get(lessons + "&depth=0")) == ["deploy-day"]
        assert hit_ids(client.get("/?q=deploys&mode=keyword&depth=0&filters=priority>=2")) == ["deploy-day"]
        assert hit_ids(client.get("/?q=deploys&mode=keyword&depth=0&source=nowhere")) == []
        assert hit_ids(client.get("/?q=deploys&mode=keyword&depth=0&since=2999-01-01")) == []
        assert hit_ids(client.get("/?q=deploys&mode=keyword&depth=0&include_shadowed=1")) == ["deploy-day", "old-day"]
        assert hit_ids(client.get("/?q=deploys&mode=fields&depth=0")) == ["deploy-day"]
        hidden = page(client.get("/?q=rotates&mode=keyword"))
        empty = hidden.select_one("p.empty")
        assert "1 archived record would match" in " ".join(empty.text.split())
        wider = empty.select_one("a")["href"]
        assert "include_archived=1" in wider and hit_ids(client.get(wider)) == ["deploy-key", "deploy-day"]
        assert hit_ids(client.get("/?q=&types=lesson&mode=fields")) == ["deploy-day"]  # browse a type


def test_the_relevance_floor_switch_and_its_empty_answer(notes):
    with served() as client:
        assert page(client.get("/")).select_one("input[name=relevance_floor]")["type"] == "checkbox"
        query = "/?q=deploys+of+yeast+protein+assays&mode=keyword&depth=0"
        everything = hit_ids(client.get(query))
        assert sorted(everything) == ["deploy-day", "deploy-key"]  # old-day is superseded: shadowed
        empty = page(client.get(query + "&relevance_floor=1")).select_one("p.empty")
        assert "Nothing relevant: 2 hits fell below the relevance floor" in " ".join(empty.text.split())
        assert hit_ids(client.get(empty.select_one("a")["href"])) == everything  # the link turns it off
        kept = page(client.get("/?q=deploy+key+rotates+monthly&mode=keyword&depth=0&relevance_floor=1"))
        assert [li["data-id"] for li in kept.select("li.hit")] == ["deploy-key"]
        assert "1 below the relevance floor" in kept.select_one("p.count").text


def test_bad_input_is_a_400_with_the_message_and_hint(notes):
    with served() as client:
        for query, message in (
            ("q=x&top_k=zero", "top_k must be an integer >= 1 (got 'zero')"),
            ("q=x&mode=psychic", "mode must be one of"),
            ("q=x&filters=nonsense", "filters entry 'nonsense' is malformed"),
            ("q=x&since=soonish", "since is not a date"),
            ("q=x&relevance_floor=high", "relevance_floor must be auto, off or a number >= 0"),
        ):
            answer = client.get(f"/?{query}")
            alert = page(answer).select_one("div.error[role=alert]")
            assert answer.status_code == 400 and message in alert.select_one(".message").text, query
            assert alert.select_one(".hint").text
        fragment = client.get("/?q=x&top_k=0", headers={"HX-Request": "true", "HX-Target": "results"})
        assert fragment.status_code == 400 and "<html" not in fragment.text and "top_k" in fragment.text


def test_a_search_here_is_not_a_recall_unless_asked(notes, monkeypatch):
    monkeypatch.setenv("EIDETIC_MODE", "keyword")
    with served() as client:
        home = page(client.get("/"))
        assert home.select_one("select[name=mode] option[selected]")["value"] == "keyword"  # your default mode
        client.get("/?q=rotates&depth=0")
        assert page(client.get("/record?id=deploy-key")).select_one("#usage .recall_count").text == "0"
        client.get("/?q=rotates&depth=0&record=1")
        assert page(client.get("/?q=rotates&depth=0")).select_one("li.hit .recall_count").text == "recalled 1×"
        usage = page(client.get("/record?id=deploy-key")).select_one("#usage")
        assert usage.select_one(".recall_count").text == "1" and usage.select_one(".last_recall").text != "never"
        assert "not a history" in usage.text


def test_the_record_page_on_every_backend(backend):
    seed()
    with served() as client:
        shown = client.get("/record?id=deploy-day")
        assert shown.status_code == 200
        article = page(shown).select_one("article.record[data-id=deploy-day]")
        assert article.select_one("h1").text == "Deploy day"
        text = article.select_one("div.text")
        assert text.select_one("strong").text == "Tuesdays"
        assert text.select_one("script") is None and "<script>alert('x')</script>" in text.text
        assert text.select("a") == []  # the javascript: link is text, not a link
        metadata = article.select_one("dl.metadata").text
        assert "lesson" in metadata and "retro" in metadata and "priority" in metadata
        path = article.select_one("code.path")
        assert (path is not None) == (backend == "files")
        if path is not None:
            assert path.text.endswith("deploy-day.md")
        links_out = article.select("#links-out li")
        assert links_out[0].select_one("a")["href"] == "/record?id=deploy-key"
        assert links_out[1].select_one(".unseen").text == "not found" and links_out[1].select("a") == []
        assert [a["href"] for a in article.select("#links-in a")] == ["/record?id=deploy-key"]
        assert [a["href"] for a in article.select("#supersedes a")] == ["/record?id=old-day"]
        older = page(client.get("/record?id=old-day"))
        assert older.select_one("#supersedes li.newer a")["href"] == "/record?id=deploy-day"
        assert older.select_one("dd.lifecycle").text == "shadowed"
        assert article.select_one("a#edit")["href"] == "/record/edit?id=deploy-day"
        assert article.select_one("a#supersede")["href"] == "/record/supersede?id=deploy-day"
        assert article.select_one("form#forget")["action"] == "/record/forget"
        missing = client.get("/record?id=nope")
        assert missing.status_code == 404 and "no record 'nope' in reach" in page(missing).select_one(".message").text
        assert client.get("/record?id=mine").status_code == 404  # me/private: as if missing


def test_odd_ids_travel_in_the_query_string(notes):
    odd = "../etc/passwd x/ü?&#=%"
    with Memory.open() as memory:
        memory.remember([{"id": odd, "text": "an odd id", "links": ["deploy-key"]}])
    with served() as client:
        found = page(client.get("/?q=odd&mode=keyword"))
        href = found.select_one(f'li.hit[data-id="{odd}"] a.id')["href"]
        assert href.startswith("/record?id=") and "/etc" not in href
        shown = page(client.get(href))
        assert shown.select_one("article.record")["data-id"] == odd
        assert shown.select_one("a#edit")["href"].startswith("/record/edit?id=..%2Fetc")


def test_browse_by_type_scope_lifecycle_and_date_on_every_backend(backend):
    seed()
    with Memory.open() as memory:
        memory.set_lifecycle("deploy-key", "archived")
        memory.remember([{"id": "theirs", "text": "their public note", "type": "lesson"}], scope="team")
    with served("me", "private") as client:
        everything = client.get("/browse?lifecycle=all&sort=name")
        assert everything.status_code == 200
        assert row_ids(everything) == ["deploy-day", "old-day", "mine", "deploy-key", "theirs"]
        assert page(everything).select_one("p.total .n").text == "5"
        assert row_ids(client.get("/browse")) == ["theirs", "mine", "deploy-day"]  # active, newest first
        assert row_ids(client.get("/browse?lifecycle=archived")) == ["deploy-key"]
        assert row_ids(client.get("/browse?types=lesson&sort=name")) == ["deploy-day", "theirs"]
        assert row_ids(client.get("/browse?scope=team")) == ["theirs"]
        assert row_ids(client.get("/browse?scope=me")) == ["mine"]
        assert row_ids(client.get("/browse?since=2999-01-01")) == []
        row = page(client.get("/browse?scope=me")).select_one("tr.record")
        assert row.select_one("a.id")["href"] == "/record?id=mine" and row.select_one(".scope").text == "me/private"


def test_browse_pages_and_sorts(notes):
    with Memory.open() as memory:
        memory.remember([{"id": f"n{i:02}", "text": f"note number {i}"} for i in range(7)])
    with served() as client:
        first = page(client.get("/browse?sort=name&limit=4"))
        assert [tr["data-id"] for tr in first.select("tr.record")] == ["deploy-day", "n00", "n01", "n02"]
        assert first.select_one("a.prev") is None and "1–4 of" in first.select_one("p.total").text
        second = page(client.get(first.select_one("a.next")["href"]))
        assert [tr["data-id"] for tr in second.select("tr.record")] == ["n03", "n04", "n05", "n06"]
        last = page(client.get(second.select_one("a.next")["href"]))
        assert [tr["data-id"] for tr in last.select("tr.record")] == ["deploy-key"] and last.select_one(
            "a.next"
        ) is None
        back = page(client.get(last.select_one("a.prev")["href"]))
        assert [tr["data-id"] for tr in back.select("tr.record")][0] == "n03"
        header = {a.text: a["href"] for a in first.select("thead a")}
        assert "reverse=1" in header["name / text"]  # sorted by name: its header reverses
        reverse = page(client.get(header["name / text"]))
        assert reverse.select_one("tr.record")["data-id"] == "deploy-key"
        assert client.get("/browse?limit=5000").status_code == 400
        assert client.get("/browse?lifecycle=deleted").status_code == 400
        assert client.get("/browse?sort=size").status_code == 400


def test_overview_counts_usage_audit_and_recent_changes(notes):
    with Memory.open() as memory:
        memory.remember([{"id": "ref", "text": "See src/missing_module.py for the deploy script"}])
        memory.recall("rotates", mode="keyword", depth=0)
        memory.set_lifecycle("deploy-day", "archived")
    with served() as client:
        shown = page(client.get("/overview"))
        counts = shown.select_one("section#counts")
        assert counts.select_one(".by-lifecycle .n.active").text == "2"
        assert counts.select_one(".by-lifecycle .n.archived").text == "1"
        assert counts.select_one(".by-lifecycle .n.shadowed").text == "1"
        assert "lesson 1" in counts.text and "note 3" in counts.text
        assert [tr.select_one("a").text for tr in counts.select("tr.scope")] == ["default/public"]  # not me/private
        most = shown.select("section#most-recalled li[data-id]")
        assert [li["data-id"] for li in most] == ["deploy-key"]
        assert [li["data-id"] for li in shown.select("section#never-recalled li[data-id]")] == ["ref"]
        assert shown.select_one("section#never-recalled h2 .n").text == "1"
        audit = shown.select_one("section#audit")
        assert [li["data-id"] for li in audit.select("li[data-id]")] == ["ref"]
        assert "dead-reference" in audit.select_one("li").text and "src/missing_module.py" in audit.text
        recent = [li["data-id"] for li in shown.select("section#recent li[data-id]")]
        assert recent[0] == "ref" and set(recent) == {"deploy-day", "ref", "deploy-key", "old-day"}  # every state


def test_pages_follow_hand_edits_and_other_writers_without_a_restart(notes):
    with served() as client:
        assert hit_ids(client.get("/?q=kiln&mode=keyword")) == []
        path = rec(notes, "by-hand")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\nid: by-hand\ntype: note\n---\n\nThe kiln fires at cone 6\n", encoding="utf-8")
        assert hit_ids(client.get("/?q=kiln&mode=keyword")) == ["by-hand"]
        assert "by-hand" in row_ids(client.get("/browse"))
        with Memory.open() as other:  # another writer, its own Memory
            other.remember([Record(id="kiln-2", text="The kiln needs a new element")])
            other.set_lifecycle("by-hand", "archived")
        assert hit_ids(client.get("/?q=kiln&mode=keyword")) == ["kiln-2"]
        assert page(client.get("/record?id=by-hand")).select_one("dd.lifecycle").text == "archived"
        path.write_text("---\nid: by-hand\ntype: note\nlifecycle: archived\n---\n\nThe glaze cracked\n")
        assert "glaze cracked" in page(client.get("/record?id=by-hand")).select_one("div.text").text


def test_searching_by_meaning_with_the_real_model(store):
    with Memory.open() as memory:
        memory.remember(
            [
                {"id": "cat", "text": "The cat sat on the mat."},
                {"id": "stocks", "text": "The stock market fell sharply after the rate announcement."},
            ]
        )
    with served() as client:
        approx = page(client.get("/?q=a kitten lying on a carpet&mode=approximate&depth=0"))
        assert [li["data-id"] for li in approx.select("li.hit")] == ["cat", "stocks"]
        assert approx.select("mark") == [] and approx.select(".warning") == []  # by meaning: no words to mark
        hybrid = page(client.get("/?q=cat on a rug&mode=hybrid&depth=0"))
        assert hybrid.select_one("li.hit")["data-id"] == "cat"
        assert [m.text for m in hybrid.select("li.hit mark")] == ["cat"]


def test_without_an_embedder_the_page_says_so(notes):
    with served() as client:
        warned = page(client.get("/?q=deploy&mode=hybrid"))
        assert "semantic recall unavailable" in warned.select_one("p.warning").text and warned.select("li.hit")
