"""One vocabulary: the same thing has the same name in the CLI's JSON, ``memory-recall`` and the
MCP tools (docs/api.md, "Vocabulary"): ``items`` for lists of hits or records, ``recall_count``
and ``last_recall`` for usage, ``path`` for a record's file, ``top_k`` for how many hits. One
memory folder is asked through every interface and the answers are compared name by name."""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import redirect_stdout
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from eidetic import Memory
from eidetic.cli import memory_recall
from eidetic.errors import EideticError

# names other tools use for what eidetic names otherwise (memory-recall's seed JSON excepted)
SYNONYMS = {
    "hits": "items",
    "results": "items",
    "memories": "items",
    "usage_count": "recall_count",
    "uses": "recall_count",
    "last_used": "last_recall",
    "last_recalled": "last_recall",
    "file": "path",
    "filename": "path",
    "file_path": "path",
    "limit": "top_k",
    "k": "top_k",
}


def keys_in(data: Any, where: str = "") -> list[tuple[str, Any]]:
    """Every (key path, value) in a JSON document."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((f"{where}.{key}", value))
            found += keys_in(value, f"{where}.{key}")
    elif isinstance(data, list):
        for item in data:
            found += keys_in(item, f"{where}[]")
    return found


def assert_one_vocabulary(document: Any, name: str) -> None:
    for path, value in keys_in(document):
        key = path.rsplit(".", 1)[-1]
        assert key not in SYNONYMS, f"{name}: {path} should be named {SYNONYMS[key]}"
        assert not (key == "records" and isinstance(value, list)), f"{name}: {path} (a list) should be items"


@pytest.fixture
def folder(env, monkeypatch):
    """A coding agent's memory folder, used as the store by every interface."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    path = env / "agent-memory"
    path.mkdir()
    (path / "deploy-steps.md").write_text(
        "---\nname: deploy-steps\ndescription: Steps before a deploy\ntype: feedback\n---\n"
        "Run the migration dry-run first, then deploy.\n"
    )
    (path / "MEMORY.md").write_text("- [deploy-steps](deploy-steps.md): deploy steps\n")
    return path


async def _mcp(folder) -> tuple[dict, dict, dict]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "eidetic", "mcp", "--memory-dir", str(folder)], env=dict(os.environ)
    )
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        asked = {"query": "deploy", "mode": "fields", "record": False}
        called = await session.call_tool("recall", {**asked, "detail": "full"})
        assert not called.is_error, called.content
        compact = (await session.call_tool("recall", asked)).structured_content
        assert_one_vocabulary(compact, "mcp recall, compact")  # fewer names, the same ones
        listed = json.loads((await session.read_resource("eidetic://records")).contents[0].text)
        return tools["recall"].input_schema, called.structured_content, listed


def test_cli_mcp_and_memory_recall_name_the_same_things_alike(cli, folder):
    at = ["--memory-dir", str(folder)]
    assert cli("recall", "deploy", "--mode", "fields", *at).code == 0  # one recall, counted
    shown = cli("recall", "deploy", "--mode", "fields", "--no-record", "--json", *at).json
    out = io.StringIO()
    with redirect_stdout(out):
        assert memory_recall.main(["deploy", "--no-record", "--json", *at]) == 0
    seed = json.loads(out.getvalue())
    schema, served, listed = anyio.run(_mcp, folder)
    audited = cli("audit", "--json", *at).json
    exported = [json.loads(line) for line in cli("export", *at).out.splitlines()]

    hit, result, graded = shown["items"][0], seed["results"][0], audited["items"][0]
    assert set(served) == set(shown) and set(served["items"][0]) == set(hit)  # MCP returns the CLI's JSON
    assert hit["id"] == result["id"] == served["items"][0]["id"] == graded["id"] == exported[0]["id"]
    counts = {hit["recall_count"], result["recall_count"], served["items"][0]["recall_count"]}
    assert counts == {graded["recall_count"], exported[0]["recall_count"], result["usage_count"]} == {1}
    lasts = {hit["last_recall"], result["last_recall"], graded["last_recall"], exported[0]["last_recall"]}
    assert len(lasts) == 1 and None not in lasts
    assert result["path"] == graded["path"] == str(folder / "deploy-steps.md")  # path: the record's file
    assert hit["scope"] == {"name": "default", "visibility": "public"} == listed["items"][0]["scope"]
    assert "top_k" in schema["properties"] and "limit" not in schema["properties"]
    for name, document in (("recall", shown), ("mcp recall", served), ("mcp records", listed), ("audit", audited)):
        assert_one_vocabulary(document, name)
    assert_one_vocabulary(exported, "export")
    assert set(seed) == {"terms", "dirs", "count", "results"}  # memory-recall keeps the seed's shape


def test_an_option_error_names_the_option_as_each_interface_does(cli, store):
    run = cli("recall", "x", "--top-k", "0", "--json")
    assert run.err_json == {
        "code": 1,
        "message": "--top-k must be an integer >= 1 (got 0)",
        "remediation": "e.g. --top-k 5",
    }
    dated = cli("recall", "x", "--since", "soonish")
    assert dated.err == (
        "error: --since is not a date: 'soonish'\nhint: an ISO date, a duration back from now (7d, 12h, 2w, 3mo, "
        "1y) or words (yesterday, last monday), e.g. --since 2026-11-01\n"
    )
    with Memory.open() as memory, pytest.raises(EideticError) as raised:
        memory.recall("x", filters=["priority"])
    assert raised.value.message == "filters entry 'priority' is malformed"
    assert raised.value.remediation == "a filter is KEY=VALUE, KEY>=VALUE or KEY<=VALUE, e.g. filters=['source=docs']"
    assert "--" not in raised.value.message + raised.value.remediation
