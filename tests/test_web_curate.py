"""Changing records from the viewer: forget/restore behind a confirmation, edit and supersede
through explicit forms, each through the same Memory call as the CLI (same validation, same
locks), refused without losing what was typed, and only within the session's reach."""

from __future__ import annotations

import pytest

from conftest import rec
from eidetic import Memory
from eidetic.memory.editing import edit_text
from web_client import ORIGIN, page, served, typed_text

RECORDS = [
    {"id": "deploy-day", "name": "Deploy day", "text": "Deploys run on Tuesdays", "type": "lesson"},
    {"id": "deploy-key", "text": "The deploy key rotates monthly", "links": ["deploy-day"]},
]


@pytest.fixture
def notes(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    seed()
    return store


def seed() -> None:
    with Memory.open() as memory:
        memory.remember(RECORDS)


def stored(rid: str, scope: str = "default", visibility: str = "public"):
    with Memory.open() as memory:
        return memory.get(rid, scope=scope, visibility=visibility)


def edit_form(client, rid: str) -> dict[str, str]:
    """The edit form's fields as a browser would post them (line breaks as CRLF)."""
    form = page(client.get("/record/edit", params={"id": rid})).select_one("form#edit")
    fields = {field["name"]: field.get("value", "") for field in form.select("input[type=hidden]")}
    fields["text"] = typed_text(form.select_one("textarea#editor")).replace("\n", "\r\n")
    return fields


def test_forget_and_restore_ask_first_on_every_backend(backend):
    seed()
    with served() as client:
        asked = client.post("/record/forget", data={"id": "deploy-day"})
        confirm = page(asked).select_one("form#confirm")
        assert asked.status_code == 200 and confirm["method"] == "post" and confirm["action"] == "/record/forget"
        hidden = {i["name"]: i["value"] for i in confirm.select("input[type=hidden]")}
        assert hidden == {"id": "deploy-day", "confirm": "yes"} and confirm.select_one("button[type=submit]")
        assert stored("deploy-day").lifecycle == "active"  # asking changed nothing
        done = client.post("/record/forget", data=hidden)
        assert done.status_code == 303 and done.headers["location"] == "/record?id=deploy-day"
        assert stored("deploy-day").lifecycle == "archived"
        shown = page(client.get(done.headers["location"]))
        assert (
            shown.select_one("form#forget") is None and shown.select_one("form#restore")["action"] == "/record/restore"
        )
        assert client.post("/record/restore", data={"id": "deploy-day"}).status_code == 200
        assert stored("deploy-day").lifecycle == "archived"
        back = client.post("/record/restore", data={"id": "deploy-day", "confirm": "yes"})
        assert back.status_code == 303 and stored("deploy-day").lifecycle == "active"
        assert client.post("/record/forget", data={"id": "nope", "confirm": "yes"}).status_code == 404
        assert client.post("/record/forget", data={"id": "nope"}).status_code == 404


def test_an_edit_saves_through_remember_on_every_backend(backend):
    seed()
    with served() as client:
        form = edit_form(client, "deploy-day")
        assert form["id"] == "deploy-day" and form["text"].startswith("---\r\nid: deploy-day\r\n")
        form["text"] = form["text"].replace("Tuesdays", "Wednesdays\r\n\r\nafter the standup")
        saved = client.post("/record/edit", data=form)
        assert saved.status_code == 303 and saved.headers["location"] == "/record?id=deploy-day"
        record = stored("deploy-day")
        assert record.text == "Deploys run on Wednesdays\n\nafter the standup"  # a browser's CRLF, read as LF
        assert (record.name, record.type, record.lifecycle) == ("Deploy day", "lesson", "active")
        again = client.post("/record/edit", data=form)  # the form started from what is no longer stored
        assert again.status_code == 409 and "changed since this edit began" in page(again).select_one(".error").text


def test_a_refused_edit_keeps_the_text_and_writes_nothing(notes):
    with served() as client:
        form = edit_form(client, "deploy-day")
        before = rec(notes, "deploy-day").read_bytes()
        for change, message in (
            (lambda t: t.replace("id: deploy-day", "id: other"), "the id cannot be changed by editing"),
            (lambda t: t.replace("lifecycle: active", "lifecycle: archived"), "editing cannot change the lifecycle"),
            (lambda t: t.replace("type: lesson", "type: [unclosed"), "the edited file is not a record"),
            (lambda t: t.replace("type: lesson", "type: ''"), "type"),
            (lambda t: t.replace("visibility: public", "visibility: secret"), "visibility"),
        ):
            typed = change(form["text"])
            refused = client.post("/record/edit", data={**form, "text": typed})
            shown = page(refused)
            assert refused.status_code == 400 and message in shown.select_one("div.error .message").text, message
            assert typed_text(shown.select_one("textarea#editor")) == typed.replace("\r\n", "\n")  # nothing lost
            assert shown.select_one("form#edit input[name=original]")["value"] == form["original"]
        assert rec(notes, "deploy-day").read_bytes() == before
        unchanged = client.post("/record/edit", data=form)
        assert unchanged.status_code == 303 and rec(notes, "deploy-day").read_bytes() == before


def test_an_edit_never_overwrites_a_change_made_meanwhile(notes):
    with served() as client:
        form = edit_form(client, "deploy-day")
        with Memory.open() as other:
            original = other.get("deploy-day")
            other.save_edit(original, edit_text(original).replace("Tuesdays", "Thursdays"))
        typed = form["text"].replace("Tuesdays", "Fridays")
        refused = client.post("/record/edit", data={**form, "text": typed})
        assert refused.status_code == 409
        assert typed_text(page(refused).select_one("textarea#editor")) == typed.replace("\r\n", "\n")
        assert stored("deploy-day").text == "Deploys run on Thursdays"
        fresh = edit_form(client, "deploy-day")
        assert "Thursdays" in fresh["text"] and fresh["original"] != form["original"]


def test_supersede_remembers_a_new_record_that_shadows_the_old(backend):
    seed()
    with served() as client:
        form = page(client.get("/record/supersede?id=deploy-day")).select_one("form#supersede")
        assert form["method"] == "post" and form["action"] == "/record/supersede"
        assert typed_text(form.select_one("textarea[name=text]")) == "Deploys run on Tuesdays"
        assert form.select_one("input[name=name]")["value"] == "Deploy day" and form.select_one("input[name=new_id]")
        made = client.post(
            "/record/supersede",
            data={"id": "deploy-day", "text": "Deploys run on Wednesdays", "name": "Deploy day", "new_id": "day-2"},
        )
        assert made.status_code == 303 and made.headers["location"] == "/record?id=day-2"
        new, old = stored("day-2"), stored("deploy-day")
        assert (new.supersedes, new.type, new.scope, new.name) == ("deploy-day", "lesson", old.scope, "Deploy day")
        assert old.lifecycle == "shadowed"
        chain = page(client.get("/record?id=deploy-day")).select_one("#supersedes")
        assert chain.select_one("li.newer a")["href"] == "/record?id=day-2"
        same = client.post("/record/supersede", data={"id": "deploy-key", "text": "Deploys run on Wednesdays"})
        shown = page(same)
        assert same.status_code == 400 and "already stored, as 'day-2'" in shown.select_one(".error").text
        assert typed_text(shown.select_one("textarea[name=text]")) == "Deploys run on Wednesdays"
        made = client.post("/record/supersede", data={"id": "deploy-key", "text": "Keys rotate weekly now"})
        assert made.status_code == 303 and stored(made.headers["location"].split("=", 1)[1]).supersedes == "deploy-key"


def test_a_private_session_curates_its_own_records_only(notes):
    with Memory.open() as memory:
        memory.remember([{"id": "mine", "text": "my own note"}], scope="me", visibility="private")
    with served("me", "private") as client:
        assert client.post("/record/forget", data={"id": "mine", "confirm": "yes"}).status_code == 303
        assert stored("mine", "me", "private").lifecycle == "archived"
        form = edit_form(client, "mine")
        moved = form["text"].replace("name: me", "name: them")
        refused = client.post("/record/edit", data={**form, "text": moved})
        assert refused.status_code == 400 and "may not write to scope them/private" in refused.text
        made = client.post("/record/supersede", data={"id": "mine", "text": "my newer note"})
        new = stored(made.headers["location"].split("=", 1)[1], "me", "private")
        assert new.scope.visibility == "private" and new.scope.name == "me"


def test_a_change_from_another_site_is_refused(notes):
    with served() as client:
        forged = client.post(
            "/record/forget", data={"id": "deploy-day", "confirm": "yes"}, headers={"Origin": "https://evil.example"}
        )
        assert forged.status_code == 403 and stored("deploy-day").lifecycle == "active"
        own = client.post("/record/forget", data={"id": "deploy-day", "confirm": "yes"}, headers={"Origin": ORIGIN})
        assert own.status_code == 303 and stored("deploy-day").lifecycle == "archived"
