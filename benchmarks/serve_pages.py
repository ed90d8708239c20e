"""Server-side time of every page of ``eidetic serve``'s viewer, at one store size.

    python benchmarks/serve_pages.py sqlite 100000
    python benchmarks/serve_pages.py files 100000 --requests 100
    python benchmarks/serve_pages.py postgres 100000          # starts its own PostgreSQL
    python benchmarks/serve_pages.py postgres 100000 --keep /tmp/pages   # build once, measure again
    python benchmarks/serve_pages.py neo4j 10000              # starts its own graph server (no --keep)

The store is built once (``remember --no-embed``, vectors planted as in ``speed.py``; one record in
ten links to the one before it, so record pages have links both ways), then opened the way
``eidetic serve`` opens it: one ``Memory`` behind one session. Each page is asked for in-process
(Starlette's test client: the app's whole request handling and rendering, no network), with a
different query or record on each request, after a warm-up request per page (for the overview
and the home page, until its first report is made: a running server's page is measured, not its
first seconds).
``--served N`` first has the server answer N keyword searches of other words, as a server in
use has (the postgres backend keeps common terms' postings between searches). The target is a
p50 of at most 100 ms per page at 100k records; the results go to
``benchmarks/results/serve-pages-BACKEND-N.json`` and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from corpus import keyword_queries, records  # noqa: E402
from eidetic.stores.backends import NAMES  # noqa: E402
from measure import Store, backend_store, ingest_no_embed, machine, plant_vectors, use_store  # noqa: E402

PORT = 8000  # the Host the test client sends; nothing listens on it


def build(store: Store, n: int, work: Path) -> list[dict]:
    """A store of ``n`` records at ``work``, configured through the environment (as a user's
    shell would), with the vectors of every text in the cache; built once per ``work`` folder
    (a second run with ``--keep`` measures the same store again)."""
    use_store(store, work)
    backend = store.env["EIDETIC_BACKEND"]
    chunk = records(n, seed=7)
    for i, record in enumerate(chunk):
        if i % 10 == 9:
            record["links"] = [chunk[i - 1]["id"]]
    built = work / "built"
    if not built.exists():
        ingest_no_embed(chunk, work, {**os.environ, "PYTHONPATH": str(REPO / "src")})
        plant_vectors(chunk, [work / "cache"])
        built.write_text(f"{backend} {n}\n")
    elif built.read_text().split() != [backend, str(n)]:
        raise SystemExit(f"{work} holds a store of another backend or size: {built.read_text().strip()}")
    return chunk


def pages(chunk: list[dict], count: int) -> dict[str, list[str]]:
    """Each page with ``count`` different URLs (queries and records drawn from the store; each
    search page its own queries)."""
    rng = random.Random(5)
    words, other, third = (keyword_queries(chunk, count, seed=seed) for seed in (21, 22, 23))
    exact = [" ".join(chunk[rng.randrange(len(chunk))]["text"].split()[2:4]) for _ in range(count)]
    ids = [quote(chunk[rng.randrange(len(chunk))]["id"]) for _ in range(count)]
    types = ["lesson", "decision", "note", "reference"]
    return {
        "home": ["/"] * count,
        "search keyword": [f"/?q={quote(q)}&mode=keyword" for q in words],
        "search hybrid": [f"/?q={quote(q)}&mode=hybrid" for q in other],
        "search exact": [f"/?q={quote(q)}&mode=exact" for q in exact],
        "search keyword, filtered": [
            f"/?q={quote(q)}&mode=keyword&types=lesson&filters=priority%3E%3D2" for q in third
        ],
        "record": [f"/record?id={i}" for i in ids],
        "edit form": [f"/record/edit?id={i}" for i in ids],
        "browse": [f"/browse?offset={50 * rng.randrange(100)}" for _ in range(count)],
        "browse by type, by name": [f"/browse?types={types[k % 4]}&sort=name" for k in range(count)],
        "overview": ["/overview"] * count,
    }


def measure(urls: dict[str, list[str]], served: list[str]) -> dict[str, dict[str, float]]:
    from starlette.testclient import TestClient

    from eidetic import Memory
    from eidetic.session import Session
    from eidetic.web.app import create_app

    memory = Memory.open()
    session = Session(memory, memory.access().scope)
    results: dict[str, dict[str, float]] = {}
    with TestClient(create_app(session, port=PORT), base_url=f"http://127.0.0.1:{PORT}") as client:
        for url in served:
            client.get(url)
        for page, batch in urls.items():
            # warm: indexes opened, model loaded, templates compiled, the overview's report made
            while any(counting in client.get(batch[0]).text for counting in ('http-equiv="refresh"', "Counting…")):
                time.sleep(0.5)
            spent = []
            for url in batch:
                started = time.perf_counter()
                response = client.get(url)
                spent.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{url}: {response.status_code}\n{response.text[:500]}")
            spent.sort()
            results[page] = {
                "p50_ms": round(statistics.median(spent), 2),
                "p95_ms": round(spent[int(0.95 * (len(spent) - 1))], 2),
                "requests": len(spent),
            }
            print(
                f"{page:28} p50 {results[page]['p50_ms']:8.2f} ms   p95 {results[page]['p95_ms']:8.2f} ms", flush=True
            )
    session.close()
    memory.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backend", choices=NAMES)
    parser.add_argument("n", type=int)
    parser.add_argument("--requests", type=int, default=50, help="requests per page (default 50)")
    parser.add_argument("--pages", help="only the pages whose names contain this (e.g. search)")
    parser.add_argument("--served", type=int, default=0, help="keyword searches answered before measuring")
    parser.add_argument(
        "--keep",
        type=Path,
        help="build the store in this folder and keep it, reused when there (as root, postgres "
        "needs a folder its server user can reach, e.g. under /tmp)",
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="eidetic-serve-pages-"))
    work.mkdir(parents=True, exist_ok=True)
    server = ExitStack()  # a server the backend needs, stopped at the end
    try:
        store = server.enter_context(backend_store(args.backend, work, keep=args.keep is not None))
        print(f"building a {args.backend} store of {args.n:,} records", flush=True)
        chunk = build(store, args.n, work)
        result = {
            "backend": args.backend,
            "records": args.n,
            "machine": machine(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "served_before": args.served,
            "pages": measure(
                {k: v for k, v in pages(chunk, args.requests).items() if (args.pages or "") in k},
                [f"/?q={quote(q)}&mode=keyword" for q in keyword_queries(chunk, args.served, seed=99)],
            ),
        }
    finally:
        server.close()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    part = f"-{args.pages.replace(' ', '-')}" if args.pages else ""  # a part of the pages: saved apart
    part += f"-served-{args.served}" if args.served else ""
    saved = HERE / "results" / f"serve-pages-{args.backend}-{args.n}{part}.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
