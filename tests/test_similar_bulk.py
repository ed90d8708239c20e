"""A bulk remember (hundreds of records at once) is checked against the stored records as a
single record is: identical text once normalised (the key stored with each record) and, when
embedded, meaning; in the record's own scope only, on every backend, and on stores written
before the key was stored (upgraded in place)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import ndjson
from eidetic import Memory
from eidetic.ranking.access import Access
from eidetic.records import normal_key

BACKUP = "The staging database is backed up every night at 2am"
BACKUP_AGAIN = "Every night at 2am the staging database gets backed up"
NOTES = [{"id": f"n{i}", "text": f"note {i}"} for i in range(100)]  # the bulk around the records that matter


def _items(run) -> dict[str, dict]:
    assert run.code == 0, run.err
    return {item["id"]: item for item in run.json["items"]}


def _near(item: dict) -> list[tuple[str, str]]:
    return [(near["id"], near["rule"]) for near in item.get("similar_to", [])]


def test_a_bulk_batch_finds_stored_near_duplicates_by_text_and_meaning(cli, backend, monkeypatch):
    """With the real model: a stored record of the same scope is named by text and by meaning;
    the same text in another scope (a private one of bob, a public one of alice) never is, not
    even as a count; and no warning sends the caller to consolidate any more."""
    monkeypatch.delenv("EIDETIC_EMBEDDER")
    alice = ("--scope", "alice", "--visibility", "private")
    assert cli("remember", "--id", "mine", BACKUP, *alice).code == 0
    assert cli("remember", "--id", "theirs", BACKUP, "--scope", "bob", "--visibility", "private").code == 0
    assert cli("remember", "--id", "public", BACKUP, "--scope", "alice").code == 0
    batch = [
        *NOTES,
        {"id": "again", "text": BACKUP_AGAIN},
        {"id": "twin", "text": BACKUP.upper() + "!"},
        {"id": "cat", "text": "The cat sleeps on the sofa all afternoon"},
    ]
    run = cli("remember", *alice, "--json", stdin=ndjson(*batch))
    items = _items(run)
    assert _near(items["again"])[0] == ("mine", "meaning") and "twin" not in _near(items["again"])  # twin is later
    assert 0.88 <= items["again"]["similar_to"][0]["score"] < 1
    assert _near(items["twin"])[0] == ("mine", "text") and ("again", "meaning") in _near(items["twin"])
    assert {rid for rid, _ in _near(items["twin"])} == {"mine", "again"}
    assert "similar_to" not in items["cat"] and "similar_to" not in items["n7"]
    assert "theirs" not in run.out and '"public"' not in run.out
    assert not any("consolidate" in warning for warning in run.json.get("warnings", []))


def test_a_bulk_batch_without_vectors_skips_and_supersedes(cli, backend):
    """--no-embed: the identical-text rule alone, against the store and within the batch, with
    skip (left out, naming the stored record) and supersede (the stored record shadowed)."""
    assert cli("remember", "--id", "a", "Deploys run on Tuesdays.").code == 0
    skipped = cli(
        "remember",
        "--on-similar",
        "skip",
        "--no-embed",
        "--json",
        stdin=ndjson(*NOTES, {"id": "b", "text": "deploys run on tuesdays"}, {"id": "n7-again", "text": "Note 7."}),
    )
    items = _items(skipped)
    assert items["b"]["status"] == "similar" and _near(items["b"]) == [("a", "text")]
    assert items["n7-again"]["status"] == "similar" and _near(items["n7-again"]) == [("n7", "text")]
    assert skipped.json["upserted"] == len(NOTES) and "b" not in skipped.json["ids"]
    superseding = cli(
        "remember",
        "--on-similar",
        "supersede",
        "--no-embed",
        "--json",
        stdin=ndjson(
            *[{"id": f"m{i}", "text": f"memo {i}"} for i in range(100)], {"id": "c", "text": "DEPLOYS run on Tuesdays!"}
        ),
    )
    c = _items(superseding)["c"]
    assert c["status"] == "new" and c["shadowed"] == "a" and _near(c) == [("a", "text")]
    assert cli("show", "a", "--json").json["lifecycle"] == "shadowed"


def test_a_bulk_batch_never_names_another_scopes_private_record(cli, backend):
    """The same text as bob's private record, remembered in bulk by alice (private) and into
    bob's public scope: never reported, so neither its id nor that it exists leaks."""
    secret = "Rotate the vault key on Mondays"
    assert cli("remember", "--id", "secret", secret, "--scope", "bob", "--visibility", "private").code == 0
    for scope in (("--scope", "alice", "--visibility", "private"), ("--scope", "bob")):
        run = cli(
            "remember",
            *scope,
            "--on-similar",
            "skip",
            "--no-embed",
            "--json",
            stdin=ndjson(
                *[{"id": f"{scope[1]}{i}", "text": f"note {i}"} for i in range(100)],
                {"id": "copy-" + scope[1], "text": secret.lower()},
            ),
        )
        items = _items(run)
        assert items["copy-" + scope[1]]["status"] == "new" and "similar_to" not in items["copy-" + scope[1]]
        assert "secret" not in run.out and run.json["upserted"] == 101
    mine = cli("remember", "--id", "own", secret + "!", "--scope", "bob", "--visibility", "private", "--json")
    assert _near(_items(mine)["own"]) == [("secret", "text")]  # bob's own private scope is told


def _schema_13(env, backend: str) -> None:
    """Take the store back to before each record carried its normalised key: the sqlite
    store's file to schema 13, the postgres store to schema 6; a files or graph store's index
    to 13 (derived: it is rebuilt from the files or the graph)."""
    if backend == "postgres":
        import os

        from pg_store import downgrade

        downgrade(os.environ["EIDETIC_PG_DSN"], 6)
        return
    if backend == "sqlite":
        database = env / "db" / "memory.sqlite"
    elif backend == "neo4j":  # the graph's derived copy, in the cache folder
        with Memory.open() as memory:
            [store] = memory.stores()
            database = Path(store.status()["index"])
    else:
        [database] = (env / "cache").rglob("*.sqlite")
    with sqlite3.connect(database) as conn:
        conn.execute("DROP INDEX docs_norm")
        conn.execute("ALTER TABLE docs DROP COLUMN norm")
        conn.execute("UPDATE meta SET value='13' WHERE key='schema'")
    conn.close()


def test_a_store_written_before_the_key_is_upgraded_and_its_records_found(cli, backend, env):
    cli("remember", "--json", stdin=ndjson(*[{"id": f"old{i}", "text": f"Old fact number {i}."} for i in range(5)]))
    _schema_13(env, backend)
    run = cli("remember", "--no-embed", "--json", stdin=ndjson(*NOTES, {"id": "new", "text": "old FACT number 3"}))
    assert _near(_items(run)["new"]) == [("old3", "text")]
    with Memory.open() as memory:  # every old record got its key, not only the one found
        [store] = memory.stores()
        found = store.by_normalised([normal_key(f"old fact number {i}") for i in range(5)], Access())
        assert sorted(rid for hits in found.values() for _, rid, _ in hits) == ["new"] + [f"old{i}" for i in range(5)]


def test_graph_walks_and_matrix_products_find_the_same(backend, monkeypatch):
    """A few queries against many rows walk the vector graph once each; a batch is compared
    with every row by matrix products. Both find the same near-duplicates, in scope only."""
    import numpy as np

    from eidetic.ranking import neighbours
    from eidetic.records import Scope

    monkeypatch.setenv("EIDETIC_ANN_THRESHOLD", "2")  # the files and sqlite partitions get a graph too
    rng = np.random.default_rng(7)
    base = rng.standard_normal((40, 16)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    records = [
        {"id": f"r{i}", "text": f"record {i}", "scope": {"name": "team" if i % 2 else "other", "visibility": "public"}}
        for i in range(40)
    ]
    by_text = {r["text"]: v for r, v in zip(records, base)}
    with Memory.open() as memory:
        memory.remember(records, embed=False)
        [store] = memory.stores()
        store.sync_vectors("test-model", None, lambda rows: {h: by_text[t] for (d, h), t in _texts(store, rows)})
        queries = base[:6] + 0.05 * rng.standard_normal((6, 16)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        access = Access(Scope("team", "public"), scope_only=True)
        answers = []
        for walk_rows in (10**9, 0):  # every query compared at once; every query walks
            monkeypatch.setattr(neighbours, "WALK_ROWS", walk_rows)
            found = store.similar("test-model", queries, access, 0.9, 8)
            answers.append([{store.by_docs([d])[d].record.id: round(s, 4) for d, s in near.items()} for near in found])
    assert answers[0] == answers[1]
    assert [sorted(near) for near in answers[0]] == [[], ["r1"], [], ["r3"], [], ["r5"]]  # "other" never named


def _texts(store, rows):
    texts = store.texts([doc for doc, _ in rows])
    return [((doc, h), texts[doc]) for doc, h in rows]


def test_the_ascii_path_normalises_as_the_unicode_rules_do():
    """ASCII text takes a faster path (``normalised``); it must agree with the general rule
    (NFKC, case folded, words alone) on every ASCII character, punctuation and controls too."""
    import random
    import unicodedata

    from eidetic.records import _WORD, normalised

    rng = random.Random(3)
    texts = ["".join(chr(rng.randrange(128)) for _ in range(rng.randrange(60))) for _ in range(20000)]
    texts += ["Use  uv, NOT pip!", "snake_case\tand\x1fcontrol\x0bchars--x1", "", "   ", "A.B,C;D"]
    for text in texts:
        assert normalised(text) == " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold())), text
    assert normalised("Café  déjà-vu") == "café déjà vu"  # not ASCII: the general rule


def test_the_text_output_says_how_many_records_left_unlisted_have_near_duplicates(cli, env):
    """A bulk remember lists its first records; a near-duplicate among the others is still
    counted on the terminal, not only in --json."""
    cli("remember", "--no-embed", "Use uv, not pip, for installs.")
    run = cli(
        "remember", "--no-embed", stdin=ndjson(*NOTES, {"id": "late", "text": "use UV -- not pip -- for installs"})
    )
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert "    1 of them with near-duplicates in their scope (--json names them)" in lines
    assert lines[-1] == "101 record(s): 101 new."
    quiet = cli(
        "remember", "--no-embed", stdin=ndjson(*[{"id": f"q{i}", "text": f"quiet {i} x{i}"} for i in range(60)])
    )
    assert not any("near-duplicates" in line for line in quiet.out.splitlines())
