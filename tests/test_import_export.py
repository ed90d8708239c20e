"""``eidetic import`` and ``export``: NDJSON round trips between stores and backends with
lifecycle, dates and usage; eidetic-cli JSONL stores; markdown memory folders; bad lines
reported with their place while the good ones are imported; importing twice writes nothing."""

from __future__ import annotations

import json

import pytest

from conftest import snapshot
from eidetic.stores.backends import SERVERS


@pytest.fixture(autouse=True)
def _no_model(monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")


def ndjson(*records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def at(kind: str, env, name: str) -> list[str]:
    """The flags that select a store of ``kind`` called ``name``."""
    if kind == "files":
        return ["--memory-dir", str(env / name)]
    return ["--backend", "sqlite", "--db", str(env / f"{name}.sqlite")]


def by_id(out: str) -> list[str]:
    return sorted(out.splitlines(), key=lambda line: json.loads(line)["id"])


def seed_varied(cli, where: list[str]) -> None:
    """Scopes (two private ones), links, supersedes (so a shadowed record), an archived one,
    metadata of every JSON type, unicode, names, attribution, dates, and usage."""
    assert (
        cli(
            "remember",
            *where,
            "--added-by",
            "ana",
            stdin=ndjson(
                {
                    "id": "lh",
                    "name": "lighthouse-keeper",
                    "description": "who keeps the light",
                    "type": "project",
                    "text": "The lighthouse log is kept in the tower",
                    "links": ["oil", "led"],
                    "metadata": {
                        "source": "log",
                        "n": 3,
                        "f": 2.5,
                        "ok": True,
                        "none": None,
                        "tags": ["a", "b"],
                        "nested": {"deep": [1, {"x": "y"}]},
                    },
                },
                {"id": "oil", "text": "lighthouse oil lamps", "created": "2024-05-05T00:00:00+00:00"},
                {"id": "led", "text": "lighthouse LED lamps replace the oil ones", "supersedes": "oil"},
                {"id": "Ünï/côdé id", "text": "Grüße, 東京, emoji 🚀, and a\nsecond line", "created": "date-unknown"},
                {"id": "old-news", "text": "an archived lighthouse rumour", "added_by": "bob"},
            ),
        ).code
        == 0
    )
    assert (
        cli(
            "remember",
            *where,
            "--scope",
            "me",
            "--visibility",
            "private",
            stdin=ndjson({"id": "mine", "text": "my private lighthouse note", "links": ["lh"]}),
        ).code
        == 0
    )
    assert (
        cli(
            "remember",
            *where,
            "--scope",
            "them",
            "--visibility",
            "private",
            stdin=ndjson({"id": "theirs", "text": "their private lighthouse note"}),
        ).code
        == 0
    )
    assert cli("forget", *where, "old-news").code == 0
    for _ in range(3):  # primary hits count 1, linked records 0.5: fractional usage too
        assert cli("recall", "lighthouse log tower", "--mode", "keyword", "--top-k", "1", *where).code == 0
    assert (
        cli(
            "recall",
            "private lighthouse",
            "--mode",
            "keyword",
            "--top-k",
            "1",
            "--depth",
            "0",
            "--scope",
            "me",
            "--visibility",
            "private",
            *where,
        ).code
        == 0
    )


@pytest.mark.parametrize("source,target", [("files", "files"), ("files", "sqlite"), ("sqlite", "files")])
def test_export_then_import_is_the_same_store(cli, env, source, target):
    src, dst = at(source, env, "src"), at(target, env, "dst")
    seed_varied(cli, src)
    private = ("--scope", "me", "--visibility", "private")
    first = cli("export", *src, *private)
    assert first.code == 0, first.err
    lines = [json.loads(line) for line in first.out.splitlines()]
    assert sorted(d["id"] for d in lines) == sorted(["lh", "oil", "led", "Ünï/côdé id", "old-news", "mine"])
    seen = {d["id"]: d for d in lines}
    assert (seen["oil"]["lifecycle"], seen["old-news"]["lifecycle"]) == ("shadowed", "archived")
    assert seen["lh"]["recall_count"] == 3 and seen["lh"]["last_recall"]
    assert (seen["led"]["recall_count"], seen["mine"]["recall_count"], seen["oil"]["recall_count"]) == (1.5, 1, 0)
    assert seen["Ünï/côdé id"]["created"] == "date-unknown" and seen["old-news"]["added_by"] == "bob"

    imported = cli("import", *dst, "--json", stdin=first.out)
    assert imported.code == 0, imported.err
    assert imported.json == {
        "format": "ndjson",
        "source": "-",
        "imported": 6,
        "written": 6,
        "unchanged": 0,
        "skipped": [],
        "warnings": [],
    }
    again = cli("export", *dst, *private)
    assert by_id(again.out) == by_id(first.out)
    assert cli("export", *dst).out.count('"mine"') == 0  # still private after the trip

    twice = cli("import", *dst, "--json", stdin=first.out)
    assert (twice.json["written"], twice.json["unchanged"]) == (0, 6)
    assert by_id(cli("export", *dst, *private).out) == by_id(first.out)


def test_import_from_a_file_writes_nothing_the_second_time(cli, env):
    src, dst = at("files", env, "src"), at("files", env, "dst")
    seed_varied(cli, src)
    dump = env / "dump.ndjson"
    dump.write_text(cli("export", *src).out, encoding="utf-8")
    assert cli("import", str(dump), *dst, "--json").json["written"] == 5
    before = snapshot(env / "dst")
    run = cli("import", str(dump), *dst)
    assert run.code == 0 and "0 written, 5 unchanged, 0 skipped" in run.out
    assert snapshot(env / "dst") == before


def test_bad_lines_are_reported_with_their_place_and_the_good_ones_imported(cli, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_MAX_TEXT_BYTES", "40")
    dst = at("files", env, "dst")
    dump = env / "mixed.ndjson"
    dump.write_bytes(
        "\n".join(
            [
                json.dumps(
                    {
                        "id": "good-1",
                        "text": "fine",
                        "lifecycle": "archived",
                        "recall_count": 2,
                        "last_recall": "2026-01-02T00:00:00+00:00",
                        "updated": "2026-01-01T00:00:00+00:00",
                    }
                ),
                "{not json",
                json.dumps({"id": "zombie", "text": "x", "lifecycle": "undead"}),
                json.dumps({"id": "huge", "text": "x" * 41}),
                json.dumps({"id": "typo", "text": "x", "metdata": {}}),
                "",
                json.dumps({"id": "neg", "text": "x", "recall_count": -1}),
                json.dumps({"id": "when", "text": "x", "last_recall": "yesterday"}),
                json.dumps({"id": "secret", "text": "x", "scope": {"name": "a", "visibility": "secret"}}),
                json.dumps(["not", "an", "object"]),
            ]
        ).encode()
        + b"\n\xff\xfe\n"
        + json.dumps({"id": "good-2", "text": "also fine"}).encode()
        + b"\n"
    )
    run = cli("import", str(dump), *dst, "--json")
    assert run.code == 1
    report = run.json
    assert (report["imported"], report["written"]) == (2, 2)
    errors = {item["line"]: item["error"] for item in report["skipped"]}
    assert all(item["path"] == str(dump) for item in report["skipped"])
    assert sorted(errors) == [2, 3, 4, 5, 7, 8, 9, 10, 11]
    assert "invalid JSON" in errors[2] and "unknown lifecycle 'undead'" in errors[3]
    assert "over the limit of 40" in errors[4] and "metdata" in errors[5] and "recall_count" in errors[7]
    assert "last_recall" in errors[8] and "unknown visibility" in errors[9] and "JSON object" in errors[10]
    assert "UTF-8" in errors[11]
    assert run.err_json["code"] == 1 and "9 item(s) skipped" in run.err_json["message"]
    exported = {d["id"]: d for d in map(json.loads, cli("export", *dst).out.splitlines())}
    assert sorted(exported) == ["good-1", "good-2"]
    good = exported["good-1"]
    assert (good["lifecycle"], good["recall_count"], good["last_recall"], good["updated"], good["created"]) == (
        "archived",
        2,
        "2026-01-02T00:00:00+00:00",
        "2026-01-01T00:00:00+00:00",
        "date-unknown",
    )
    text = cli("import", str(dump), *dst)
    assert text.code == 1 and f"warning: skipped {dump}:3: unknown lifecycle 'undead'" in text.err
    assert "0 written, 2 unchanged, 9 skipped" in text.out


def test_a_repeated_id_is_imported_once_and_a_conflicting_one_reported(cli, env):
    dst = at("files", env, "dst")
    same = {"id": "a", "text": "same"}
    run = cli(
        "import", *dst, "--json", stdin=ndjson(same, {"id": "b", "text": "b"}, same, {"id": "a", "text": "other"})
    )
    assert run.code == 1
    assert run.json["imported"] == 2
    assert run.json["skipped"] == [{"line": 4, "error": "id 'a' was already imported with other content from line 1"}]


def test_import_takes_a_scope_for_records_naming_none(cli, env):
    dst = at("files", env, "dst")
    run = cli(
        "import",
        *dst,
        "--scope",
        "me",
        "--visibility",
        "private",
        "--json",
        stdin=ndjson(
            {"id": "p", "text": "mine"},
            {"id": "q", "text": "public", "scope": {"name": "default", "visibility": "public"}},
        ),
    )
    assert run.code == 0
    assert [json.loads(x)["id"] for x in cli("export", *dst).out.splitlines()] == ["q"]
    mine = cli("export", *dst, "--scope", "me", "--visibility", "private").out
    assert '"p"' in mine


def test_export_without_usage_and_back_through_remember(cli, env):
    src = at("files", env, "src")
    seed_varied(cli, src)
    plain = [json.loads(x) for x in cli("export", *src, "--no-usage", "--active-only").out.splitlines()]
    assert plain and all("recall_count" not in d and "last_recall" not in d for d in plain)
    assert all(d["lifecycle"] == "active" for d in plain)
    # what export writes, remember reads too (it ignores lifecycle and usage)
    with_usage = cli("export", *src).out
    assert cli("remember", *at("files", env, "copy"), stdin=with_usage).code == 0


# -- eidetic-cli stores ----------------------------------------------------------------------


def envelope(rid, content, scope, **meta):
    return {
        "id": rid,
        "hash": "not-checked",
        "content": content,
        "scope": scope,
        "metadata": {
            "type": "note",
            "record_metadata": {},
            "created": None,
            "last_recall": None,
            "recall_count": 0,
            "links": [],
            "supersedes": None,
            "lifecycle": "active",
            "added_by": None,
            **meta,
        },
    }


def test_eidetic_cli_store_keeps_usage_lifecycle_and_scopes(cli, env):
    old = env / "dr-store"
    old.mkdir()
    public = {"name": "default", "visibility": "public"}
    private = {"name": "lobes", "visibility": "private"}
    (old / "default__public.jsonl").write_text(
        ndjson(
            envelope(
                "e1",
                "envelope one",
                public,
                type="lesson",
                record_metadata={"source": "discord", "n": 1},
                created="2025-01-02T03:04:05+00:00",
                recall_count=2.5,
                last_recall="2025-06-01T00:00:00+00:00",
                links=["e2"],
                added_by="lobes",
            ),
            envelope("e2", "envelope two", public, lifecycle="shadowed", type=""),
            {
                "id": "legacy",
                "text": "a legacy record line",
                "type": "note",
                "hash": "",
                "metadata": {"k": "v"},
                "scope": public,
                "created": "2024-01-01",
                "last_recall": None,
                "recall_count": 7,
                "links": None,
                "supersedes": None,
                "lifecycle": "archived",
                "signal": None,
                "score": None,
            },
        )
        + "{corrupt\n"
        + json.dumps(envelope("bad", "x", public, lifecycle="sleeping"))
        + "\n",
        encoding="utf-8",
    )
    (old / "lobes__private.jsonl").write_text(ndjson(envelope("p1", "private envelope", private)), encoding="utf-8")
    (old / "notes.txt").write_text("not a store file")
    dst = at("files", env, "dst")

    run = cli("import", str(old), *dst, "--json")
    assert run.code == 1 and run.json["format"] == "eidetic-cli"
    assert (run.json["imported"], run.json["written"]) == (4, 4)
    assert run.json["skipped"] == [
        {"path": "default__public.jsonl", "line": 4, "error": run.json["skipped"][0]["error"]},
        {"path": "default__public.jsonl", "line": 5, "error": "unknown lifecycle 'sleeping'"},
    ]
    assert "invalid JSON" in run.json["skipped"][0]["error"]
    got = {
        d["id"]: d
        for d in map(json.loads, cli("export", *dst, "--scope", "lobes", "--visibility", "private").out.splitlines())
    }
    assert sorted(got) == ["e1", "e2", "legacy", "p1"]
    e1 = got["e1"]
    assert (
        e1["type"],
        e1["metadata"],
        e1["created"],
        e1["recall_count"],
        e1["last_recall"],
        e1["links"],
        e1["added_by"],
    ) == (
        "lesson",
        {"source": "discord", "n": 1},
        "2025-01-02T03:04:05+00:00",
        2.5,
        "2025-06-01T00:00:00+00:00",
        ["e2"],
        "lobes",
    )
    assert (got["e2"]["type"], got["e2"]["lifecycle"], got["e2"]["created"]) == ("note", "shadowed", "date-unknown")
    legacy = got["legacy"]
    assert (legacy["lifecycle"], legacy["recall_count"], legacy["metadata"], legacy["links"]) == (
        "archived",
        7,
        {"k": "v"},
        [],
    )
    assert got["p1"]["scope"] == private
    assert "p1" not in cli("export", *dst).out
    assert cli("import", str(old), *dst, "--json").json["written"] == 0
    one_file = cli("import", str(old / "lobes__private.jsonl"), *at("files", env, "one"), "--json")
    assert (one_file.json["format"], one_file.json["imported"]) == ("eidetic-cli", 1)


# -- markdown memory folders -----------------------------------------------------------------


def test_markdown_memory_folder(cli, env):
    folder = env / "memory"
    (folder / "topics").mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Index\n- [deploy](feedback_deploy.md)\n")
    (folder / "feedback_deploy.md").write_text(
        "---\nname: deploy-checklist\ndescription: what to check before a deploy\ntype: feedback\n---\n"
        "Run the smoke tests before every deploy.\n"
    )
    (folder / "topics" / "user_prefs.md").write_text("---\nname: prefs\ntype: user\n---\nPrefers tabs.\n")
    (folder / "plain.md").write_text("No front matter at all, just a note.\n")
    (folder / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (folder / ".hidden.md").write_text("---\nname: hidden\n---\nnot a record\n")
    (folder / "readme.txt").write_text("not markdown")
    dst = at("sqlite", env, "dst")

    run = cli("import", str(folder), *dst, "--scope", "me", "--visibility", "private", "--json")
    assert run.code == 1 and run.json["format"] == "markdown"
    assert run.json["imported"] == 3
    assert [(s["path"], "YAML" in s["error"]) for s in run.json["skipped"]] == [("broken.md", True)]
    got = {
        d["id"]: d
        for d in map(json.loads, cli("export", *dst, "--scope", "me", "--visibility", "private").out.splitlines())
    }
    assert sorted(got) == ["feedback_deploy", "plain", "topics/user_prefs"]
    deploy = got["feedback_deploy"]
    assert (deploy["name"], deploy["description"], deploy["type"], deploy["text"], deploy["scope"]) == (
        "deploy-checklist",
        "what to check before a deploy",
        "feedback",
        "Run the smoke tests before every deploy.",
        {"name": "me", "visibility": "private"},
    )
    assert deploy["created"] == "date-unknown" and deploy["lifecycle"] == "active"
    assert cli("export", *dst).out == ""  # private to "me"
    hit = cli(
        "recall", "smoke tests", "--mode", "keyword", "--scope", "me", "--visibility", "private", "--json", *dst
    ).json["items"]
    assert [h["id"] for h in hit] == ["feedback_deploy"]


def test_an_eidetic_files_store_imports_as_markdown(cli, env):
    src = at("files", env, "src")
    seed_varied(cli, src)
    run = cli("import", "--format", "markdown", str(env / "src"), *at("sqlite", env, "dst"), "--json")
    assert run.code == 0 and run.json["imported"] == 7
    strip = lambda out: by_id(
        "\n".join(
            json.dumps({k: v for k, v in json.loads(line).items() if k not in ("recall_count", "last_recall")})
            for line in out.splitlines()
        )
    )
    private = ("--scope", "me", "--visibility", "private")
    assert strip(cli("export", *at("sqlite", env, "dst"), *private).out) == strip(cli("export", *src, *private).out)


def test_detection_and_source_errors(cli, env):
    (env / "empty").mkdir()
    run = cli("import", str(env / "empty"), "--json")
    assert run.code == 1 and "neither" in run.err_json["message"]
    assert cli("import", str(env / "nope"), "--json").err_json["message"].startswith("no such file or folder")
    (env / "f.ndjson").write_text("")
    assert "reads a folder" in cli("import", "--format", "eidetic-cli", "--json", stdin="").err_json["message"]
    assert "not a folder" in cli("import", "--format", "markdown", str(env / "f.ndjson"), "--json").err_json["message"]
    assert cli("import", str(env / "f.ndjson"), *at("files", env, "d"), "--json").json["imported"] == 0
    assert "nothing to import" in cli("import", "--json").err_json["message"]  # stdin is a terminal


def test_export_all_is_a_full_backup_that_import_restores_exactly(backend, cli, env, request):
    """Every scope (others' private records too), every lifecycle state, usage: export --all,
    import into an empty store of the same backend, export --all again: the same bytes."""
    seed_varied(cli, [])
    first = cli("export", "--all")
    assert first.code == 0, first.err
    lines = [json.loads(line) for line in first.out.splitlines()]
    assert [d["id"] for d in lines] == sorted(d["id"] for d in lines)
    assert {d["id"]: d["lifecycle"] for d in lines} == {
        "lh": "active",
        "oil": "shadowed",
        "led": "active",
        "Ünï/côdé id": "active",
        "old-news": "archived",
        "mine": "active",
        "theirs": "active",
    }
    assert {d["id"]: d["scope"]["name"] for d in lines if d["scope"]["visibility"] == "private"} == {
        "mine": "me",
        "theirs": "them",
    }
    assert next(d for d in lines if d["id"] == "led")["recall_count"] == 1.5
    assert first.err.splitlines()[-1] == "exported 7 record(s): every scope, visibility and lifecycle state"
    shared = "from the shared server" in first.err
    assert shared is (backend in SERVERS)

    if backend == "files":
        empty = ["--memory-dir", str(env / "copy")]
    elif backend == "sqlite":
        empty = ["--db", str(env / "copy.sqlite")]
    elif backend == "neo4j":
        empty = ["--uri", request.getfixturevalue("graph_server").database("copy")]
    else:
        from conftest import fresh_database

        empty = ["--dsn", fresh_database(request.getfixturevalue("postgres_dsn"), f"copy_{abs(hash(env)):x}")]
    imported = cli("import", *empty, "--json", stdin=first.out)
    assert imported.code == 0, imported.err
    assert (imported.json["imported"], imported.json["written"], imported.json["skipped"]) == (7, 7, [])
    again = cli("export", "--all", *empty)
    assert again.out == first.out
    assert cli("export", "--all", "--no-usage", *empty).out.count("recall_count") == 0


def test_export_says_what_it_left_out_and_never_counts_others_private_records(cli, env):
    src = at("files", env, "src")
    seed_varied(cli, src)
    public = cli("export", *src)
    assert public.err == (
        "exported 5 record(s) that scope default/public may see; private records are not exported "
        "(--all: a full backup)\n"
    )
    assert [json.loads(line) for line in cli("export", *src, "--json").err.splitlines()] == [
        {"info": public.err.strip()}
    ]
    active = cli("export", *src, "--active-only")
    assert len(active.out.splitlines()) == 3
    assert active.err.splitlines()[1] == (
        "1 shadowed and 1 archived record(s) left out by --active-only; export without it to include them"
    )
    mine = cli("export", *src, "--scope", "me", "--visibility", "private")
    assert "exported 6 record(s) that scope me/private may see; other scopes' private records" in mine.err
    # What scope "them" is told does not change when "me" has private records, or more of them.
    told = cli("export", *src, "--scope", "them", "--visibility", "private").err
    cli("remember", *src, "--scope", "me", "--visibility", "private", stdin=ndjson({"text": "more of mine"}))
    cli("forget", *src, "mine", "--scope", "me", "--visibility", "private")
    assert cli("export", *src, "--scope", "them", "--visibility", "private").err == told
    left = cli("export", *src, "--scope", "them", "--visibility", "private", "--active-only").err
    assert "\n1 shadowed and 1 archived record(s) left out" in left  # me's archived "mine" is not counted
    assert "2 archived" in cli("export", *src, "--scope", "me", "--visibility", "private", "--active-only").err
    for narrowing in (("--scope", "me"), ("--visibility", "private"), ("--active-only",)):
        refused = cli("export", "--all", *src, *narrowing, "--json")
        assert refused.code == 1 and refused.out == "" and narrowing[0] in refused.err_json["message"]
