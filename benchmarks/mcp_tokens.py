"""What ``eidetic mcp`` costs an agent's context: the size of each tool's listing (name,
description, input and output schema, as a client passes them to the model) and of a top-10
``recall`` answer, in bytes and tokens, over a real server on stdio driven by the SDK's client.

    .venv/bin/python benchmarks/mcp_tokens.py [--records N] [--queries N] [--before-src DIR]

``--before-src`` runs the same measures against the ``src`` folder of another checkout (e.g.
``git archive 16a56e6 src | tar -x -C /tmp/before`` for the commit before compact hits), so one
run prints before and after. The store is the speed benchmarks' synthetic corpus
(``corpus.records``: short notes of 20-60 words, or with ``--shape mixed`` half of them doc chunks
of 60-300 words; each with a type, a source, a priority and a date); the queries are 1-5 words of
one record (``corpus.keyword_queries``), asked in keyword mode (the answer's size does not depend
on the mode) with the relevance floor off, so every answer has 10 hits.

Tokens are counted with the bundled model's tokenizer (all-MiniLM-L6-v2's WordPiece, through the
``tokenizers`` library, offline): not any agent's own tokenizer, but one count for both forms,
so the ratios hold; bytes are given too. Results go to docs/benchmarks.md ("MCP answers") by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from eidetic.embed.local import PACKAGE  # noqa: E402

TOP_K = 10


def tokenizer() -> Tokenizer:
    """The bundled model's tokenizer, without its 512-token cut or padding."""
    import importlib

    folder = Path(importlib.import_module(PACKAGE).__file__ or "").parent / "model"
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count(tok: Tokenizer, text: str) -> int:
    return len(tok.encode(text, add_special_tokens=False).ids)


async def measure(environ: dict[str, str], queries: list[str], tok: Tokenizer) -> dict[str, Any]:
    """The listing's and the answers' sizes from one server process."""
    server = StdioServerParameters(command=sys.executable, args=["-m", "eidetic", "mcp"], env=environ)
    async with stdio_client(server) as streams, ClientSession(*streams) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        listing = {
            tool.name: json.dumps(tool.model_dump(by_alias=True, exclude_none=True), separators=(",", ":"))
            for tool in tools
        }
        recall = next(tool for tool in tools if tool.name == "recall")
        forms = ["compact", "full"] if "detail" in recall.input_schema["properties"] else ["today"]
        answers: dict[str, list[tuple[int, int, int]]] = {form: [] for form in forms}
        for query in queries:
            for form in forms:
                arguments: dict[str, Any] = {
                    "query": query,
                    "mode": "keyword",
                    "top_k": TOP_K,
                    "relevance_floor": "off",
                    "record": False,
                    "depth": 0,
                }
                if form != "today":
                    arguments["detail"] = form
                result = await session.call_tool("recall", arguments)
                assert not result.is_error, result.content
                text = result.content[0].text
                hits = len(json.loads(text)["items"])
                answers[form].append((len(text.encode()), count(tok, text), hits))
    return {
        "tools": {name: (len(text.encode()), count(tok, text)) for name, text in listing.items()},
        "recall_parameters": len(recall.input_schema["properties"]),
        "answers": answers,
    }


def report(label: str, found: dict[str, Any]) -> None:
    tools = found["tools"]
    print(f"\n## {label}")
    print("| tool listing | bytes | tokens |\n|---|---:|---:|")
    for name, (size, tokens) in tools.items():
        print(f"| {name} | {size:,} | {tokens:,} |")
    print(f"| all four | {sum(s for s, _ in tools.values()):,} | {sum(t for _, t in tools.values()):,} |")
    print(f"recall parameters listed: {found['recall_parameters']}")
    print("| top-10 recall answer | median bytes | median tokens | tokens per hit |\n|---|---:|---:|---:|")
    for form, rows in found["answers"].items():
        per_hit = statistics.median(t / h for _, t, h in rows if h)
        print(
            f"| {form} | {statistics.median(b for b, _, _ in rows):,.0f} | "
            f"{statistics.median(t for _, t, _ in rows):,.0f} | {per_hit:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--shape", choices=["notes", "mixed"], default="notes")
    parser.add_argument("--before-src", type=Path, help="the src folder of another checkout, measured first")
    args = parser.parse_args()
    records = corpus.records(args.records, short_share=1.0 if args.shape == "notes" else 0.5)
    queries = corpus.keyword_queries(records, n=args.queries)
    tok = tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        environ = {
            **os.environ,
            "HOME": tmp,
            "EIDETIC_DATA_DIR": str(Path(tmp) / "store"),
            "EIDETIC_STATE_DIR": str(Path(tmp) / "state"),
            "EIDETIC_CACHE_DIR": str(Path(tmp) / "cache"),
            "EIDETIC_EMBEDDER": "none",
        }
        seeded = subprocess.run(
            [sys.executable, "-m", "eidetic", "remember"],
            input="\n".join(json.dumps(record) for record in records),
            env=environ,
            capture_output=True,
            text=True,
        )
        assert seeded.returncode == 0, seeded.stderr
        print(f"{args.records} records ({args.shape}), {args.queries} queries, top_k {TOP_K}")
        if args.before_src:
            before = {**environ, "PYTHONPATH": str(args.before_src.resolve())}
            report(f"before ({args.before_src})", anyio.run(measure, before, queries, tok))
        report("this checkout", anyio.run(measure, environ, queries, tok))


if __name__ == "__main__":
    main()
