from __future__ import annotations

import json
import os
import time

import pytest

from conftest import ids, ndjson, rec
from eidetic.stores.files.folder import RecordFolder


def hand_write(path, text):
    path.write_text(text)


def test_hand_added_edited_renamed_and_deleted_files_show_in_the_next_recall(cli, store):
    cli("remember", '{"id": "seed", "text": "seed record"}')
    hand_write(store / "extra.md", "---\nname: extra-note\ntype: project\n---\nThe zebra crossing is closed.\n")
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == ["extra"]
    # edited in place (same inode, same folder mtime)
    with open(store / "extra.md", "r+") as handle:
        content = handle.read().replace("zebra", "giraffe")
        handle.seek(0)
        handle.write(content)
        handle.truncate()
    assert ids(cli("recall", "giraffe", "--mode", "keyword", "--json")) == ["extra"]
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == []
    # replaced by rename, as editors and sed -i do
    tmp = store / ".swap"
    tmp.write_text("---\nname: extra-note\n---\nNow about an okapi.\n")
    os.replace(tmp, store / "extra.md")
    assert ids(cli("recall", "okapi", "--mode", "keyword", "--json")) == ["extra"]
    # in a subfolder
    (store / "sub").mkdir()
    hand_write(store / "sub" / "deep.md", "A deep note about lemurs.\n")
    assert ids(cli("recall", "lemurs", "--mode", "keyword", "--json")) == ["sub/deep"]
    # deleted
    (store / "extra.md").unlink()
    assert ids(cli("recall", "okapi", "--mode", "keyword", "--json")) == []
    (store / "sub" / "deep.md").unlink()
    (store / "sub").rmdir()
    assert ids(cli("recall", "lemurs", "--mode", "keyword", "--json")) == []
    assert ids(cli("recall", "seed", "--mode", "keyword", "--json")) == ["seed"]


def test_front_matter_id_is_authoritative_and_updates_go_to_that_file(cli, store):
    store.mkdir()
    hand_write(store / "whatever-name.md", "---\nid: real-id\n---\nOriginal words.\n")
    assert ids(cli("recall", "original", "--mode", "keyword", "--json")) == ["real-id"]
    cli("remember", '{"id": "real-id", "text": "Updated words."}')
    assert not (store / "real-id.md").exists()
    assert "Updated words." in (store / "whatever-name.md").read_text()


def test_memory_md_hidden_files_and_unparseable_files(cli, store):
    store.mkdir()
    hand_write(store / "MEMORY.md", "# index\n- [a](a.md) quokka\n")
    hand_write(store / ".hidden.md", "quokka hidden\n")
    hand_write(store / "notes.txt", "quokka text file\n")
    hand_write(store / "broken.md", "---\nid: [oops\n---\nquokka broken\n")
    hand_write(store / "good.md", "quokka good\n")
    (store / "binary.md").write_bytes(b"\xff\xfe quokka")
    run = cli("recall", "quokka", "--mode", "keyword", "--json")
    assert ids(run) == ["good"]
    assert "broken.md" in run.err and "binary.md" in run.err and "not valid YAML" in run.err
    status = cli("index", "--json").json["stores"][0]
    assert sorted(u["path"] for u in status["unparseable"]) == ["binary.md", "broken.md"]
    hand_write(store / "broken.md", "---\nid: fixed\n---\nquokka fixed\n")
    assert sorted(ids(cli("recall", "quokka", "--mode", "keyword", "--json"))) == ["fixed", "good"]


def test_symlinks_are_not_followed(cli, store, env):
    outside = env / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("quokka outside\n")
    store.mkdir()
    (store / "link.md").symlink_to(outside / "secret.md")
    (store / "dirlink").symlink_to(outside)
    assert ids(cli("recall", "quokka", "--mode", "keyword", "--json")) == []


def test_duplicate_ids_serve_one_file_and_report_the_conflict(cli, store):
    cli("remember", '{"id": "dup", "text": "canonical quokka"}')
    hand_write(store / "copy.md", "---\nid: dup\n---\ncopied quokka\n")
    assert ids(cli("recall", "quokka", "--mode", "keyword", "--json")) == ["dup"]
    status = cli("index", "--json").json["stores"][0]
    assert status["conflicts"] == [{"id": "dup", "path": "copy.md"}]


def test_index_lives_outside_the_store_and_rebuilds_without_loss(cli, store, env):
    cli("remember", stdin=ndjson(*({"id": f"r{i}", "text": f"record number {i} quokka"} for i in range(30))))
    assert sorted(p.name for p in store.rglob("*") if p.is_file()) == sorted(
        [f"r{i}.md" for i in range(30)] + [".eidetic.lock"]
    )
    status = cli("index", "--json").json["stores"][0]
    assert status["records"] == 30 and status["current"] is True
    assert str(env / "cache") in status["index"]
    before = cli("recall", "quokka", "--mode", "keyword", "--top-k", "30", "--json", "--no-record").json["items"]
    rebuilt = cli("index", "--rebuild", "--json")
    assert rebuilt.json["stores"][0]["records"] == 30
    after = cli("recall", "quokka", "--mode", "keyword", "--top-k", "30", "--json", "--no-record").json["items"]
    # a moment apart, freshness has aged a little (scores are not rounded): same ranking
    assert [i["id"] for i in after] == [i["id"] for i in before]
    assert [i["score"] for i in after] == pytest.approx([i["score"] for i in before], rel=1e-6)
    text = cli("index")
    assert "records: 30" in text.out and "current" in text.out


def test_index_reports_stale_after_a_hand_edit(cli, store):
    cli("remember", '{"id": "a", "text": "alpha"}')
    hand_write(store / "b.md", "beta\n")
    assert cli("index", "--json").json["stores"][0]["current"] is False
    cli("recall", "beta", "--mode", "keyword")
    assert cli("index", "--json").json["stores"][0]["current"] is True


def test_recall_reads_only_changed_files(cli, store, monkeypatch):
    cli("remember", stdin=ndjson(*({"id": f"r{i}", "text": f"record {i}"} for i in range(50))))
    time.sleep(0.1)  # past the racy window: files written a moment ago are re-checked by content
    cli("recall", "record", "--mode", "keyword")
    reads = []
    original = RecordFolder.read_text

    def counting(self, rel):
        reads.append(rel)
        return original(self, rel)

    monkeypatch.setattr(RecordFolder, "read_text", counting)
    cli("recall", "record", "--mode", "keyword")
    assert reads == []
    time.sleep(0.01)
    with open(rec(store, "r7"), "a") as handle:
        handle.write("appended line\n")
    assert ids(cli("recall", "appended", "--mode", "keyword", "--json")) == ["r7"]
    assert reads == [str(rec(store, "r7").relative_to(store))]


def test_a_deleted_store_empties_the_index(cli, store):
    cli("remember", '{"id": "a", "text": "alpha"}')
    import shutil

    shutil.rmtree(store)
    assert ids(cli("recall", "alpha", "--mode", "keyword", "--json")) == []


def test_a_store_folder_made_again_is_written_and_read_anew(cli, store, large_store):
    import shutil

    batch = ndjson(*({"id": f"r{i}", "text": f"record {i} quokka"} for i in range(40)))
    cli("remember", "--json", stdin=batch)
    shutil.rmtree(store)  # deleted and made again before any recall looked at it
    again = cli("remember", "--json", stdin=batch)
    assert {item["status"] for item in again.json["items"]} == {"new"}
    assert all(rec(store, f"r{i}").exists() for i in range(40))
    # one hash folder deleted right after a write: its records go from the index too
    gone = rec(store, "r7").parent
    lost = {p.stem for p in gone.glob("*.md")}
    shutil.rmtree(gone)
    found = set(ids(cli("recall", "quokka", "--mode", "keyword", "--top-k", "100", "--json")))
    assert found == {f"r{i}" for i in range(40)} - lost


def test_a_backup_moved_into_the_store_folder_is_what_recall_reads(cli, store, tmp_path, large_store):
    import shutil

    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}, {"id": "b", "text": "beta okapi"}))
    cli("recall", "okapi", "--mode", "keyword")
    backup = tmp_path / "backup"
    shutil.copytree(store, backup)  # copy2 and copystat: the files' and folders' times are kept
    with open(rec(store, "a"), "a") as handle:  # edited in place: no folder's time changes
        handle.write("zebra\n")
    cli("index", "--refresh")
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == ["a"]
    shutil.rmtree(store)
    shutil.move(backup, store)
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == []
    assert sorted(ids(cli("recall", "okapi", "--mode", "keyword", "--json"))) == ["a", "b"]


def test_corrupt_index_is_rebuilt(cli, store, env):
    cli("remember", '{"id": "a", "text": "alpha"}')
    index = next((env / "cache" / "index").glob("*.sqlite"))
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{index}{suffix}"):
            os.unlink(f"{index}{suffix}")
    index.write_bytes(b"this is not a database" * 100)
    assert ids(cli("recall", "alpha", "--mode", "keyword", "--json")) == ["a"]


def test_keyword_index_is_rebuilt_after_a_crash_between_sqlite_and_tantivy(cli, store, env):
    import shutil
    import sqlite3

    cli("remember", '{"id": "a", "text": "alpha quokka"}')
    index = next((env / "cache" / "index").glob("*.sqlite"))
    shutil.rmtree(index.with_suffix(".tantivy"))
    assert ids(cli("recall", "quokka", "--mode", "keyword", "--json")) == ["a"]
    # a writer died after SQLite committed and before the keyword index did
    cli("remember", '{"id": "b", "text": "beta quokka"}')
    conn = sqlite3.connect(index)
    conn.execute("INSERT OR REPLACE INTO meta VALUES('keyword_pending', '1')")
    conn.commit()
    conn.close()
    shutil.rmtree(index.with_suffix(".tantivy"))
    assert sorted(ids(cli("recall", "quokka", "--mode", "keyword", "--json"))) == ["a", "b"]


def test_large_stores_verify_a_bounded_slice_per_recall(cli, store, monkeypatch):
    from eidetic.stores.files import folder_changes, folder_index

    for module in (folder_changes, folder_index):  # not re-checked by recency here
        monkeypatch.setattr(module, "is_racy", lambda *args: False)
    cli("remember", stdin=ndjson(*({"id": f"r{i}", "text": f"record {i}"} for i in range(300))))
    cli("recall", "record", "--mode", "keyword")
    monkeypatch.setenv("EIDETIC_VERIFY_FILES", "20")
    stats = []
    original = RecordFolder.stat_file

    def counting(self, rel):
        stats.append(rel)
        return original(self, rel)

    monkeypatch.setattr(RecordFolder, "stat_file", counting)
    time.sleep(0.01)
    with open(rec(store, "r42"), "r+") as handle:  # in place: no folder mtime changes
        text = handle.read().replace("record 42", "record 42 okapi")
        handle.seek(0)
        handle.write(text)
    recalls = 0
    while not ids(cli("recall", "okapi", "--mode", "keyword", "--json")):
        recalls += 1
        assert recalls <= 15  # one full round of 300 files, 20 per recall
    assert len(stats) <= 20 * (recalls + 1)  # each recall stat-checked 20 files, not 300
    assert len(set(stats)) == len(stats)  # round robin: no file twice within a round
    monkeypatch.setattr(folder_changes, "verification_slice", lambda *args: [])
    time.sleep(0.01)
    with open(rec(store, "r43"), "a") as handle:
        handle.write("zebra\n")
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == []  # not checked yet
    cli("index", "--refresh")
    assert ids(cli("recall", "zebra", "--mode", "keyword", "--json")) == ["r43"]


@pytest.mark.slow
def test_watch_indexes_in_place_edits_at_once(store, env, monkeypatch):
    """With `eidetic watch` running, an edit in place is found even when recall's own
    verification slice would not reach it for a long time."""
    import subprocess
    import sys

    from conftest import run_process

    run_process("remember", stdin=ndjson(*({"id": f"r{i}", "text": f"record {i}"} for i in range(200))))
    environment = dict(os.environ, EIDETIC_VERIFY_FILES="0")  # no slice: only the watcher can see it
    watcher = subprocess.Popen(
        [sys.executable, "-m", "eidetic", "watch"], stderr=subprocess.PIPE, text=True, env=environment
    )
    try:
        assert "watching" in watcher.stderr.readline()
        time.sleep(0.1)
        with open(rec(store, "r123"), "r+") as handle:
            text = handle.read().replace("record 123", "record 123 pangolin")
            handle.seek(0)
            handle.write(text)
        deadline = time.time() + 5
        while time.time() < deadline:
            found = run_process("recall", "pangolin", "--mode", "keyword", "--json", env=environment)
            if json.loads(found.out)["items"]:
                break
            time.sleep(0.05)
        assert [i["id"] for i in json.loads(found.out)["items"]] == ["r123"]
    finally:
        watcher.terminate()
        log = watcher.communicate(timeout=10)[1]
    assert "1 updated" in log
