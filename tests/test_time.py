"""Two clocks per record and ``--as-of``, as a user and an attacker meet them: the event clock in
and out of every format, the history eidetic dates, hostile values, the moment ``--as-of``
names, the scope rule as of any date, and the viewer. (Every backend: test_contract.py and the
property in test_as_of_property.py.)"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from conftest import ids, ndjson, rec
from eidetic import Memory
from eidetic.mcp.server import _recall_signature
from eidetic.records import Scope
from eidetic.session import Session
from web_client import hit_ids, page, served

MARCH = datetime(2026, 3, 1, 12, tzinfo=UTC)
CLOCKED = {
    "id": "outage",
    "text": "The payments outage lasted two hours",
    "occurred": "2026-02-27T14:00:00+00:00",
    "valid_from": "2026-02-27",
    "valid_until": "2026-12-31",
}


def days(n: float) -> datetime:
    return MARCH + timedelta(days=n)


@pytest.fixture
def quiet(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    return store


def test_the_event_clock_goes_in_and_comes_out_of_every_format(cli, quiet):
    assert cli("remember", json.dumps(CLOCKED)).code == 0
    assert cli("remember", "no clock at all", "--id", "plain").code == 0
    item = cli("recall", "payments outage", "--mode", "keyword", "--json").json["items"][0]
    assert {key: item[key] for key in ("occurred", "valid_from", "valid_until")} == {
        key: CLOCKED[key] for key in ("occurred", "valid_from", "valid_until")
    }
    plain = cli("recall", "no clock", "--mode", "exact", "--json").json["items"][0]
    assert not {"occurred", "valid_from", "valid_until", "history"} & set(plain)  # absent, not null
    text = cli("recall", "payments outage", "--mode", "keyword", "--format", "text").out
    assert "occurred: 2026-02-27T14:00:00+00:00" in text and "valid: from 2026-02-27 until 2026-12-31" in text
    assert "valid:" not in cli("recall", "no clock", "--mode", "exact", "--format", "text").out
    shown = cli("show", "outage").out
    assert "occurred" in shown and "from 2026-02-27 until 2026-12-31" in shown
    file_text = rec(quiet, "outage").read_text()
    assert 'valid_until: "2026-12-31"' in file_text and "history" not in file_text
    exported = [json.loads(line) for line in cli("export", "--all").out.splitlines()]
    assert {r["id"]: r.get("valid_until") for r in exported} == {"outage": "2026-12-31", "plain": None}


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("occurred", "last tuesday", "'occurred' is not an ISO-8601 date"),
        ("valid_from", 20260301, "'valid_from' is not an ISO-8601 date"),
        ("valid_until", "2026-01-01", "'valid_until' (2026-01-01) is before 'valid_from'"),
        ("valid_until", ["2026-12-01"], "'valid_until' is not an ISO-8601 date"),
    ],
)
def test_a_bad_event_clock_is_refused_and_nothing_is_written(cli, quiet, field, value, says):
    record = {"id": "bad", "text": "x", "valid_from": "2026-02-01", field: value}
    run = cli("remember", "--json", stdin=ndjson({"id": "fine", "text": "fine"}, record))
    assert run.code == 1 and says in run.err_json["message"] and "explain time" in run.err_json["remediation"]
    assert ids(cli("recall", "fine", "--mode", "exact", "--json")) == []


def test_forget_restore_and_supersede_are_dated_in_the_file_and_edit_cannot_change_them(quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "old", "text": "Standups are at nine", "valid_from": "2026-01-01"}], now=days(0))
        memory.set_lifecycle("old", "archived", now=days(1))
        memory.set_lifecycle("old", "active", now=days(2))
        result = memory.remember([{"id": "new", "text": "Standups are at ten", "supersedes": "old"}], now=days(3))
        assert result.items[0]["shadowed"] == "old"
        old = memory.get("old")
        assert [(c.at, c.old, c.new) for c in old.history] == [
            ("2026-03-02T12:00:00+00:00", "active", "archived"),
            ("2026-03-03T12:00:00+00:00", "archived", "active"),
            ("2026-03-04T12:00:00+00:00", "active", "shadowed"),
        ]
        assert '  - {at: "2026-03-04T12:00:00+00:00", from: active, to: shadowed}' in rec(quiet, "old").read_text()
        # an edit keeps the history and may set the event clock, but not rewrite the history
        from eidetic.memory.editing import edit_text

        text = edit_text(old)
        edited = text.replace('valid_from: "2026-01-01"', 'valid_from: "2026-01-02"')
        memory.save_edit(old, edited)
        assert memory.get("old").valid_from == "2026-01-02" and memory.get("old").history == old.history
        again = memory.get("old")
        with pytest.raises(Exception, match="cannot change the history"):
            memory.save_edit(again, edit_text(again).replace("to: shadowed", "to: archived"))


def test_a_superseded_record_says_its_validity_closed_where_it_was_superseded(cli, quiet):
    assert cli("remember", json.dumps({"id": "v1", "text": "The API is at v1", "valid_until": "2099-01-01"})).code == 0
    assert cli("remember", "The API is at v2", "--id", "v2", "--supersedes", "v1").code == 0
    shown = cli("show", "v1").out
    assert "(superseded)" in shown and "until 2099" not in shown and "active -> shadowed" in shown
    restored = cli("restore", "v1")
    assert restored.code == 0
    assert "until 2099-01-01" in cli("show", "v1").out  # active again: its own interval


@pytest.mark.parametrize(
    "history, why",
    [
        ("5", "'history' must be a list"),
        ("[{at: soon, from: active, to: archived}]", "'at' is not an ISO-8601 date"),
        ("[{at: 2026-01-01, from: active, to: gone}]", "'to' must be one of"),
        ("[{at: 2026-01-01, from: active}]", "exactly the keys at, from and to"),
        ("[" + ", ".join(["{at: 2026-01-01, from: active, to: archived}"] * 1001) + "]", "more than 1000"),
    ],
)
def test_a_hand_written_file_with_a_malformed_history_is_skipped_with_its_reason(cli, quiet, history, why):
    good = quiet / "notes" / "good.md"
    good.parent.mkdir(parents=True)
    good.write_text("---\nid: good\n---\n\nhand written and fine\n")
    (quiet / "notes" / "bad.md").write_text(f"---\nid: bad\nhistory: {history}\n---\n\nhand written and broken\n")
    run = cli("recall", "hand written", "--mode", "exact", "--json")
    assert run.code == 0 and ids(run) == ["good"]
    assert "bad.md" in run.err and why in run.err
    index = cli("index", "--json")
    assert index.code == 0 and why in json.dumps(index.json)
    assert cli("audit", "--json").code == 0 and cli("doctor", "--json").code in (0, 1)
    assert cli("recall", "hand written", "--mode", "exact", "--as-of", "2026-01-02", "--json").code == 0


def test_as_of_names_a_moment_a_bare_date_is_its_whole_day_and_the_future_is_now(cli, quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "late", "text": "written late in the day"}], now=MARCH.replace(hour=23))
    assert ids(cli("recall", "late", "--mode", "exact", "--as-of", "2026-03-01", "--json")) == ["late"]
    assert ids(cli("recall", "late", "--mode", "exact", "--as-of", "2026-03-01T22:59:59Z", "--json")) == []
    assert ids(cli("recall", "late", "--mode", "exact", "--as-of", "2026-02-28", "--json")) == []
    future = cli("recall", "late", "--mode", "exact", "--as-of", "2999-01-01", "--json").json
    assert [i["id"] for i in future["items"]] == ["late"] and future["as_of"] < "2999"
    for bad in ("soonish", "2026-13-01", "", "2026-03-01\x00"):
        run = cli("recall", "late", "--as-of", bad, "--json")
        assert run.code == 1 and "--as-of" in run.err_json["message"], bad
        assert "end of that day" in run.err_json["remediation"]


def test_as_of_counts_no_usage_and_judges_freshness_at_that_moment(cli, quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "n", "text": "the kiln fires at cone six"}], now=days(-300))
        for _ in range(3):
            memory.recall("kiln", mode="keyword")
        then = memory.recall("kiln", mode="keyword", as_of=days(-299).isoformat(), now=days(0))
        assert memory.show("n").item.recall_count == 3  # the as-of recall counted nothing
        [hit] = then.items
        assert hit.recall_count == 3 and hit.signal == pytest.approx(0.5 / (1 + 0.01), abs=1e-3)  # a day old, no usage


def test_as_of_follows_links_and_supersedes_as_they_stood(quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "plan", "text": "the migration plan", "links": ["step"]}], now=days(0))
        memory.remember([{"id": "step", "text": "run the schema scripts first"}], now=days(2))
        memory.remember([{"id": "plan-2", "text": "the new migration plan", "supersedes": "plan"}], now=days(4))

        def found(when: float, **flags) -> list[tuple[str, str, str]]:
            result = memory.recall("migration plan", mode="keyword", as_of=days(when).isoformat(), **flags)
            return sorted((h.record.id, h.tier, h.record.lifecycle) for h in result.items)

        assert found(1) == [("plan", "primary", "active")]  # step did not exist yet: not reached
        assert found(3) == [("plan", "primary", "active"), ("step", "traversal", "active")]
        assert found(5) == [("plan-2", "primary", "active")]  # plan is shadowed then: a dead end
        assert {(rid, state) for rid, _, state in found(5, include_shadowed=True)} == {
            ("plan", "shadowed"),
            ("plan-2", "active"),
            ("step", "active"),
        }
        [listed] = memory.list_records(as_of=days(1).isoformat()).items
        assert listed.record.id == "plan" and listed.record.history == ()


def test_as_of_never_reveals_another_scopes_private_records(cli, quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "a-secret", "text": "the vault code is 1234"}], scope="alice", visibility="private")
        memory.set_lifecycle("a-secret", "archived", scope="alice", visibility="private")
    for who in ([], ["--scope", "bob", "--visibility", "private"], ["--scope", "alice"]):
        for flags in ([], ["--include-archived", "--include-shadowed"]):
            run = cli("recall", "vault code", "--mode", "exact", "--as-of", "2999-01-01", "--json", *who, *flags)
            assert run.code == 0 and run.json["items"] == [] and "hidden" not in run.json, (who, flags)
            listed = cli("list", "--as-of", "2999-01-01", "--json", *who, *flags)
            assert listed.json == {"items": [], "total": 0, "as_of": listed.json["as_of"]}, (who, flags)
    mine = cli(
        "recall",
        "vault",
        "--mode",
        "exact",
        "--as-of",
        "2999-01-01",
        "--scope",
        "alice",
        "--visibility",
        "private",
        "--json",
    )
    assert mine.json["items"] == [] and mine.json["hidden"] == {"archived": 1}


def test_import_and_export_carry_both_clocks_to_another_backend(cli, quiet, env):
    with Memory.open() as memory:
        memory.remember([CLOCKED], now=days(0))
        memory.set_lifecycle("outage", "archived", now=days(1))
    exported = cli("export", "--all").out
    target = env / "copy.sqlite"
    assert cli("import", "-", "--backend", "sqlite", "--db", str(target), stdin=exported).code == 0
    with Memory.open(backend="sqlite", db=target) as copy:
        record = copy.get("outage")
        assert (record.occurred, record.valid_until, record.lifecycle) == (
            "2026-02-27T14:00:00+00:00",
            "2026-12-31",
            "archived",
        )
        assert [c.to_dict() for c in record.history] == [
            {"at": "2026-03-02T12:00:00+00:00", "from": "active", "to": "archived"}
        ]
        then = copy.recall("payments", mode="keyword", as_of=days(0.5).isoformat())
        assert [(h.record.id, h.record.lifecycle) for h in then.items] == [("outage", "active")]
    bad = json.dumps({"id": "h", "text": "x", "history": [{"at": "no", "from": "active", "to": "archived"}]})
    run = cli("import", "-", "--json", stdin=bad + "\n")
    assert run.code in (0, 1) and "'at' is not an ISO-8601 date" in run.out + run.err


def test_every_interface_offers_as_of(cli, quiet):
    with Memory.open() as memory:
        assert "as_of" in _recall_signature(Session(memory, Scope("default", "public"))).parameters
    assert "--as-of" in cli("recall", "--help").out and "--as-of" in cli("list", "--help").out
    explained = cli("explain", "time")
    assert explained.code == 0 and "valid_until" in explained.out and "--as-of" in explained.out


def test_the_viewer_shows_both_clocks_and_searches_as_of(quiet):
    with Memory.open() as memory:
        memory.remember([CLOCKED], now=days(0))
        memory.remember(
            [{"id": "outage-2", "text": "The payments outage lasted three hours", "supersedes": "outage"}], now=days(2)
        )
    with served() as client:
        record = page(client.get("/record", params={"id": "outage"}))
        assert record.select_one("dd.occurred").text == CLOCKED["occurred"]
        assert "(superseded)" in record.select_one("dd.valid").text
        assert "shadowed" in record.select_one("dd.history").text
        then = client.get("/", params={"q": "payments outage", "mode": "keyword", "as_of": "2026-03-02"})
        assert hit_ids(then) == ["outage"] and "as of 2026-03-02T23:59:59" in page(then).select_one(".as_of").text
        assert page(then).select_one("li.hit .valid").text.startswith("valid from 2026-02-27")
        assert hit_ids(client.get("/", params={"q": "payments outage", "mode": "keyword"})) == ["outage-2"]


def test_a_sweep_dates_what_it_shadows_and_archives(cli, quiet):
    """A hand-written supersedes is shadowed by sweep: the change is dated at the sweep's --now,
    so as of an earlier moment the record is still active."""
    notes = quiet / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text('---\nid: a\ncreated: "2026-01-01"\n---\n\nthe boiler is serviced in May\n')
    (notes / "b.md").write_text(
        '---\nid: b\ncreated: "2026-02-01"\nsupersedes: a\n---\n\nthe boiler is serviced in June\n'
    )
    assert cli("sweep", "--now", "2026-03-01T00:00:00+00:00").code == 0
    history = cli("show", "a", "--json").json["history"]
    assert {"at": "2026-03-01T00:00:00+00:00", "from": "active", "to": "shadowed"} in history
    before = cli("recall", "boiler serviced", "--mode", "keyword", "--as-of", "2026-02-15", "--json")
    assert sorted(ids(before)) == ["a", "b"]
    assert ids(cli("recall", "boiler serviced", "--mode", "keyword", "--as-of", "2026-03-02", "--json")) == ["b"]


def test_under_as_of_a_time_the_query_names_counts_from_that_moment(quiet):
    with Memory.open() as memory:
        memory.remember([{"id": "feb", "text": "we decided to rotate the keys"}], now=days(-10))
        memory.remember([{"id": "mar", "text": "we decided to rotate the keys monthly"}], now=days(4))
        then = memory.recall("what did we decide last week", mode="keyword", as_of=days(-3).isoformat())
        window = then.time_window
        assert window is not None and window["end"] <= then.as_of  # the week before the as-of moment
        assert [hit.record.id for hit in then.items] == ["feb"]
