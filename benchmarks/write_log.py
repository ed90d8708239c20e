"""What the write log costs: one append (what every write through ``eidetic serve`` pays on top
of its own work) and one ``eidetic log`` read, for the JSON-lines file and the postgres table.

    python benchmarks/write_log.py [--appends 2000] [--size 100000]

Each log first takes ``--appends`` entries one at a time, through ``ServerLog.append`` as a
server calls it (the file: open, lock, one write, fsync; postgres: one INSERT on a server this
script starts), timed each; then it is filled to ``--size`` entries (in bulk, untimed) and the
reads of ``eidetic log`` are timed: the newest 50, one record's writes (``--id``), one member's
last week (``--member --since``). Medians and 95th percentiles; the results go to
``benchmarks/results/`` and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from eidetic.records import Scope  # noqa: E402
from eidetic.team.write_log import FILE_NAME, Entry, FileBook, PostgresBook, ServerLog, Wanted, stamp  # noqa: E402
from measure import machine  # noqa: E402
from report import update_doc  # noqa: E402

MEMBERS = [f"agent-{n}" for n in range(32)]
READ_RUNS = 21


def quantiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[int(0.95 * (len(ordered) - 1))] * 1000


def appends(book, count: int) -> list[float]:
    log = ServerLog(book, Scope("team", "public"))
    took = []
    for n in range(count):
        started = time.perf_counter()
        log.append(MEMBERS[n % len(MEMBERS)], "remember", [f"rec-{n}"])
        took.append(time.perf_counter() - started)
    return took


def history(start: int, size: int) -> list[Entry]:
    """``size`` entries spread over the past 60 days, oldest first, one id each."""
    now = datetime.now(UTC)
    return [
        Entry(
            stamp(now - timedelta(days=60) + timedelta(seconds=n * 60 * 86400 / size)),
            MEMBERS[n % len(MEMBERS)],
            ("remember", "forget", "edit")[n % 3],
            (f"rec-{n}",),
            "team/public",
        )
        for n in range(start, size)
    ]


def fill_file(book: FileBook, entries: list[Entry]) -> None:
    with book.path.open("a") as handle:
        handle.writelines(json.dumps(e.to_dict(), separators=(",", ":")) + "\n" for e in entries)


def fill_postgres(dsn: str, entries: list[Entry]) -> None:
    import psycopg

    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy("COPY eidetic_write_log(at, member, operation, ids, scope) FROM STDIN") as copy:
            for e in entries:
                copy.write_row((datetime.fromisoformat(e.time), e.member, e.operation, list(e.ids), e.scope))
        cur.execute("ANALYZE eidetic_write_log")


def reads(book, size: int) -> dict[str, tuple[float, float]]:
    week = datetime.now(UTC) - timedelta(days=7)
    wanted: dict[str, Wanted] = {
        "newest 50": Wanted(limit=51),
        "--id": Wanted(id=f"rec-{size // 2}", limit=51),
        "--member --since 7d": Wanted(member=MEMBERS[3], since=week, limit=51),
    }
    out = {}
    for name, query in wanted.items():
        took = []
        for _ in range(READ_RUNS):
            started = time.perf_counter()
            book.read(query)
            took.append(time.perf_counter() - started)
        out[name] = quantiles(took)
    return out


def measure(name: str, book, count: int, size: int, fill: Callable[[list[Entry]], None]) -> dict:
    took = appends(book, count)
    fill(history(count, size))
    return {"log": name, "append": quantiles(took), "reads": reads(book, size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100_000)
    args = parser.parse_args()
    from pg_server import start_postgres

    results = []
    with tempfile.TemporaryDirectory() as work:
        book = FileBook(Path(work) / FILE_NAME)
        results.append(measure("file", book, args.appends, args.size, lambda es: fill_file(book, es)))
        dsn, stop = start_postgres(Path(work) / "pg")
        try:
            pg = PostgresBook(dsn)
            results.append(measure("postgres", pg, args.appends, args.size, lambda es: fill_postgres(dsn, es)))
            pg.close()
        finally:
            stop()
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "write_log.json").write_text(json.dumps({"date": when, "results": results}, indent=2))
    rows = [
        f"| {r['log']} | {r['append'][0]:.2f} / {r['append'][1]:.2f} | "
        + " | ".join(f"{p50:.1f} / {p95:.1f}" for p50, p95 in r["reads"].values())
        + " |"
        for r in results
    ]
    body = "\n".join(
        [
            "## The write log (`benchmarks/write_log.py`)",
            "",
            f"`.venv/bin/python benchmarks/write_log.py --appends {args.appends} --size {args.size}`, {when}, "
            f"{machine()} (2 shared cores). An append is what every write through `eidetic serve` pays "
            "on top of its own work; a read is `eidetic log`'s query on a log of "
            f"{args.size:,} entries. Milliseconds, p50 / p95. The file is read from its end, so the "
            "newest entries cost what they hold, and one record's writes (`--id`) a pass over the whole "
            "file; the table finds them through its indexes (GIN for ids).",
            "",
            "| log | append | newest 50 | one record (`--id`) | one member, 7 days |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )
    update_doc("write-log", body)
    print(body)


if __name__ == "__main__":
    main()
