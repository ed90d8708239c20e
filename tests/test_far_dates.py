"""Far dates on every surface: each date flag of the CLI (recall, list, sweep), a question (recall,
context), the viewer's query string (search and browse) and the MCP recall tool's arguments,
each with years 0, 1, 9999, 10000 and beyond, offsets that leave the calendar in UTC, "10 000
000 years ago", "-5" and huge numbers. Every answer is a result, or a refusal with a message
and a hint (exit 1, HTTP 400, a tool error): never a traceback, an HTTP 500, or a crash."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import Run
from eidetic import Memory
from serve_process import seed, store_env
from web_client import page, served

pytestmark = pytest.mark.slow  # 445 cases: twenty values over every surface

# How each value reads: an ISO moment of the calendar ("iso"); words or a duration a date flag
# reads, though --now takes only ISO ("words"); nothing a date can be ("bad").
DATES = {
    "0000-01-01": "bad",
    "0001-01-01": "iso",
    "0001-01-01T00:00:00-14:00": "iso",  # 14:00 UTC on day one
    "0001-01-01T00:00:00+14:00": "bad",  # 10:00 UTC on the day before the calendar's first
    "9999-12-31": "iso",
    "9999-12-31T23:59:59+14:00": "iso",  # 09:59:59 UTC
    "9999-12-31T23:59:59-14:00": "bad",  # year 10000 in UTC
    "9999-12-31T23:59:59.999999": "iso",
    "10000-01-01": "bad",
    "99999-12-31T00:00:00": "bad",
    "10 000 000 years ago": "words",
    "99999999999999999999 days ago": "words",
    "99999999999999999999d": "words",
    "9999": "words",  # the year 9999
    "-5": "bad",
    "0": "bad",
    "1": "bad",
    "13": "bad",
    "99999999999999999999": "bad",
    "-99999999999999999999": "bad",
}
FLAGS = ("now", "as_of", "since", "until")
LIST_FLAGS = ("as_of", "since", "until")
RECORD = {"id": "deploys", "text": "Deploys run on Tuesdays", "created": "2026-11-24"}


@dataclass
class Answer:
    """One surface's answer: it worked, or it refused with ``message``; ``crashed`` says a
    traceback or a server error got out."""

    ok: bool
    message: str
    crashed: bool


def expected_ok(option: str, value: str) -> bool:
    kind = DATES[value]
    return kind == "iso" or (kind == "words" and option != "now")


@pytest.fixture
def deploys(store, cli, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    assert cli("remember", json.dumps(RECORD)).code == 0
    return store


def from_cli(run: Run) -> Answer:
    crashed = "Traceback" in run.err or run.code not in (0, 1)
    return Answer(run.code == 0, run.err, crashed)


def from_page(response: Any) -> Answer:
    if response.status_code == 200:
        return Answer(True, "", False)
    shown = page(response).select_one(".error")
    message = " ".join(shown.stripped_strings) if shown is not None else response.text
    return Answer(False, message, response.status_code != 400)


@pytest.fixture
def viewer(deploys) -> Iterator[Any]:
    with served() as client:
        yield client


MCP_CALLS = {
    **{(option, value): {"query": "deploys", option: value} for option in FLAGS for value in DATES},
    **{("query", value): {"query": f"deploys {value}"} for value in DATES},
    **{("number", number): {"query": "deploys", "now": number} for number in (0, 5, -5, 10**20)},
}


@pytest.fixture(scope="module")
def mcp_answers(tmp_path_factory) -> dict[tuple[str, Any], Answer]:
    """Every MCP call of this file, made once through a real ``eidetic mcp`` and the SDK's
    client, in one session: a call that crashed the server would end it for the rest."""
    env = store_env(tmp_path_factory.mktemp("far-dates-mcp"))
    seed(env, [RECORD])
    answers: dict[tuple[str, Any], Answer] = {}
    server = StdioServerParameters(command=sys.executable, args=["-m", "eidetic", "mcp"], env=env)

    async def ask() -> None:
        async with stdio_client(server) as streams, ClientSession(*streams) as session:
            await session.initialize()
            for key, arguments in MCP_CALLS.items():
                result = await session.call_tool(
                    "recall", {"mode": "keyword", "record": False, "relevance_floor": "off", **arguments}
                )
                text = result.content[0].text if result.content else ""
                answers[key] = Answer(not result.is_error, text, "Traceback" in text)

    async def main() -> None:
        with anyio.fail_after(300):
            await ask()

    anyio.run(main)
    return answers


def flag(option: str) -> str:
    return "--" + option.replace("_", "-")


@pytest.mark.parametrize("value", DATES)
@pytest.mark.parametrize("option", FLAGS)
def test_recall_date_flags(deploys, cli, option, value):
    answer = from_cli(cli("recall", "deploys", "--mode", "keyword", "--json", flag(option), value))
    check(answer, option, value, flag(option))


@pytest.mark.parametrize("value", DATES)
@pytest.mark.parametrize("option", LIST_FLAGS)
def test_list_date_flags(deploys, cli, option, value):
    check(from_cli(cli("list", "--json", flag(option), value)), option, value, flag(option))


@pytest.mark.parametrize("value", DATES)
def test_sweep_now(deploys, cli, value):
    check(from_cli(cli("sweep", "--dry-run", "--json", "--now", value)), "now", value, "--now")


@pytest.mark.parametrize("value", DATES)
def test_a_question_naming_the_date(deploys, cli, value):
    """In a question a far date is words or a window held at the calendar's ends: an answer."""
    recalled = cli("recall", f"deploys {value}", "--mode", "keyword", "--json", "--no-record")
    assert recalled.code == 0 and "Traceback" not in recalled.err, recalled.err
    assert "deploys" in [item["id"] for item in recalled.json["items"]]
    context = cli("context", "--prompt", f"when do deploys run {value}", "--mode", "keyword", "--format", "json")
    assert context.code == 0 and context.json["event"] == "prompt", context.err


@pytest.mark.parametrize("value", DATES)
@pytest.mark.parametrize("option", FLAGS)
def test_the_viewers_search(viewer, option, value):
    check(from_page(viewer.get("/", params={"q": "deploys", "mode": "keyword", option: value})), option, value)


@pytest.mark.parametrize("value", DATES)
@pytest.mark.parametrize("option", LIST_FLAGS)
def test_the_viewers_browse(viewer, option, value):
    check(from_page(viewer.get("/browse", params={option: value})), option, value)


@pytest.mark.parametrize("value", DATES)
def test_the_viewers_question(viewer, value):
    answer = viewer.get("/", params={"q": f"deploys {value}", "mode": "keyword"})
    assert answer.status_code == 200 and "deploys" in [li["data-id"] for li in page(answer).select("li.hit")]


@pytest.mark.parametrize("value", DATES)
@pytest.mark.parametrize("option", FLAGS)
def test_the_mcp_recall_arguments(mcp_answers, option, value):
    check(mcp_answers[(option, value)], option, value)


@pytest.mark.parametrize("value", DATES)
def test_the_mcp_question(mcp_answers, value):
    assert mcp_answers[("query", value)].ok, mcp_answers[("query", value)].message


@pytest.mark.parametrize("number", [0, 5, -5, 10**20])
def test_numbers_are_no_date_for_mcp_now(mcp_answers, number):
    """MCP's ``now`` is read as the CLI reads it: a number is refused, not seconds since 1970."""
    answer = mcp_answers[("number", number)]
    assert not answer.ok and not answer.crashed and "now" in answer.message, answer.message


def check(answer: Answer, option: str, value: str, shown: str | None = None) -> None:
    """A result when the value names a moment the option takes; else a refusal naming the
    option, with a hint; never a crash."""
    assert not answer.crashed, answer.message
    if expected_ok(option, value):
        assert answer.ok, (option, value, answer.message)
        return
    assert not answer.ok, (option, value)
    assert (shown or option) in answer.message and ("hint" in answer.message or "e.g." in answer.message), (
        answer.message
    )


def test_a_recall_asked_at_another_now_counts_no_usage(deploys, cli):
    """``--now 9999-12-31`` used to stamp ``last_recall`` in year 9999: a question asked as if
    at another moment counts nothing, as one asked about the past (``--as-of``) does."""
    for now in ("9999-12-31", "0001-01-01", "2026-11-30T12:00:00Z"):
        assert cli("recall", "deploys", "--mode", "keyword", "--now", now).code == 0
    with Memory.open() as memory:
        record = memory.get("deploys")
        assert memory.recall("deploys", mode="keyword", record=False).items[0].recall_count == 0
    assert record.id == "deploys"
    assert cli("recall", "deploys", "--mode", "keyword").code == 0  # asked now: counted, dated now
    item = cli("recall", "deploys", "--mode", "keyword", "--no-record", "--json").json["items"][0]
    assert item["recall_count"] == 1 and item["last_recall"] < "2100"
