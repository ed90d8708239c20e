"""What an agent reads of ``eidetic mcp``: tool descriptions that say when to use each tool and
what to store, a recall schema of the options agents need (the others still taken), compact hits
by default and the full form on request; driven by the official SDK's client and by the MCP
Inspector's CLI over stdio, against real server processes. And a person who starts ``eidetic
mcp`` on a terminal is told what it is, and Ctrl-C stops it."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import termios
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from eidetic.query import RecallQuery, exposed_options
from serve_process import seed, serve, store_env
from terminal import read_shown

pytestmark = pytest.mark.slow  # real eidetic mcp processes

NPM_CACHE = Path.home() / ".npm"  # the real one (tests move HOME): the Inspector is fetched once
RECORDS = [
    {
        "id": "deploy-day",
        "type": "decision",
        "name": "deploy day",
        "text": "Deploys run on Tuesdays, after the standup",
        "metadata": {"source": "chat", "priority": 2},
        "links": ["deploy-key"],
    },
    {"id": "deploy-key", "text": "The Tuesday deploy key rotates monthly", "type": "lesson"},
    {"id": "kiln", "text": "The kiln fires on Thursdays at cone 6", "type": "reference"},
]
OFFERED = {"query", "detail"} | {o.name for o in exposed_options() if o.metadata["for_agents"]}
UNLISTED = {o.name for o in exposed_options() if not o.metadata["for_agents"]}


@pytest.fixture
def server_env(env, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(env / "store"))
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    return dict(os.environ)


def _server(environ: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "eidetic", "mcp", *args], env=environ)


async def _text(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text
    assert json.loads(text) == result.structured_content
    return text


def test_tools_say_when_to_use_them_and_recall_answers_compact(server_env, cli):
    async def session_run() -> None:
        async with (
            stdio_client(_server(server_env, "--scope", "team", "--visibility", "private")) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            remember = tools["remember"].description or ""
            for kind in ("decision", "lesson", "user", "feedback", "project", "reference"):
                assert kind in remember, kind  # what to store, by type
            assert "supersedes" in remember and "never a secret" in remember

            schema = tools["recall"].input_schema
            assert set(schema["properties"]) == OFFERED and schema["required"] == ["query"]
            assert len(OFFERED) < len(UNLISTED) + len(OFFERED) == len(fields(RecallQuery))  # 25 before
            listed = json.dumps(schema)
            assert '"title"' not in listed and '"null"' not in listed  # no derived titles, no nulls
            for name in UNLISTED:  # named once in the description, so an agent knows they exist
                assert name in (tools["recall"].description or ""), name
            for tool in ("recall", "overview"):  # the session's defaults, truthfully
                props = tools[tool].input_schema["properties"]
                assert "default: this session's, team" in props["scope"]["description"]
                assert props["visibility"]["description"].endswith("default: private")
            assert (
                "default: this session's, team" in tools["remember"].input_schema["properties"]["scope"]["description"]
            )

            await _text(session, "remember", records=RECORDS)
            asked = {"query": "tuesday deploy", "mode": "keyword", "record": False}
            compact_text = await _text(session, "recall", **asked)
            full_text = await _text(session, "recall", detail="full", **asked)
            compact, full = json.loads(compact_text), json.loads(full_text)
            assert "\n" not in compact_text and ", " not in compact_text.replace(RECORDS[0]["text"], "")
            assert [i["id"] for i in compact["items"]] == [i["id"] for i in full["items"]]
            assert len(compact["items"]) >= 2
            for hit, whole in zip(compact["items"], full["items"], strict=True):
                set_fields = {k for k in ("name", "metadata", "links") if whole[k]}
                assert set(hit) == {"id", "text", "type", "created", "scope", "score"} | set_fields
                assert None not in hit.values()
                assert hit["scope"] == "team/private" and hit["score"] == pytest.approx(whole["score"], abs=1e-3)
                assert (hit["text"], hit["type"], hit["created"]) == (whole["text"], whole["type"], whole["created"])
            assert len(compact_text) <= len(full_text) / 2

            # the full form is `eidetic recall --json`'s, field for field
            cli_json = cli(
                "recall", "tuesday deploy", "--mode", "keyword", "--no-record", "--scope", "team",
                "--visibility", "private", "--relevance-floor", "auto", "--json",
            ).json  # fmt: skip
            assert set(full) == set(cli_json)
            assert [set(i) for i in full["items"]] == [set(i) for i in cli_json["items"]]

            # unlisted options are still taken, and work
            exact = json.loads(
                await _text(session, "recall", query="TUESDAYS", mode="exact", case_sensitive=True, record=False)
            )
            assert exact["items"] == []
            explained = json.loads(await _text(session, "recall", query="kiln", mode="fields", explain=True, top_k=1))
            assert [i["id"] for i in explained["items"]] == ["kiln"] and "explain" in explained["items"][0]
            linked = json.loads(await _text(session, "recall", query="standup", mode="keyword", max_nodes=0))
            assert [i["id"] for i in linked["items"]] == ["deploy-day"]  # no linked record followed
            hybrid = json.loads(await _text(session, "recall", query="standup", record=False))
            assert any("semantic recall unavailable" in w for w in hybrid["warnings"])  # no model here
            refused = await session.call_tool("recall", {"query": "x", "limt": 3})
            assert refused.is_error and "unknown argument 'limt'" in refused.content[0].text
            assert "also, unlisted: alpha" in refused.content[0].text

    async def main() -> None:
        with anyio.fail_after(90):
            await session_run()

    anyio.run(main)


@pytest.mark.skipif(shutil.which("npx") is None, reason="the MCP Inspector runs on Node.js (npx)")
def test_the_mcp_inspector_cli_lists_and_calls_the_tools(server_env, cli):
    """The Inspector's CLI, as a developer trying the server would run it."""
    assert cli("remember", json.dumps(RECORDS[0])).code == 0
    environ = {**server_env, "npm_config_cache": str(NPM_CACHE), "npm_config_update_notifier": "false"}

    def inspector(*args: str) -> dict[str, Any]:
        command = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", sys.executable, "-m", "eidetic", "mcp"]
        done = subprocess.run([*command, *args], env=environ, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    tools = {tool["name"]: tool for tool in inspector("--method", "tools/list")["tools"]}
    assert set(tools["recall"]["inputSchema"]["properties"]) == OFFERED
    call = ["--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=tuesdays", "--tool-arg"]
    compact = inspector(*call, "mode=keyword", "--tool-arg", "record=false")
    assert [(i["id"], i["scope"], i["metadata"]) for i in compact["structuredContent"]["items"]] == [
        ("deploy-day", "default/public", {"source": "chat", "priority": 2})
    ]
    full = inspector(*call, "detail=full")
    assert full["structuredContent"]["items"][0]["hash"] and json.loads(full["content"][0]["text"])["mode"] == "hybrid"


@pytest.mark.server  # an eidetic serve process
@pytest.mark.skipif(shutil.which("npx") is None, reason="the MCP Inspector runs on Node.js (npx)")
def test_the_mcp_inspector_cli_over_http_on_eidetic_serve(tmp_path):
    """The Inspector's CLI against ``eidetic serve``'s /mcp (streamable HTTP, no session kept
    between requests): it lists the tools, remembers and finds what it remembered."""
    env = store_env(tmp_path)
    seed(env, [{**RECORDS[0], "scope": {"name": "default", "visibility": "public"}}])
    served = serve(env)
    environ = {**env, "npm_config_cache": str(NPM_CACHE), "npm_config_update_notifier": "false"}

    def inspector(*args: str) -> dict[str, Any]:
        command = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", served.base + "/mcp", "--transport", "http"]
        done = subprocess.run([*command, *args], env=environ, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    try:
        tools = {tool["name"] for tool in inspector("--method", "tools/list")["tools"]}
        assert {"remember", "recall", "sweep", "overview"} <= tools
        written = inspector(
            "--method",
            "tools/call",
            "--tool-name",
            "remember",
            "--tool-arg",
            'records={"id": "from-inspector", "text": "The inspector parks its van by the quay"}',
        )
        assert [item["id"] for item in written["structuredContent"]["items"]] == ["from-inspector"]
        found = inspector(
            "--method",
            "tools/call",
            "--tool-name",
            "recall",
            "--tool-arg",
            "query=van by the quay",
            "--tool-arg",
            "mode=keyword",
        )
        assert [item["id"] for item in found["structuredContent"]["items"]] == ["from-inspector"]
    finally:
        served.stop()


def _on_terminal(args: list[str], environ: dict[str, str]) -> tuple[subprocess.Popen, int]:
    """``python -m eidetic ARGS`` with a pseudo-terminal as its controlling terminal and all its
    standard streams, as when a person types the command; the terminal's other end."""
    master, slave = os.openpty()

    def controlling() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [sys.executable, "-m", "eidetic", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=environ,
        preexec_fn=controlling,
    )
    os.close(slave)
    return proc, master


def _read_until(master: int, ending: str | None, timeout: float) -> str:
    return read_shown(master, ending, timeout).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.mark.parametrize("wait", [0.0, 2.0], ids=["at-once", "while-serving"])
def test_eidetic_mcp_on_a_terminal_says_what_it_is_and_stops_on_ctrl_c(server_env, wait):
    proc, master = _on_terminal(["mcp", "--scope", "me"], server_env)
    try:
        said = _read_until(master, "Ctrl-C stops it.", 60)  # the terminal ends its lines with \r\n
        assert "Model Context Protocol server for me/public" in said and "claude mcp add" in said, said
        time.sleep(wait)
        os.write(master, b"\x03")  # the terminal sends SIGINT
        after = _read_until(master, None, 30)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in said + after and "Error" not in after, after
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_eidetic_mcp_on_a_pipe_says_nothing(server_env):
    """An agent's pipe: stdout is the protocol's and stderr stays quiet; closing stdin stops it."""
    done = subprocess.run(
        [sys.executable, "-m", "eidetic", "mcp"], input="", capture_output=True, text=True, env=server_env, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
