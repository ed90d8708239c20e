"""What a member's token costs ``eidetic serve`` per request: one lookup by the token's SHA-256
in the members' registry (``team.tokens``), on each registry, for a right token, a wrong one and
a near miss (the right token with its last character changed), which must cost the same as any
wrong one (no answer tells how much of a token was right).

    python benchmarks/token_lookup.py --members 200 --lookups 2000     # starts its own PostgreSQL

Each registry gets ``--members`` members (``Registry.add``, as ``eidetic tokens add`` does); the
three kinds of token then take turns, ``--lookups`` each. Results: the ``token-lookup`` section
of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import backend_store, machine, pct  # noqa: E402
from report import update_doc  # noqa: E402


def registry_of(backend: str, location: str, work: Path):  # noqa: ANN201 (a team.tokens.Registry)
    from eidetic.team.token_file import TokenFile
    from eidetic.team.token_table import TokenTable

    return TokenTable(location) if backend == "postgres" else TokenFile(work / "state" / "serve-tokens.json")


def measure(registry, members: int, lookups: int) -> dict[str, dict]:  # noqa: ANN001
    from eidetic.records import Scope
    from eidetic.team.tokens import digest

    tokens = [registry.add(f"member-{i}", Scope(f"scope-{i}", "private"), read_only=False) for i in range(members)]
    right = tokens[members // 2]
    kinds = {"right": right, "wrong": "eid_" + "A" * 43, "near miss": right[:-1] + ("B" if right[-1] != "B" else "C")}
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(lookups):
        for kind, token in kinds.items():
            start = time.perf_counter()
            registry.lookup(digest(token))  # what the server does for every request: hash, then look up
            times[kind].append((time.perf_counter() - start) * 1e6)
    assert registry.lookup(digest(right))[1] is not None and registry.lookup(digest(kinds["near miss"]))[1] is None
    return {
        kind: {
            "p50_us": round(statistics.median(values), 1),
            "p95_us": round(pct(values, 0.95), 1),
            "mean_us": round(statistics.fmean(values), 1),
        }
        for kind, values in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--lookups", type=int, default=2000)
    args = parser.parse_args()
    rows = []
    for backend in ("files", "postgres"):
        with tempfile.TemporaryDirectory() as folder, backend_store(backend, Path(folder)) as store:
            location = store.env.get("EIDETIC_PG_DSN", "")
            if backend == "postgres":
                import psycopg
                from psycopg.conninfo import make_conninfo

                with psycopg.connect(store.server, autocommit=True) as conn:
                    conn.execute('CREATE DATABASE "tokens"')
                location = make_conninfo(store.server, dbname="tokens")
            registry = registry_of(backend, location, Path(folder))
            try:
                found = measure(registry, args.members, args.lookups)
            finally:
                registry.close()
        for kind, stats in found.items():
            rows.append((backend, kind, stats))
            print(backend, kind, stats, flush=True)
    lines = [
        f"## Members' tokens: the lookup per request ({datetime.now(UTC):%Y-%m-%d})",
        "",
        f"`python benchmarks/token_lookup.py --members {args.members} --lookups {args.lookups}` on {machine()} "
        "(2 cores shared with other work). One lookup is what `eidetic serve` does for every request on a "
        "server with members: the SHA-256 of the token presented, then the registry by that digest (the state "
        "folder's file, read again only when it changes; or one indexed query on the postgres store's database, "
        "on the same machine). A wrong token and a near miss (the right one with its last character changed) "
        "cost the same: the digest hides how much of a token was right.",
        "",
        "| registry | token | p50 µs | p95 µs | mean µs |",
        "|---|---|---|---|---|",
        *(
            f"| {'file' if b == 'files' else 'postgres'} | {k} | {s['p50_us']} | {s['p95_us']} | {s['mean_us']} |"
            for b, k, s in rows
        ),
    ]
    update_doc("token-lookup", "\n".join(lines))


if __name__ == "__main__":
    main()
