"""The viewer in a real browser: Debian's headless Chromium, driven through Selenium, against a
real ``eidetic serve`` (files backend, ``--token`` as on a team host) for session team/private.

The flows people use: search (highlighted words, the mode switch), open a record, follow its
links, edit (and a refused edit), forget and restore with confirmation, browse and the overview;
the scope rule in everything the browser is sent (alice's private records never appear, not
even after searching for words only they hold); reading with JavaScript off.

``EIDETIC_SCREENSHOTS=docs/viewer`` also saves the screenshots docs/viewer.md shows."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from serve_process import Served, seed, serve, store_env

pytestmark = pytest.mark.server  # a headless Chromium

WINDOW = (1280, 800)  # a laptop's screen; screenshots stay small
PHONE = (390, 844)  # a phone's screen (CSS pixels)
WAIT = 20  # seconds, for an element to appear: a wait ends as soon as it does

TEAM, TEAM_PRIVATE = {"name": "team", "visibility": "public"}, {"name": "team", "visibility": "private"}
ALICE_PRIVATE = {"name": "alice", "visibility": "private"}
ODD_ID = "runbook/café ops 2026"  # an id with a slash, a space and an accent: it travels in ?id=
RECORDS = [
    {
        "id": "old-deploy",
        "name": "Deploy day (until 2025)",
        "text": "Deploys ran on Fridays, before the freeze.",
        "scope": TEAM,
        "created": "2025-01-10T09:00:00Z",
    },
    {
        "id": "deploy-day",
        "name": "Deploy day",
        "type": "decision",
        "text": "Deploys run on **Tuesdays**, after the standup.\n\n- tag the release\n- run the migrations",
        "scope": TEAM,
        "supersedes": "old-deploy",
        # alice's private record and a missing one: both "not found", alike (existence is not told)
        "links": ["standup", "alice-diary", "gone-record"],
        "metadata": {"source": "retro"},
    },
    {"id": "standup", "text": "The standup is at 09:30; deploy questions go there.", "scope": TEAM, "links": [ODD_ID]},
    {"id": ODD_ID, "text": "The café runbook: restart the espresso queue first.", "scope": TEAM},
    {"id": "vault", "text": "The team vault rotates its keys quarterly.", "scope": TEAM_PRIVATE},
    {"id": "kiln", "text": "The kiln fires at cone 6 on Thursdays.", "scope": TEAM},
    {"id": "printer", "text": "The old printer is on floor 3.", "scope": TEAM},
    {"id": "alice-diary", "text": "Alice's kumquat jam needs saffron.", "scope": ALICE_PRIVATE},
    {"id": "alice-plan", "text": "Alice plans the kumquat harvest.", "scope": ALICE_PRIVATE, "links": ["deploy-day"]},
    *[
        {
            "id": f"lunch-{i}",
            "text": text,
            "type": "chat",
            "scope": TEAM,
            "metadata": {"thread": "lunch"},
            "created": f"2026-03-02T12:0{i}:00Z",
        }
        for i, text in enumerate(
            ["Where shall we eat on Friday?", "The noodle bar on Elm street.", "Booked for noon, six of us."], 1
        )
    ],
    {
        "id": "alice-lunch",  # her aside, between two team turns: never shown to the team
        "text": "Alice skips lunch for the harvest.",
        "type": "chat",
        "scope": ALICE_PRIVATE,
        "metadata": {"thread": "lunch"},
        "created": "2026-03-02T12:02:30Z",
    },
]
# Anything of alice's private records. alice-plan links to deploy-day: its id would show only if
# the links in leaked; alice-diary is named by deploy-day's own links, so its record page and edit
# form show that name, as that record's author wrote it (and as for a missing id).
NEVER_SENT = ("alice-diary", "alice-plan", "alice-lunch", "saffron", "harvest", "Alice")


def chromium_paths() -> tuple[str, str]:
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    return browser, driver


def chromium(*extra: str) -> WebDriver:
    """A headless Chromium of a fixed size, started from the Debian packages (no download)."""
    browser, driver = chromium_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", *extra):
        options.add_argument(argument)
    options.add_argument(f"--window-size={WINDOW[0]},{WINDOW[1]}")
    return webdriver.Chrome(options=options, service=Service(driver))


@pytest.fixture(scope="module")
def viewer(tmp_path_factory) -> Iterator[tuple[Served, dict[str, str]]]:
    chromium_paths()
    env = store_env(tmp_path_factory.mktemp("viewer"))
    seed(env, RECORDS)
    served = serve(env, "--token", "--scope", "team", "--visibility", "private")
    yield served, env
    served.stop()


def signed_in(served: Served, driver: WebDriver) -> WebDriver:
    """The browser opens the URL ``eidetic serve`` printed: a cookie, and the token out of the address."""
    driver.get(f"{served.base}/?token={served.token}")
    find(driver, "form#search")
    assert driver.current_url == f"{served.base}/", driver.current_url
    return driver


@pytest.fixture(scope="module")
def browser(viewer) -> Iterator[Any]:
    driver = signed_in(viewer[0], chromium())
    yield Page(driver, viewer[0].base)
    driver.quit()


@pytest.fixture(scope="module")
def no_script(viewer) -> Iterator[Any]:
    driver = signed_in(viewer[0], chromium("--blink-settings=scriptEnabled=false"))
    yield Page(driver, viewer[0].base)
    driver.quit()


def find(driver: WebDriver, css: str) -> WebElement:
    """The element, once the page has it."""
    try:
        return WebDriverWait(driver, WAIT).until(lambda d: d.find_element(By.CSS_SELECTOR, css))
    except TimeoutException:
        raise AssertionError(f"no {css} on {driver.current_url}:\n{driver.page_source[:3000]}") from None


class Page:
    """One browser on the viewer, with the steps a person takes."""

    def __init__(self, driver: WebDriver, base: str) -> None:
        self.driver, self.base = driver, base

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def find(self, css: str) -> WebElement:
        return find(self.driver, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def until(self, what: Callable[[], Any], described: str) -> Any:
        """Wait for ``what()`` to hold; say what was there instead when it never does."""
        try:
            return WebDriverWait(self.driver, WAIT).until(lambda _: what())
        except TimeoutException:
            raise AssertionError(f"{described}: not on {self.driver.current_url}") from None

    def changes(self, act: Callable[[], None], css: str) -> WebElement:
        """Do ``act`` and wait for the page (or, with htmx, the swapped part) to be replaced:
        a marker put in ``css`` is gone once the new content is there."""
        self.driver.execute_script(
            "document.querySelector(arguments[0]).insertAdjacentHTML('beforeend', '<i id=stale></i>')", css
        )
        act()
        self.until(lambda: not self.all("#stale"), f"{css} replaced")
        return self.find(css)

    def search(self, query: str, mode: str | None = None) -> list[str]:
        """Type the query, pick the mode, submit; the primary hits' ids."""
        if not self.all("#results"):
            self.open("/")
        form = self.find("form#search")
        box = form.find_element(By.NAME, "q")
        box.clear()
        box.send_keys(query)
        if mode is not None:
            choose(form, "mode", mode)
        self.changes(lambda: form.find_element(By.CSS_SELECTOR, "[type=submit]").click(), "#results")
        self.until(lambda: self.settled(query, mode), f"the results of {query!r} ({mode})")
        return self.hits()

    def settled(self, query: str, mode: str | None) -> bool:
        """The results shown are this search's: no request in flight (htmx may send one for each
        changed field, then the submit) and the address names the query (htmx pushes it)."""
        if self.driver.execute_script("return document.querySelector('.htmx-request') !== null"):
            return False
        shown = parse_qs(urlsplit(self.driver.current_url).query)
        return shown.get("q") == [query] and (mode is None or shown.get("mode") == [mode])

    def hits(self, linked: bool = False) -> list[str]:
        css = "li.hit.linked" if linked else "li.hit:not(.linked)"
        return [hit.get_attribute("data-id") for hit in self.all(f"#results {css}")]

    def record(self, rid: str) -> WebElement:
        """The record page of ``rid``, once shown."""
        return self.find(f'article.record[data-id="{css_string(rid)}"]')

    def follow(self, css: str, rid: str) -> WebElement:
        self.find(css).click()
        return self.record(rid)

    def confirm(self, action: str, rid: str) -> WebElement:
        """Forget or restore from the record page: the button, then the confirmation page."""
        self.find(f"form#{action} [type=submit]").click()
        self.find("form#confirm [type=submit]").click()
        return self.record(rid)

    def shot(self, name: str) -> None:
        """A screenshot for docs/viewer.md, when EIDETIC_SCREENSHOTS names where."""
        if folder := os.environ.get("EIDETIC_SCREENSHOTS"):
            Path(folder).mkdir(parents=True, exist_ok=True)
            assert self.driver.save_screenshot(str(Path(folder) / f"{name}.png"))

    def fits(self) -> None:
        """The page is no wider than the window: nothing to scroll sideways."""
        wide, window = self.driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert wide <= window, (self.driver.current_url, wide, window)

    def never_sent_alices_records(self, *shown: str) -> None:
        """Nothing of alice's private records in what the browser was sent, but the words
        ``shown`` that the request or a public record itself names (an error page repeats the
        id asked for)."""
        source = self.driver.page_source
        for word in set(NEVER_SENT) - set(shown):
            assert word not in source, (word, self.driver.current_url)


def choose(form: WebElement, name: str, value: str) -> None:
    """Pick ``value`` in the form's ``name`` control, a select or radio buttons."""
    control = form.find_element(By.NAME, name)
    if control.tag_name == "select":
        Select(control).select_by_value(value)
    else:
        form.find_element(By.CSS_SELECTOR, f'[name="{name}"][value="{value}"]').click()


def css_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def test_search_highlights_the_words_and_switches_mode(browser):
    assert browser.search("deploys run", mode="keyword")[:1] == ["deploy-day"]
    assert {"deploy-day", "standup"} <= set(browser.hits())  # keyword: deploy, deploys, stemmed
    marks = [m.text.lower() for m in browser.all('#results li.hit[data-id="deploy-day"] mark')]
    assert {"deploys", "run"} <= set(marks), marks
    browser.shot("search")
    assert browser.search("Deploys run", mode="exact") == ["deploy-day"]  # verbatim: "Deploys ran" is not it
    assert "standup" in browser.hits(linked=True)  # the hit's link, traversed
    form = browser.find("form#search")
    assert form.find_element(By.NAME, "q").get_attribute("value") == "Deploys run"
    hit = browser.find('#results li.hit[data-id="deploy-day"]').text
    for shown in ("decision", "team", "active"):
        assert shown in hit, hit
    browser.search("zymurgy", mode="keyword")
    assert browser.find("#results p.empty").text


def test_a_record_page_and_its_links(browser):
    browser.search("tuesdays", mode="keyword")
    page = browser.follow('#results li.hit[data-id="deploy-day"] a.id', "deploy-day")
    assert page.find_element(By.TAG_NAME, "h1").text == "Deploy day"
    text = page.find_element(By.CSS_SELECTOR, "div.text")
    assert text.find_element(By.TAG_NAME, "strong").text == "Tuesdays"  # markdown, rendered
    assert [li.text for li in text.find_elements(By.TAG_NAME, "li")] == ["tag the release", "run the migrations"]
    metadata = page.find_element(By.CSS_SELECTOR, "dl.metadata").text
    assert "decision" in metadata and "retro" in metadata
    assert page.find_element(By.CSS_SELECTOR, "code.path").text.endswith("deploy-day.md")
    assert page.find_elements(By.CSS_SELECTOR, '#links-out a[href$="/record?id=standup"]')
    unseen = [
        li.get_attribute("innerHTML")
        for li in browser.all("#links-out li")
        if "unseen" in li.get_attribute("innerHTML")
    ]
    assert len(unseen) == 2 and unseen[0].replace("alice-diary", "ID") == unseen[1].replace("gone-record", "ID")
    assert browser.all("#supersedes a[href$='/record?id=old-deploy']")
    assert browser.find("section#usage")
    browser.shot("record")
    browser.never_sent_alices_records("alice-diary")

    standup = browser.follow('#links-out a[href$="/record?id=standup"]', "standup")
    assert "09:30" in standup.find_element(By.CSS_SELECTOR, "div.text").text
    assert browser.all('#links-in a[href$="/record?id=deploy-day"]')
    odd = browser.follow("#links-out a", ODD_ID)  # a slash, a space and an accent in the id
    assert "espresso queue" in odd.find_element(By.CSS_SELECTOR, "div.text").text
    browser.follow('#links-in a[href$="/record?id=standup"]', "standup")
    browser.open("/record?id=old-deploy")
    assert browser.all('#supersedes a[href$="/record?id=deploy-day"]')  # the chain, both ways


def edited(page: Page, rid: str) -> WebElement:
    """The edit form of ``rid``, reached from its record page."""
    page.open(f"/record?id={rid}")
    page.find("a#edit").click()
    return page.find("form#edit textarea#editor")


def retype(editor: WebElement, text: str) -> None:
    editor.clear()
    editor.send_keys(text)


def test_edit_a_record_and_a_refused_edit_keeps_the_typed_text(browser, viewer):
    editor = edited(browser, "kiln")
    before = editor.get_attribute("value")
    assert before.startswith("---\n") and "cone 6" in before
    browser.shot("edit")
    retype(editor, before.replace("cone 6", "cone 10"))
    browser.find("#save").click()
    page = browser.record("kiln")
    assert page.find_element(By.CSS_SELECTOR, "div.text").text == "The kiln fires at cone 10 on Thursdays."

    editor = edited(browser, "kiln")
    wrong = editor.get_attribute("value").replace("id: kiln", "id: kiln-two").replace("cone 10", "cone 11")
    retype(editor, wrong)
    browser.find("#save").click()
    error = browser.find("form#edit ~ .error, .error")
    assert "the id cannot be changed" in error.text
    assert browser.find("textarea#editor").get_attribute("value") == wrong  # nothing typed is lost

    # another writer changes the record while the form is open: the save is refused, not lost
    editor = edited(browser, "kiln")
    mine = editor.get_attribute("value").replace("cone 10", "cone 12")
    seed(viewer[1], [{"id": "kiln", "text": "The kiln fires at cone 8 now.", "scope": TEAM}])
    retype(browser.find("textarea#editor"), mine)
    browser.find("#save").click()
    assert browser.find(".error").text
    assert browser.find("textarea#editor").get_attribute("value") == mine
    browser.open("/record?id=kiln")
    assert browser.record("kiln").find_element(By.CSS_SELECTOR, "div.text").text == "The kiln fires at cone 8 now."


def test_forget_and_restore_with_confirmation(browser):
    assert browser.search("printer", mode="keyword") == ["printer"]
    browser.follow('#results li.hit[data-id="printer"] a.id', "printer")
    browser.confirm("forget", "printer")
    assert browser.find("form#restore") and not browser.all("form#forget")
    assert "archived" in browser.find("dl.metadata").text
    assert browser.search("printer", mode="keyword") == []
    hidden = re.sub(r"[- ]", "_", browser.find("#results p.empty").get_attribute("innerHTML").lower())
    assert "include_archived" in hidden, hidden  # it says how to see the forgotten record
    browser.open("/record?id=printer")
    browser.confirm("restore", "printer")
    assert browser.find("form#forget") and not browser.all("form#restore")
    assert browser.search("printer", mode="keyword") == ["printer"]


def test_browse_and_overview(browser):
    browser.open("/browse")
    table = browser.find("table#records")
    shown = {row.get_attribute("data-id") for row in table.find_elements(By.CSS_SELECTOR, "tr.record")}
    assert {"deploy-day", "standup", ODD_ID, "vault", "kiln"} <= shown  # the session's own private one too
    browser.shot("browse")
    browser.never_sent_alices_records()
    browser.open("/browse?limit=2")
    first = [row.get_attribute("data-id") for row in browser.all("tr.record")]
    assert len(first) == 2
    browser.find("a.next").click()
    browser.until(lambda: browser.all("a.prev"), "the second page")
    second = [row.get_attribute("data-id") for row in browser.all("tr.record")]
    assert len(second) == 2 and not set(first) & set(second)

    browser.open("/overview")
    for section in ("counts", "most-recalled", "never-recalled", "audit", "recent"):
        assert browser.find(f"section#{section}")
    counts = browser.find("section#counts").text
    assert "team" in counts and "alice" not in counts  # another scope's private records: not even counted
    browser.shot("overview")
    browser.never_sent_alices_records()


def test_nothing_of_another_scopes_private_records_reaches_the_browser(browser):
    for mode in ("keyword", "exact", "hybrid", "fields", "approximate"):
        assert browser.search("kumquat", mode=mode) == [], mode
        empty = browser.find("#results p.empty").text
        assert not re.search(r"\d", empty), empty  # no count of what matched out of reach
        browser.never_sent_alices_records()
    browser.search("kumquat jam saffron harvest", mode="keyword")
    assert browser.all("#results p.empty")
    messages = []
    for rid in ("alice-diary", "no-such-record"):
        browser.open(f"/record?id={rid}")
        messages.append(browser.find(".error .message").text.replace(rid, "ID"))
        browser.never_sent_alices_records(rid)
    assert messages[0] == messages[1]  # out of reach and missing: the same page
    for path, shown in [
        ("/record?id=deploy-day", "alice-diary"),
        ("/record/edit?id=deploy-day", "alice-diary"),
        ("/browse?scope=alice", ""),
        ("/browse?lifecycle=archived", ""),
        ("/overview", ""),
        ("/record/edit?id=alice-plan", "alice-plan"),
        ("/record/supersede?id=alice-plan", "alice-plan"),
    ]:
        browser.open(path)
        browser.find("span.session")
        browser.never_sent_alices_records(shown)
    assert browser.find("span.session").text == "team/private"


def test_a_foreign_page_cannot_make_the_browser_change_anything(viewer):
    """What a browser sends when another site's page posts a form to the viewer: the person's
    cookie, and where the post came from. Refused, and the record stays."""
    served, _ = viewer
    with httpx.Client(base_url=served.base, cookies=served.cookies, timeout=30) as browser:
        for came_from in (
            {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
            {"Sec-Fetch-Site": "same-site", "Origin": f"http://127.0.0.1:{served.base.rsplit(':', 1)[1]}0"},
            {"Origin": "https://evil.example"},  # a browser without Sec-Fetch-Site
        ):
            answer = browser.post("/record/forget", data={"id": "standup", "confirm": "yes"}, headers=came_from)
            assert answer.status_code == 403, (came_from, answer.text)
        page = browser.get("/record", params={"id": "standup"})
        assert page.status_code == 200 and 'id="forget"' in page.text  # still active


def test_reading_works_with_javascript_off(no_script):
    no_script.open("/")
    assert no_script.driver.execute_script("return typeof window.htmx") == "undefined"  # scripts do not run
    assert no_script.search("tuesdays", mode="keyword") == ["deploy-day"]
    assert "q=tuesdays" in no_script.driver.current_url  # a plain form submission
    assert no_script.all('#results li.hit[data-id="deploy-day"] mark')
    no_script.follow('#results li.hit[data-id="deploy-day"] a.id', "deploy-day")
    no_script.follow('#links-out a[href$="/record?id=standup"]', "standup")
    no_script.never_sent_alices_records()


def test_the_viewer_opens_on_a_place_to_start(browser):
    browser.open("/")
    home = browser.find("#home")
    assert [li.get_attribute("data-id") for li in home.find_elements(By.CSS_SELECTOR, "#home-recent li[data-id]")]
    counts = browser.find("#home-counts").text
    assert "chat" in counts and "team/private" in counts and "alice" not in counts
    assert browser.find("#home-never li[data-id]")
    browser.shot("home")
    browser.never_sent_alices_records()
    # a type is picked from a list; before any words, the home page offers to browse them
    form = browser.find("form#search")
    form.find_element(By.CSS_SELECTOR, "details.more summary").click()
    types = [o.get_attribute("value") for o in form.find_elements(By.CSS_SELECTOR, "select[name=types] option")]
    assert {"chat", "decision", "note"} <= set(types) and "" in types
    browser.changes(lambda: choose(form, "types", "chat"), "#results")
    browser.find("#results a#browse-picked").click()
    rows = browser.until(lambda: browser.all("table#records tr.record"), "the chat records")
    assert {row.get_attribute("data-id") for row in rows} == {"lunch-1", "lunch-2", "lunch-3"}
    assert browser.search("noodle", mode="keyword")[:1] == ["lunch-2"]  # then its neighbours, by context


def test_a_chat_turn_is_shown_among_its_neighbours(browser):
    browser.search("noodle bar", mode="keyword")
    page = browser.follow('#results li.hit[data-id="lunch-2"] a.id', "lunch-2")
    turns = page.find_elements(By.CSS_SELECTOR, "#thread li.turn")
    assert [li.get_attribute("data-id") for li in turns] == ["lunch-1", "lunch-2", "lunch-3"]
    assert "current" in turns[1].get_attribute("class")
    browser.driver.execute_script("document.querySelector('#thread').scrollIntoView()")
    browser.shot("thread")
    browser.never_sent_alices_records()
    browser.follow('#thread li.turn[data-id="lunch-3"] a.id', "lunch-3")


@pytest.mark.parametrize("size", [PHONE, WINDOW], ids=["phone", "laptop"])
def test_every_page_fits_a_phone_and_a_laptop_without_scrolling_sideways(browser, size):
    browser.driver.set_window_size(*size)
    try:
        browser.until(
            lambda: abs(browser.driver.execute_script("return window.innerWidth") - size[0]) <= 16, "the window resized"
        )
        phone = size == PHONE
        for path, css, shot in (
            ("/", "#home", "home"),
            ("/?q=deploy+runbook+kiln&mode=keyword", "#results li.hit", "search"),
            ("/browse", "table#records tr.record", "browse"),
            (f"/record?id={quote('lunch-2')}", "#thread", None),
            ("/record?id=deploy-day", "#connections", None),
            ("/overview", "section#counts", None),
        ):
            browser.open(path)
            browser.find(css)
            browser.fits()
            if phone and shot:
                browser.shot(f"{shot}-phone")
        browser.open("/browse")
        table = browser.driver.execute_script(
            "return document.querySelector('table#records').getBoundingClientRect().width"
        )
        if phone:  # a card per record: the name on a line of its own, the facts labelled under it
            label = "return getComputedStyle(document.querySelector('tr.record td.type'), '::before').content"
            assert browser.driver.execute_script(label) == '"type "'
            assert not browser.find("table#records thead").is_displayed()
        else:  # the table uses the screen, not a column of 920 px in its middle
            assert table > 0.85 * size[0], table
    finally:
        browser.driver.set_window_size(*WINDOW)
