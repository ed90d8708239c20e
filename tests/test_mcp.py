"""``eidetic mcp`` driven the way a coding agent drives it: the SDK's own client over stdio,
against a real server subprocess. One agent's server is private to scope ``a``; a second,
public server shows what another session gets of ``a``'s private records: nothing."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.slow  # real eidetic mcp processes over stdio

RECORDS = [
    {
        "id": "pub-1",
        "text": "Deploys run on Tuesdays",
        "scope": {"name": "a", "visibility": "public"},
        "links": ["priv-1"],
    },
    {"id": "priv-1", "text": "The Tuesday deploy key rotates monthly"},  # the session's a/private
    {"id": "old-1", "text": "Tuesday standups moved to Wednesday", "created": "2020-01-01T00:00:00Z"},
]


@pytest.fixture
def server_env(env, monkeypatch) -> dict[str, str]:
    """The test's HOME, cache and state folders, one store folder, no embedding model (speed);
    set here too so the in-process CLI reads the same store."""
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "store"))
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    return dict(os.environ)


def _server(environ: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "eidetic", "mcp", *args], env=environ)


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
    return result.structured_content


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    """The error text of a refused call: the eidetic message, then its hint."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: ") and "\nhint: " in text
    return text


async def _read(session: ClientSession, uri: str) -> Any:
    return json.loads((await session.read_resource(uri)).contents[0].text)


def _ids(bundle: dict[str, Any]) -> list[str]:
    return [item["id"] for item in bundle["items"]]


def test_mcp_server_over_stdio(server_env, cli):
    async def private_session() -> None:
        async with (
            stdio_client(_server(server_env, "--scope", "a", "--visibility", "private")) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == {"remember", "recall", "sweep", "overview"}
            listed = set(tools["recall"].input_schema["properties"])
            assert {"query", "top_k", "scope", "visibility", "filters", "detail"} <= listed
            assert "record" not in listed  # taken (below), not listed: agents rarely need it

            stored = await _call(session, "remember", records=RECORDS)
            assert (stored["upserted"], stored["ids"], stored["duplicates"]) == (3, ["pub-1", "priv-1", "old-1"], [])
            store = server_env["EIDETIC_DATA_DIR"]
            assert [(r["id"], r["status"], r["store"]) for r in stored["items"]] == [
                ("pub-1", "new", store),
                ("priv-1", "new", store),
                ("old-1", "new", store),
            ]  # as `eidetic remember --json` says it
            assert all(r["path"].startswith(store + os.sep) for r in stored["items"])
            again = await _call(session, "remember", records=RECORDS[0])
            assert again["items"][0]["status"] == "unchanged"
            assert (await _call(session, "remember", records={"id": "priv-2", "text": "Tuesday"}))["ids"] == ["priv-2"]

            bundle = await _call(
                session, "recall", query="tuesday deploy", mode="keyword", top_k=1, record=False, detail="full"
            )
            cli_bundle = cli(
                "recall",
                "tuesday deploy",
                "--mode",
                "keyword",
                "--top-k",
                "1",
                "--no-record",
                "--scope",
                "a",
                "--visibility",
                "private",
                "--relevance-floor",
                "auto",  # the tool's default
                "--json",
            ).json
            assert set(bundle) == set(cli_bundle) and bundle["mode"] == "keyword"
            assert [(i["id"], i["tier"], i["depth"]) for i in bundle["items"]] == [
                (i["id"], i["tier"], i["depth"]) for i in cli_bundle["items"]
            ]
            primary, *linked = bundle["items"]
            assert primary["tier"] == "primary" and primary["score"] > 0 and primary["scope"]["name"] == "a"
            assert [(i["tier"], i["via"], i["parent"]) for i in linked] in ([], [("traversal", "links", "pub-1")])
            # by default the same hits come compact: the fields that are set, the scope as one string
            compact = await _call(session, "recall", query="tuesday deploy", mode="keyword", top_k=1, record=False)
            assert [(i["id"], i.get("tier", "primary")) for i in compact["items"]] == [
                (i["id"], i["tier"]) for i in bundle["items"]
            ]
            assert compact["items"][0]["scope"] == f"a/{primary['scope']['visibility']}"
            assert compact["items"][0]["score"] == pytest.approx(primary["score"], abs=1e-3)
            assert not {"hash", "path", "signal", "recall_count"} & set(compact["items"][0])

            # The relevance floor is on by default: a query about nothing stored returns nothing, and says so.
            schema = tools["recall"].input_schema["properties"]["relevance_floor"]
            assert schema["default"] == "auto" and "auto (default)" in schema["description"]
            unrelated = await _call(session, "recall", query="tuesday yeast protein assays", record=False)
            assert (unrelated["items"], unrelated["relevance_floor"], unrelated["below_floor"]) == ([], 1.0, 4)
            everything = await _call(
                session, "recall", query="tuesday yeast protein assays", relevance_floor="off", record=False
            )
            assert len(everything["items"]) == 4 and "below_floor" not in everything
            assert "relevance_floor must be auto, off or a number" in await _error(
                session, "recall", query="x", relevance_floor=-1
            )

            # No leak: a narrower view of the same session, and another scope, see none of a's private records.
            assert _ids(await _call(session, "recall", query="tuesday", mode="keyword", visibility="public")) == [
                "pub-1"
            ]
            assert _ids(
                await _call(session, "recall", query="tuesday", mode="keyword", scope="b", visibility="public")
            ) == ["pub-1"]
            assert "a/private only" in await _error(session, "recall", query="tuesday", scope="b", visibility="private")

            record = await _read(session, "eidetic://record/priv-1")
            assert record["id"] == "priv-1" and record["scope"] == {"name": "a", "visibility": "private"}
            listed = await _read(session, "eidetic://records")
            assert {r["id"] for r in listed["items"]} == {"pub-1", "priv-1", "old-1", "priv-2"}
            # reading a record, or the list, is not a recall: no usage counted
            unread = await _call(
                session, "recall", query="rotates monthly", mode="keyword", depth=0, record=False, detail="full"
            )
            assert [(i["id"], i["recall_count"]) for i in unread["items"]] == [("priv-1", 0)]

            assert "top_k must be an integer >= 1" in await _error(session, "recall", query="tuesday", top_k=0)
            assert "nothing was written" in await _error(session, "remember", records={"text": ""})
            swept = await _call(session, "sweep", dry_run=True)  # the server is still there
            assert swept["changed"] == [{"id": "old-1", "lifecycle": "archived"}] and swept["scanned"] == 4
            scopes = (await _call(session, "overview"))["stores"][0]["scopes"]
            assert {(s["name"], s["visibility"], s["total"]) for s in scopes} == {
                ("a", "public", 1),
                ("a", "private", 3),
            }

    async def public_session() -> None:
        logged: list[str] = []

        async def log(params: Any) -> None:
            logged.append(f"{params.level}: {params.data}")

        async with (
            stdio_client(_server(server_env)) as streams,
            ClientSession(*streams, logging_callback=log) as session,
        ):
            await session.initialize()
            assert _ids(await _call(session, "recall", query="tuesday")) == ["pub-1"]  # hybrid, without a model
            assert logged and logged[0].startswith("warning: semantic recall unavailable")
            assert "default/public only" in await _error(session, "recall", query="x", scope="a", visibility="private")
            with pytest.raises(MCPError, match="no record 'priv-1' in reach"):
                await _read(session, "eidetic://record/priv-1")
            assert [r["id"] for r in (await _read(session, "eidetic://records"))["items"]] == ["pub-1"]
            swept = await _call(session, "sweep", dry_run=True)
            assert swept["changed"] == [] and swept["scanned"] == 1 and swept["archived"] == 0
            scopes = (await _call(session, "overview"))["stores"][0]["scopes"]
            assert [(s["name"], s["visibility"]) for s in scopes] == [("a", "public")]

    async def main() -> None:
        with anyio.fail_after(60):
            await private_session()
            await public_session()

    anyio.run(main)


def test_argument_errors_come_back_short_and_in_the_tools_terms(server_env):
    """Wrong types, unknown values and unknown arguments: one short line naming the argument as the
    tool does (never a CLI flag), a hint, and none of the validation library's dump."""
    calls = [
        ("recall", {"query": "x", "top_k": "five"}, "top_k must be an integer (got 'five')"),
        ("recall", {"query": "x", "mode": "psychic"}, "mode must be one of 'exact', 'keyword', 'approximate'"),
        ("recall", {"query": "x", "bogus": 1}, "unknown argument 'bogus'"),
        ("recall", {"query": "x", "filters": "a=b"}, "filters must be a list (got 'a=b')"),
        ("recall", {"top_k": 3}, "query is required"),
        ("recall", {"query": "x", "top_k": 0}, 'top_k must be an integer >= 1 (got 0)\nhint: e.g. "top_k": 5'),
        ("recall", {"query": "x", "filters": ["nokey"]}, "filters entry 'nokey' is malformed"),
        ("recall", {"query": "x", "relevance_floor": "sometimes"}, "relevance_floor must be"),
        ("sweep", {"dry_run": "maybe"}, "dry_run must be true or false (got 'maybe')"),
        ("remember", {"records": "hello"}, "records must be a list or an object (got 'hello')"),
        ("overview", {"scope": "a", "everything": True}, "unknown argument 'everything'"),
    ]

    async def session_run() -> None:
        async with stdio_client(_server(server_env)) as streams, ClientSession(*streams) as session:
            await session.initialize()
            for tool, arguments, expected in calls:
                text = await _error(session, tool, **arguments)
                message = text.removeprefix(f"Error executing tool {tool}: ")
                assert message.startswith(expected), (arguments, text)
                first, hint = message.split("\nhint: ")
                assert len(first) < 120 and "\n" not in hint, text  # one short line, one hint
                for noise in ("validation error", "pydantic", "type=", "input_value", "Arguments", " --"):
                    assert noise not in text, (noise, text)
            assert "recall takes query, mode, top_k" in await _error(session, "recall", query="x", limit=3)
            assert _ids(await _call(session, "recall", query="x", mode="keyword")) == []  # still serving

    async def main() -> None:
        with anyio.fail_after(60):
            await session_run()

    anyio.run(main)


def test_the_recall_tool_takes_times_beyond_the_calendar(server_env, cli):
    """Year 1, 9999, 10000 and "10 000 000 years ago" in the query or the date arguments: an
    answer, or a refusal with a hint, never a crash of the call."""
    assert cli("remember", json.dumps({"id": "deploys", "text": "Deploys run on Tuesdays"})).code == 0
    answered = [
        {"query": "deploys 9999-12-31"},
        {"query": "deploys since 0001-01-01"},
        {"query": "deploys 10 000 000 years ago"},
        {"query": "deploys yesterday", "now": "0001-01-01T00:00"},
        {"query": "deploys yesterday", "now": "9999-12-31T23:59"},
        {"query": "deploys", "as_of": "9999-12-31"},
        {"query": "deploys", "since": "10 000 000 years ago", "until": "9999-12-31"},
        {"query": "deploys", "since": "7d"},
    ]

    logged: list[str] = []

    async def log(params: Any) -> None:
        logged.append(f"{params.level}: {params.data}")

    async def session_run() -> None:
        async with (
            stdio_client(_server(server_env)) as streams,
            ClientSession(*streams, logging_callback=log) as session,
        ):
            await session.initialize()
            for arguments in answered:
                bundle = await _call(
                    session, "recall", mode="keyword", record=False, relevance_floor="off", **arguments
                )
                assert _ids(bundle) == ["deploys"], arguments
            assert any("'10 000 000 years ago' is beyond the calendar" in line for line in logged), logged
            assert "as_of is not a date" in await _error(session, "recall", query="deploys", as_of="10000-01-01")

    async def main() -> None:
        with anyio.fail_after(60):
            await session_run()

    anyio.run(main)
