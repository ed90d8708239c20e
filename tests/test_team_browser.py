"""Two members signing in to one ``eidetic serve`` from two real browsers (Debian's headless
Chromium through Selenium, each with its own cookies): each sees their own name and what they
may see in the page header, their own private record and never the other's, and a read-only
member finds no controls that change records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import run_process
from serve_process import Served, seed, serve, store_env
from test_viewer_browser import chromium, chromium_paths, find

pytestmark = pytest.mark.server  # headless Chromium

RECORDS = [
    {
        "id": "alice-diary",
        "text": "Alice's zanzibar plan for Tuesdays",
        "scope": {"name": "alice", "visibility": "private"},
    },
    {"id": "bob-diary", "text": "Bob's quokka plan for Tuesdays", "scope": {"name": "bob", "visibility": "private"}},
    {
        "id": "team-note",
        "text": "Tuesdays deploys need two reviewers",
        "scope": {"name": "team", "visibility": "public"},
    },
]


@pytest.fixture(scope="module")
def team(tmp_path_factory) -> Iterator[tuple[Served, dict[str, str]]]:
    chromium_paths()
    env = store_env(tmp_path_factory.mktemp("team-browser"))
    seed(env, RECORDS)
    tokens = {}
    for name, *flags in (
        ("alice", "--visibility", "private"),
        ("bob", "--visibility", "private"),
        ("carol", "--read-only"),
    ):
        made = run_process("tokens", "add", name, "--scope", "team" if name == "carol" else name, *flags, env=env)
        assert made.code == 0, made.err
        tokens[name] = made.out.strip()
    served = serve(env, "--scope", "team")
    yield served, tokens
    served.stop()


def signed_in(served: Served, token: str) -> Any:
    driver = chromium()
    driver.get(f"{served.base}/browse?token={token}")
    find(driver, "table#records")
    assert driver.current_url == f"{served.base}/browse", driver.current_url  # the token left the address
    return driver


def test_two_members_in_two_browsers_each_see_their_own_identity(team):
    served, tokens = team
    alice, bob = signed_in(served, tokens["alice"]), signed_in(served, tokens["bob"])
    try:
        for driver, name, other in ((alice, "alice", "bob"), (bob, "bob", "alice"), (alice, "alice", "bob")):
            driver.get(f"{served.base}/browse")
            assert find(driver, "#signed-in").text == name
            assert find(driver, "#sees").text == f"{name}/private + public records"
            rows = {row.get_attribute("data-id") for row in driver.find_elements(By.CSS_SELECTOR, "tr.record")}
            assert rows == {f"{name}-diary", "team-note"}
            assert f"{other}-diary" not in driver.page_source
        assert not alice.find_elements(By.CSS_SELECTOR, "#read-only")
    finally:
        alice.quit()
        bob.quit()


def test_a_read_only_member_sees_no_controls_that_change_records(team):
    served, tokens = team
    carol = signed_in(served, tokens["carol"])
    try:
        carol.get(f"{served.base}/record?id=team-note")
        find(carol, "article.record")
        assert find(carol, "#read-only").text == "read-only"
        assert find(carol, "#sees").text == "public records"
        assert not carol.find_elements(By.CSS_SELECTOR, "#edit, #supersede, form#forget, form#restore")
    finally:
        carol.quit()
    stranger = chromium()
    try:
        stranger.get(f"{served.base}/browse?token=eid_{'0' * 43}")
        # a plain-text page may be drawn after the load event on a busy machine: wait for its text
        WebDriverWait(stranger, 30).until(lambda driver: "needs its token" in driver.page_source)
        assert "team-note" not in stranger.page_source
    finally:
        stranger.quit()
