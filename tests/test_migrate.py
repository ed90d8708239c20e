"""``eidetic migrate`` copies a whole store between backends: every record with its scope,
lifecycle, dates and usage; idempotently; and the two stores then answer recalls the same."""

from __future__ import annotations

import pytest

from conftest import fresh_database, ndjson
from eidetic.stores.backends import BACKENDS

PAIRS = [
    ("files", "sqlite"),
    ("sqlite", "files"),
    ("files", "postgres"),
    ("postgres", "sqlite"),
    ("sqlite", "neo4j"),
    ("neo4j", "files"),
]


def _location(kind: str, env, request, tag: str) -> list[str]:
    if kind == "files":
        return [f"--{tag}-dir", str(env / f"{tag}-store")]
    if kind == "sqlite":
        return [f"--{tag}-db", str(env / f"{tag}.sqlite")]
    if kind == "neo4j":
        server = request.getfixturevalue("graph_server")
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("EIDETIC_NEO4J_USER", server.user)
        monkeypatch.setenv("EIDETIC_NEO4J_PASSWORD", server.password)
        return [f"--{tag}-uri", server.database(f"migrate{tag}")]
    dsn = request.getfixturevalue("postgres_dsn")
    return [f"--{tag}-dsn", fresh_database(dsn, f"m_{tag}_{abs(hash(request.node.nodeid)):x}")]


def _select(kind: str, where: list[str]) -> list[str]:
    return ["--backend", kind, BACKENDS[kind].flag, where[1]]


QUERIES = [
    ("exact", "banana"),
    ("keyword", "banana bread"),
    ("keyword", "lighthouse"),
    ("fields", "keeper"),
    ("hybrid", "lighthouse keeper"),
]


@pytest.mark.parametrize("source,target", PAIRS)
def test_migrate_copies_everything_idempotently(cli, env, request, monkeypatch, source, target):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    src = _location(source, env, request, "from")
    dst = _location(target, env, request, "to")
    into = _select(source, src)
    assert (
        cli(
            "remember",
            *into,
            stdin=ndjson(
                {"id": "b1", "text": "banana bread recipe", "metadata": {"k": 1}, "links": ["lh"]},
                {"id": "b2", "text": "banana split", "created": "2025-05-05T00:00:00+00:00"},
                {
                    "id": "lh",
                    "name": "lighthouse keeper",
                    "description": "who keeps the light",
                    "text": "lighthouse log",
                },
                {"id": "old", "text": "lighthouse oil lamps"},
                {"id": "new", "text": "lighthouse LED lamps", "supersedes": "old"},
            ),
        ).code
        == 0
    )
    assert (
        cli(
            "remember",
            *into,
            "--scope",
            "ann",
            "--visibility",
            "private",
            stdin=ndjson({"id": "mine", "text": "ann private banana"}),
        ).code
        == 0
    )
    assert cli("forget", *into, "b2").code == 0
    for _ in range(3):
        cli("recall", "lighthouse", "--mode", "keyword", *into)

    first = cli("migrate", "--from", source, *src, "--to", target, *dst, "--json")
    assert first.code == 0, first.err
    assert first.json["records"] == 6 and first.json["written"] == 6
    again = cli("migrate", "--from", source, *src, "--to", target, *dst, "--json")
    assert again.json == dict(first.json, written=0, unchanged=6)

    out = _select(target, dst)
    # tantivy keeps deleted entries in its BM25 statistics until segments merge: compare
    # freshly built keyword indexes so scores must match exactly, not just the order.
    for side in (into, out):
        assert cli("index", "--rebuild", *side).code == 0
    for scope in ([], ["--scope", "ann", "--visibility", "private"]):
        for flags in ([], ["--include-archived", "--include-shadowed"]):
            for mode, query in QUERIES:
                args = ["recall", query, "--mode", mode, "--no-record", "--json", *scope, *flags]
                before = cli(*args, *into).json["items"]
                after = cli(*args, *out).json["items"]
                assert [_comparable(i) for i in after] == [_comparable(i) for i in before], (mode, query)
    [lh] = [i for i in cli("recall", "lighthouse log", "--mode", "exact", "--no-record", "--json", *out).json["items"]]
    assert lh["recall_count"] == 3 and lh["last_recall"] is not None


def _comparable(item: dict) -> dict:
    """Everything a recall returns (ids, texts, lifecycle, dates, usage, scores). The two
        recalls compared run a moment apart and freshness ages with the clock (the 6th decimal can
        tick over), and ``fields`` scores age with the file's mtime in a files store (the record's
        write time elsewhere): scores, signals and relevances (BM25 in float32 or float64, by
    backend) are compared to 1e-5. ``path`` is where the record's
        file is, which only the files backend has."""
    same = {key: value for key, value in item.items() if key != "path"}
    close = {key: pytest.approx(item[key], rel=1e-5) for key in ("score", "signal", "relevance") if key in item}
    return dict(same, **close)


def test_migrate_refuses_a_missing_source_and_unknown_backends(cli, env):
    missing = cli(
        "migrate",
        "--from",
        "sqlite",
        "--from-db",
        str(env / "nope.sqlite"),
        "--to",
        "files",
        "--to-dir",
        str(env / "x"),
        "--json",
    )
    assert missing.code == 1 and "nothing to copy" in missing.err_json["message"]
    assert not (env / "nope.sqlite").exists() and not (env / "x").exists()
    mongo = cli("migrate", "--from", "mongo", "--to", "files", "--json")
    assert mongo.code == 1 and "postgres" in mongo.err_json["remediation"]
