"""The sqlite backend's derived indexes and writer lock follow the database file, not the cache
folder: processes with different cache folders (two users, a container) on one database see
each other's writes in every recall mode and serialise their duplicate checks, and a database
file replaced by another (or restored from a backup) is never searched through indexes built
for the old contents."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_process
from eidetic.index.schema import SCHEMA_VERSION
from eidetic.memory import Memory

pytestmark = pytest.mark.slow  # processes over two cache folders, and the model

MODES = ("exact", "keyword", "fields")
SEMANTIC = ("approximate", "hybrid")


class Side:
    """eidetic processes of one user: one cache folder, one database."""

    def __init__(self, root: Path, name: str, database: Path, model: bool = False) -> None:
        self.database = database
        self.env = dict(
            os.environ,
            EIDETIC_BACKEND="sqlite",
            EIDETIC_SQLITE_PATH=str(database),
            EIDETIC_CACHE_DIR=str(root / f"cache-{name}"),
        )
        if model:
            self.env.pop("EIDETIC_EMBEDDER", None)
        else:
            self.env["EIDETIC_EMBEDDER"] = "none"

    def run(self, *args: str, stdin: str | None = None) -> dict:
        done = run_process(*args, "--json", stdin=stdin, env=self.env)
        assert done.code == 0, done.err
        return done.json

    def remember(self, *records: dict) -> dict:
        return self.run("remember", stdin="".join(json.dumps(r) + "\n" for r in records))

    def purge(self, rid: str) -> None:
        self.run("forget", rid, "--purge", "--yes")

    def ids(self, query: str, mode: str, top_k: int = 50) -> list[str]:
        found = self.run("recall", query, "--mode", mode, "--top-k", str(top_k), "--depth", "0", "--no-record")
        return [item["id"] for item in found["items"]]


def _everywhere(side: Side, query: str, modes: tuple[str, ...] = MODES) -> dict[str, set[str]]:
    return {mode: set(side.ids(query, mode)) for mode in modes}


def test_two_cache_folders_see_each_others_writes_updates_and_purges(env):
    database = env / "db" / "shared.sqlite"
    ann, bob = Side(env, "ann", database), Side(env, "bob", database)
    ann.remember(
        {"id": "a1", "text": "ann keeps the lighthouse logbook"},
        *(
            {
                "id": f"t{i}",
                "text": f"turn {i} about the harbour",
                "metadata": {"thread": "c1"},
                "created": f"2025-01-0{i}T00:00:00+00:00",
            }
            for i in (1, 2, 3)
        ),
    )
    assert ann.ids("lighthouse", "keyword") == ["a1"]  # ann's derived indexes now exist
    bob.remember(
        {"id": "b1", "text": "bob repaints the lighthouse lantern"},
        {
            "id": "t4",
            "text": "turn 4 mentions zanzibar",
            "metadata": {"thread": "c1"},
            "created": "2025-01-04T00:00:00+00:00",
        },
    )
    for side in (ann, bob):
        assert _everywhere(side, "lighthouse") == {mode: {"a1", "b1"} for mode in MODES}
    # a thread member is found by its neighbours' words: ann's index quotes bob's new turn
    assert set(ann.ids("zanzibar", "keyword")) == {"t3", "t4"}

    bob.remember({"id": "a1", "text": "ann keeps the lighthouse quokkas"})  # an update by the other side
    assert _everywhere(ann, "logbook") == {mode: set() for mode in MODES}
    assert _everywhere(ann, "quokkas") == {mode: {"a1"} for mode in MODES}

    ann.purge("b1")
    bob.purge("t4")
    for side in (ann, bob):
        assert _everywhere(side, "lighthouse") == {mode: {"a1"} for mode in MODES}
        assert _everywhere(side, "lantern") == {mode: set() for mode in MODES}
    assert ann.ids("zanzibar", "keyword") == []  # t3's context no longer quotes the purged turn
    assert set(ann.ids("harbour", "keyword")) == {"t1", "t2", "t3"}

    ann.remember({"id": "a2", "text": "a second lighthouse, after the purges"})
    assert _everywhere(bob, "lighthouse") == {mode: {"a1", "a2"} for mode in MODES}


def test_two_cache_folders_with_the_model(env):
    database = env / "db" / "shared.sqlite"
    ann, bob = Side(env, "ann", database, model=True), Side(env, "bob", database, model=True)
    ann.remember(
        {"id": "music", "text": "The violinist played a concerto with the symphony orchestra."},
        {"id": "bread", "text": "Bake the sourdough bread at high heat until the crust is golden."},
    )
    assert ann.ids("baking loaves of bread", "approximate", 1) == ["bread"]
    bob.remember(
        {"id": "sport", "text": "The goalkeeper saved a penalty in the final minute of the football match."},
        {"id": "volcano", "text": "Volcanic eruptions spew lava and ash across the island."},
    )
    for side in (ann, bob):
        assert side.ids("soccer game", "approximate", 1) == ["sport"]
        assert side.ids("goalkeeper penalty", "hybrid", 1) == ["sport"]
        assert side.ids("orchestra", "exact") == ["music"] and side.ids("goalkeeper", "exact") == ["sport"]
    bob.remember({"id": "bread", "text": "Glaciers carve deep valleys into the frozen mountains."})
    bob.purge("music")
    for side in (ann, bob):
        assert side.ids("ice and snow on mountains", "approximate", 1) == ["bread"]
        assert side.ids("glaciers", "hybrid", 1) == side.ids("glaciers", "keyword") == ["bread"]
        for mode in SEMANTIC:
            assert "music" not in side.ids("classical music performance", mode)
        assert side.ids("sourdough", "keyword") == [] and side.ids("symphony", "exact") == []


def test_a_replaced_database_file_is_never_searched_through_the_old_indexes(env):
    database = env / "db" / "memory.sqlite"
    ann = Side(env, "ann", database, model=True)
    ann.remember(*({"id": f"old{i}", "text": f"lighthouse keeper's note number {i}"} for i in range(3)))
    assert _everywhere(ann, "lighthouse", MODES + SEMANTIC) == {m: {"old0", "old1", "old2"} for m in MODES + SEMANTIC}
    other = Side(env, "other", env / "elsewhere" / "memory.sqlite", model=True)
    other.remember(*({"id": f"new{i}", "text": f"volcano observatory reading number {i}"} for i in range(3)))
    _replace(other.database, database)
    for query in ("lighthouse", "volcano observatory"):
        for mode, found in _everywhere(ann, query, MODES + SEMANTIC).items():
            assert found <= {"new0", "new1", "new2"}, (query, mode)
            if query != "lighthouse" or mode == "approximate":  # hybrid drops the weakest non-match
                assert found == {"new0", "new1", "new2"}, (query, mode)


def test_a_database_restored_from_a_backup_is_not_searched_through_newer_indexes(env):
    database = env / "db" / "memory.sqlite"
    ann, bob = Side(env, "ann", database), Side(env, "bob", database)
    ann.remember({"id": "kept", "text": "the lighthouse stays"})
    backup = env / "backup.sqlite"
    _replace(database, backup, keep=True)
    ann.remember({"id": "lost", "text": "the lighthouse zebra, written after the backup"})
    assert _everywhere(ann, "zebra") == {mode: {"lost"} for mode in MODES}
    _replace(backup, database)
    bob.remember({"id": "later", "text": "a lighthouse yak, written after the restore"})  # takes lost's doc number
    for side in (ann, bob):
        assert _everywhere(side, "zebra") == {mode: set() for mode in MODES}
        assert _everywhere(side, "yak") == {mode: {"later"} for mode in MODES}
        assert _everywhere(side, "lighthouse") == {mode: {"kept", "later"} for mode in MODES}


def _replace(source: Path, target: Path, keep: bool = False) -> None:
    """Copy a database over another path as a user would, with no process using either (so no
    WAL side file is left), the copy arriving by rename."""
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{source}{suffix}").exists() and not Path(f"{target}{suffix}").exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    copy = target.with_name(target.name + ".incoming")
    shutil.copyfile(source, copy)
    os.replace(copy, target)
    if not keep:
        source.unlink()


# Widens the race between deciding and writing: each writer announces it has decided (its
# marker file) and waits, for a while, for the other to have decided too. Writers that share a
# lock cannot both be deciding, so the first one writes alone after the wait.
RACER = """
import sys, time
from pathlib import Path
from eidetic.cli.main import main
from eidetic.stores import sqlite

mine, theirs = Path(sys.argv[1]), Path(sys.argv[2])
write = sqlite.SqliteStore.write

def racing_write(self, items):
    mine.touch()
    deadline = time.monotonic() + 3
    while not theirs.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return write(self, items)

sqlite.SqliteStore.write = racing_write
sys.exit(main(sys.argv[3:]))
"""


def test_duplicate_detection_holds_across_cache_folders(env):
    database = env / "db" / "memory.sqlite"
    sides = [Side(env, name, database) for name in ("ann", "bob")]
    sides[0].remember({"id": "seed", "text": "something else"})  # the database exists
    markers = [env / "ann.decided", env / "bob.decided"]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                RACER,
                str(markers[n]),
                str(markers[1 - n]),
                "remember",
                "--json",
                json.dumps({"id": f"from-{n}", "text": "the same note, twice"}),
            ],
            env=side.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, side in enumerate(sides)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert sorted(r["upserted"] for r in results) == [0, 1]
    written = next(r["ids"][0] for r in results if r["upserted"])
    [duplicate] = [d for r in results for d in r["duplicates"]]
    assert duplicate["duplicate_of"] == written
    assert sides[1].ids("same note", "keyword") == [written]


def test_a_schema_10_database_is_upgraded_in_place(env):
    database = env / "db" / "memory.sqlite"
    ann, bob = Side(env, "ann", database), Side(env, "bob", database)
    ann.remember({"id": "a1", "text": "lighthouse one"}, {"id": "a2", "text": "lighthouse two"})
    # Schema 10 was this without the drop log and the change stamp, and its keyword indexes
    # kept no state of their own (a "pending" flag in the database instead); schema 11 added
    # the log and the stamp, schema 12 the listing indexes, schema 13 the columns of the event
    # clock and the dated lifecycle changes, schema 14 each text's normalised key.
    listing = ("docs_updated", "docs_created", "docs_name", "docs_supersedes", "docs_linking")
    with sqlite3.connect(database) as conn:
        for index in (*listing, "docs_norm"):
            conn.execute(f"DROP INDEX {index}")
        for column in ("occurred", "valid_from", "valid_until", "history", "norm"):
            conn.execute(f"ALTER TABLE docs DROP COLUMN {column}")
        conn.execute("DROP TABLE IF EXISTS dropped")
        conn.execute("DELETE FROM meta WHERE key='change'")
        conn.execute("UPDATE meta SET value='10' WHERE key='schema'")
        conn.execute("INSERT OR REPLACE INTO meta VALUES('keyword_pending', '1')")
        instance = conn.execute("SELECT value FROM meta WHERE key='instance'").fetchone()[0]
    conn.close()
    for state in (env / "cache-ann").rglob("state.json"):
        state.unlink()
    assert _everywhere(ann, "lighthouse") == {mode: {"a1", "a2"} for mode in MODES}
    with sqlite3.connect(database) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        assert conn.execute("SELECT id FROM docs ORDER BY id").fetchall() == [("a1",), ("a2",)]
    conn.close()
    assert SCHEMA_VERSION == "14" and meta["schema"] == "14" and meta["instance"] == instance
    assert "keyword_pending" not in meta and meta["change"] and "dropped" in tables and set(listing) <= tables
    assert [item["id"] for item in ann.run("list", "--sort", "name")["items"]] == ["a1", "a2"]
    ann.run("forget", "a1")  # purged below
    a1, a2 = ann.run("list", "--include-archived", "--sort", "name")["items"]
    assert "history" not in a2 and [(c["from"], c["to"]) for c in a1["history"]] == [("active", "archived")]
    bob.purge("a1")
    assert _everywhere(ann, "lighthouse") == {mode: {"a2"} for mode in MODES}


def test_a_long_running_process_follows_writes_from_another_cache_folder(env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    database = env / "db" / "memory.sqlite"
    bob = Side(env, "bob", database)
    bob.remember({"id": "b1", "text": "first lighthouse"})
    with Memory.open(backend="sqlite", db=database) as memory:  # like the MCP server: one Memory for long

        def found(query: str, mode: str) -> set[str]:
            return {hit.record.id for hit in memory.recall(query, mode=mode, depth=0, record=False).items}

        assert found("lighthouse", "keyword") == {"b1"}
        bob.remember({"id": "b2", "text": "second lighthouse"})
        assert found("lighthouse", "keyword") == found("lighthouse", "exact") == {"b1", "b2"}
        bob.purge("b1")
        assert found("lighthouse", "keyword") == found("lighthouse", "exact") == {"b2"}
