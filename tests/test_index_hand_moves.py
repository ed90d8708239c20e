"""The files backend's index against what hands do to a store between two commands: the store
folder behind a symlink, folders swapped for backups, files moved, doubled or replaced.
Each follows "what recall, list and show see is what the files say"; ``large_store`` makes a
small store be checked as a large one (folder state only, no slice of files)."""

from __future__ import annotations

import pytest

from conftest import ids, ndjson, rec


def okapis(cli) -> list[str]:
    return sorted(ids(cli("recall", "okapi", "--mode", "keyword", "--top-k", "50", "--json")))


@pytest.mark.parametrize("layout, checked_as", [("hashed", "small"), ("hashed", "large"), ("agent", "large")])
def test_a_store_folder_behind_a_symlink_sees_hand_edits_and_rebuilds_whole(cli, env, monkeypatch, layout, checked_as):
    if checked_as == "large":
        monkeypatch.setenv("EIDETIC_VERIFY_FILES", "0")
    real, link = env / "real", env / "link"
    real.mkdir()
    if layout == "agent":
        (real / "MEMORY.md").write_text("# Memory\n")
    link.symlink_to(real)
    monkeypatch.setenv("EIDETIC_DATA_DIR", str(link))
    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}, {"id": "b", "text": "beta okapi"}))
    assert okapis(cli) == ["a", "b"]
    (real / "hand.md").write_text("a hand-written okapi\n")
    next(real.rglob("b.md")).unlink()
    assert okapis(cli) == ["a", "hand"]
    assert cli("index", "--rebuild").code == 0
    assert okapis(cli) == ["a", "hand"]
    assert sorted(ids(cli("list", "--json"))) == ["a", "hand"]


def test_a_folder_put_back_from_a_backup_after_a_write_is_read_again(cli, store, tmp_path, large_store):
    """The backup's times are the ones the index last saw: only the write says to look again."""
    import shutil

    from eidetic.records import record_path

    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}))
    cli("recall", "okapi", "--mode", "keyword")
    shard = rec(store, "a").parent
    shutil.copytree(shard, tmp_path / "backup")  # copy2 and copystat: times kept
    twin = next(f"n{i}" for i in range(5000) if record_path(f"n{i}").startswith(shard.name + "/"))
    cli("remember", "--json", stdin=ndjson({"id": twin, "text": "new okapi"}))
    shutil.rmtree(shard)
    shutil.copytree(tmp_path / "backup", shard)
    assert okapis(cli) == ["a"]
    again = cli("remember", "--json", stdin=ndjson({"id": twin, "text": "new okapi"}))
    assert [item["status"] for item in again.json["items"]] == ["new"]
    assert rec(store, twin).is_file()


@pytest.mark.parametrize("checked_as", ["small", "large"])
def test_a_folder_swapped_for_a_symlink_is_never_read_through(cli, store, env, monkeypatch, checked_as):
    """Only the last part of a path is read without following symlinks: a folder above it
    made a symlink must drop what the index had below it, not read the files it points at."""
    import shutil

    if checked_as == "large":
        monkeypatch.setenv("EIDETIC_VERIFY_FILES", "0")
    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}))
    (store / "sub" / "deep").mkdir(parents=True)
    (store / "sub" / "deep" / "x.md").write_text("an okapi inside\n")
    assert okapis(cli) == ["a", "sub/deep/x"]
    outside = env / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "x.md").write_text("a secret okapi outside\n")
    shutil.rmtree(store / "sub")
    (store / "sub").symlink_to(outside)
    for _ in range(2):
        assert okapis(cli) == ["a"]
        assert ids(cli("recall", "secret", "--mode", "keyword", "--json")) == []
    assert cli("show", "sub/deep/x").code == 1
    assert "secret" not in cli("index", "--refresh").out


def test_an_agent_folder_copied_back_after_a_write_onto_its_old_inode_is_read_again(
    cli, store, tmp_path, large_store, monkeypatch
):
    """``cp -a backup memory`` after ``rm -rf memory``: ext4 and tmpfs often give the new folder
    the inode just freed (not reliably: pinned here), and ``cp -a`` sets the times the index
    last saw, so only the write says the folder, where an agent's files lie, must be listed."""
    import shutil

    from eidetic.stores.files.folder import RecordFolder

    monkeypatch.setattr(RecordFolder, "identity", lambda self: "0:reused")
    store.mkdir()
    (store / "MEMORY.md").write_text("# Memory\n")
    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}))
    assert okapis(cli) == ["a"]
    shutil.copytree(store, tmp_path / "backup")
    cli("remember", "--json", stdin=ndjson({"id": "b", "text": "beta okapi"}))
    shutil.rmtree(store)
    shutil.copytree(tmp_path / "backup", store)
    assert okapis(cli) == ["a"]
    again = cli("remember", "--json", stdin=ndjson({"id": "b", "text": "beta okapi"}))
    assert [item["status"] for item in again.json["items"]] == ["new"]
    assert sorted(p.name for p in store.glob("*.md")) == ["MEMORY.md", "a.md", "b.md"]


def test_records_in_a_folder_that_took_a_record_files_name_are_read(cli, store, large_store):
    cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi"}))
    path = rec(store, "a")
    text = path.read_text()
    path.unlink()
    path.mkdir()  # a.md is now a folder, holding a record file
    (path / "inner.md").write_text(text.replace("id: a", "id: inner"))
    assert okapis(cli) == ["inner"]
    again = cli("remember", "--json", stdin=ndjson({"id": "a", "text": "alpha okapi, again"}))
    assert [item["status"] for item in again.json["items"]] == ["new"]
    assert okapis(cli) == ["a", "inner"]
    assert (path / "inner.md").read_text().endswith("alpha okapi\n")
