"""Credentials never land in memory unnoticed (docs/reliability.md): capture leaves out a statement
that holds one and only counts it; remember refuses a public record that holds one (exit 1, naming
the record and the kind, never the secret) unless allowed, and keeps a private one with a warning;
the same in bulk (one refused record refuses the batch, nothing written), in import (the line is
skipped), through the MCP tool and the viewer. Texts that only look like secrets pass untouched."""

from __future__ import annotations

import json
import re
import sys
import uuid

import pytest

import hook_payloads as payload
from conftest import ndjson
from eidetic import Memory
from eidetic.credentials import kinds
from eidetic.errors import EideticError
from eidetic.records import text_hash
from web_client import page, served

AWS = "AKIAIOSFODNN7EXAMPLE"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIy"
    "fQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9OiJdPqF0zZpY4Zz1Q"
ISSUE_LINE = f"remember that the staging API key is {AWS} and the password is Hunter2-Zebra!"

# (text, the secret it must never echo, the kinds found): one per kind
SECRETS = [
    (f"The staging deploy key is {AWS}", AWS, ["AWS Access Key"]),
    (ISSUE_LINE, "Hunter2-Zebra!", ["AWS Access Key", "password"]),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY, ["Private Key"]),
    ("The bot uses 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", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx", ["GitHub Token"]),
    (
        "Alerts post with xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKlMnOpQrStUvWx",
        ["Slack Token"],
    ),
    ("Billing runs with sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", ["Stripe Access Key"]),
    ("db password = s3cr3t-Pa55", "s3cr3t-Pa55", ["password"]),
    ("Connect with postgresql://app:Sup3rSecret@db.internal:5432/shop", "Sup3rSecret", ["password in a URL"]),
    (f"The session cookie is {JWT}", JWT[40:80], ["JSON Web Token"]),
]

# texts that look like secrets and are not: they pass untouched
PLAIN = [
    f"Record {text_hash('Deploys run on Tuesdays')} is the deploy-day note",  # a record's content hash
    f"The import run {uuid.UUID(int=0x1F2E3D4C5B6A79880796A5B4C3D2E1F0, version=4)} finished cleanly",
    "Decision: pin the parser at 3f786850e387550fdab836ed7e6dc881de23001b until upstream fixes it",  # a git SHA
    "Reset your password in settings, never over chat",
    "The password is required for every login to staging",
    "Note: password: ask the on-call engineer",
    "The password field is read from ${DB_PASSWORD} at start",
    "Connect with postgresql://eidetic@db.internal/eidetic (no password: the socket's peer auth)",
    "Lesson: the secret is to automate the rotation",
    "The client reads password = settings.db_password at start",
]


def gate_texts() -> list[str]:
    """Texts around every keyword of detect-secrets' keyword plugin: each as the plugin's list
    writes it, upper-cased, with and without its underscore, inside words, next to letters whose
    lower case is longer (``İ``), at the edges of a text, and random mixes of the keywords' parts."""
    import random

    from detect_secrets.plugins import keyword as kw

    words = [w.replace("_?", sep) for w in kw.DENYLIST for sep in ("", "_")]
    texts = [t for t, _, _ in SECRETS] + PLAIN
    for word in words:
        texts += [word, word.upper(), f"my{word}s = Xy12345!", f"İİİ {word.upper()}: İ", f"{word[:-1]} {word[-1]}"]
    rng = random.Random(32)
    parts = ["key", "pass", "pwd", "secret", "api", "db", "_", "database", "contraseña", "İ", " ", "word", "\n"]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(1, 30))) for _ in range(2000)]
    return texts


def test_the_cheap_checks_skip_only_texts_the_full_search_would_not_match():
    """The literal every shaped pattern's match holds, and the keyword gate searched only around
    its words, find whatever searching each pattern over the whole text finds."""
    from eidetic import credentials

    detector = credentials._detector()
    outcomes = []
    for text in gate_texts():
        lowered = text.lower()
        outcomes.append(detector.keyword_gate.search(lowered) is not None)
        assert credentials._gated(detector, lowered) == outcomes[-1], text
        for _, regex, literal in detector.cased:
            assert literal in text or not regex.search(text)
        for _, regex, literal in detector.folded:
            assert literal in lowered or not regex.search(text)
    assert outcomes.count(True) > 100 and outcomes.count(False) > 100  # both sides were tried
    assert {"key", "pass"} <= set(detector.gate_words)


# one credential of each shape a plugin knows (made up, of the right form): with SECRETS, every
# pattern of every plugin kept matches one of them
SHAPES = [
    " AKCp8abcdefghijk ",
    " AP6abcdefghijk ",
    'aws_secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYa"',
    "AccountKey=" + "aB3+" * 22,
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "glpat-abcdefghij0123456789",
    "GR1348941abcdefghij0123456789",
    "glcbt-abcdefghij0123456789",
    "glimt-" + "a1" * 12 + "b",
    "glptt-" + "a1" * 20,
    "glagent-" + "a1" * 25,
    "gloas-" + "a1" * 32,
    "0123456789abcdef0123456789abcdef-us12",
    "//registry.npmjs.org/:_authToken=npm_abcdef0123456789",
    "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
    *(f"-----BEGIN {kind} PRIVATE KEY-----" for kind in ("DSA", "EC", "OPENSSH")),
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN SSH2 ENCRYPTED PRIVATE KEY-----",
    "PuTTY-User-Key-File-2: ssh-rsa",
    "pypi-AgEIcHlwaS5vcmc" + "a1B2" * 18,
    "pypi-AgENdGVzdC5weXBpLm9yZw" + "a1B2" * 18,
    "SG." + "a1B2" * 5 + "cd." + "a1B2" * 10 + "xyz",
    "sq0csp-" + "a1B2" * 10 + "xyz",
    "rk_live_" + "a1B2" * 6,
    "123456789:" + "a1B2" * 8 + "xyz",
    "AC" + "a1" * 16,
    "SK" + "b2" * 16,
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
]


def secret_variants() -> list[str]:
    """Every credential of ``SECRETS`` and ``SHAPES`` as written, in each case, inside prose and code, and with
    each of its characters dropped or doubled in turn (some of these still match a pattern,
    some no longer do)."""
    texts = []
    for text, secret, _ in [*SECRETS, *((shape, shape, None) for shape in SHAPES)]:
        for shown in (secret, secret.upper(), secret.lower(), secret.swapcase()):
            texts += [shown, text.replace(secret, shown), f"see {shown}.", f'key="{shown}"\nnext line']
        texts += [secret[:at] + secret[at + 1 :] for at in range(len(secret))]
        texts += [secret[:at] + secret[at] + secret[at:] for at in range(len(secret))]
    return texts


def test_the_character_scans_before_the_literals_skip_no_pattern_that_matches():
    """A pattern's literal is looked for only in a text that holds its group's character
    (``_held``): every pattern that matches a text, of the credentials, their variants and the
    gate's texts, is among those it keeps, and each group's character is in each literal."""
    from eidetic import credentials

    detector = credentials._detector()
    entries = detector.cased + detector.folded
    grouped = [(sign, entry) for sign, group in detector.cased_signs + detector.folded_signs for entry in group]
    assert sorted(map(id, entries)) == sorted(id(entry) for _, entry in grouped)  # each pattern once
    assert all(sign in entry[2] for sign, entry in grouped)
    matched = set()
    for text in secret_variants() + gate_texts():
        held = credentials._held(detector, text, text.lower())
        for entry in entries:
            if entry[1].search(text):
                matched.add(entry[2])
                assert entry in held, (text, entry[2])
    assert matched == {entry[2] for entry in entries}  # every pattern matched: each was tried


def leaked(secret: str, *shown: str) -> bool:
    return any(secret in text for text in shown)


@pytest.mark.parametrize("text, secret, found", SECRETS, ids=[found[0] for _, _, found in SECRETS])
def test_each_kind_is_found_and_named_by_kind(text, secret, found):
    assert kinds(text) == found


@pytest.mark.parametrize("text", PLAIN)
def test_what_only_looks_like_a_secret_is_not_one(text):
    assert kinds(text) == []


@pytest.mark.parametrize("text, secret, found", SECRETS, ids=[found[0] for _, _, found in SECRETS])
def test_remember_refuses_a_public_record_naming_the_kind_never_the_secret(
    cli, store, monkeypatch, text, secret, found
):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    run = cli("remember", "--id", "deploy-note", text)
    assert run.code == 1 and "deploy-note" in run.err and all(kind in run.err for kind in found)
    assert "--allow-secrets" in run.err and "nothing was written" in run.err
    assert not leaked(secret, run.out, run.err)
    as_json = cli("remember", "--id", "deploy-note", text, "--json")
    assert as_json.code == 1 and json.loads(as_json.err)["code"] == 1 and not leaked(secret, as_json.err)
    assert cli("list", "--json").json["items"] == []


@pytest.mark.parametrize("text", PLAIN)
def test_lookalikes_are_remembered_public_untouched_and_without_a_warning(cli, store, monkeypatch, text):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    run = cli("remember", "--id", "note", text)
    assert run.code == 0 and run.err == ""
    assert cli("show", "note", "--json").json["text"] == text


def test_a_private_record_is_kept_with_a_warning_and_allowing_writes_a_public_one(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    private = cli("remember", "--id", "mine", ISSUE_LINE, "--scope", "me", "--visibility", "private")
    assert private.code == 0 and "warning:" in private.err and "mine" in private.err
    assert "AWS Access Key" in private.err and "kept private" in private.err
    assert not leaked(AWS, private.out, private.err) and not leaked("Hunter2-Zebra!", private.err)
    assert cli("show", "mine", "--scope", "me", "--visibility", "private", "--json").json["text"] == ISSUE_LINE
    allowed = cli("remember", "--id", "ours", SECRETS[0][0], "--allow-secrets")
    assert allowed.code == 0 and "kept public, as allowed" in allowed.err and not leaked(AWS, allowed.err)
    assert cli("show", "ours", "--json").json["text"] == SECRETS[0][0]


def test_in_a_repository_the_public_store_refuses_and_the_private_one_warns(cli, env, monkeypatch):
    """Where records go by default: public ones into the repository's committed store."""
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    (env / "work" / ".git").mkdir()
    refused = cli("remember", "--id", "key", SECRETS[0][0])
    assert refused.code == 1 and not (env / "work" / ".eidetic").exists()
    kept = cli("remember", "--id", "key", SECRETS[0][0], "--visibility", "private", "--json")
    assert kept.code == 0 and kept.json["items"][0]["store"] == str(env / "home" / ".eidetic" / "memory")
    assert not (env / "work" / ".eidetic").exists() and "AWS Access Key" in kept.err


def test_one_refused_record_refuses_the_whole_ndjson_batch(cli, store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    assert cli("remember", "--id", "kept", "Deploys run on Tuesdays").code == 0
    batch = ndjson(
        {"id": "kept", "text": "Deploys run on Wednesdays"},
        {"id": "new", "text": "The cache warms at six"},
        {"id": "keyed", "text": "Deploys use the token", "metadata": {"token": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}},
    )
    run = cli("remember", stdin=batch)
    assert run.code == 1 and "line 3" in run.err and "keyed" in run.err and "Stripe Access Key" in run.err
    assert "nothing was written" in run.err and not leaked("4eC39HqLyjWDarjtT1zdp7dc", run.err)
    items = cli("list", "--json").json["items"]
    assert [(item["id"], item["text"]) for item in items] == [("kept", "Deploys run on Tuesdays")]


def test_import_skips_a_public_record_holding_a_credential_and_imports_the_rest(cli, store, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    source = env / "records.ndjson"
    source.write_text(
        ndjson(
            {"id": "plain", "text": "The cache warms at six"},
            {"id": "pem", "text": SECRETS[2][0]},
            {"id": "mine", "text": SECRETS[0][0], "scope": {"name": "me", "visibility": "private"}},
        )
    )
    run = cli("import", str(source), "--json")
    assert run.code == 1
    report = json.loads(run.out)
    assert report["imported"] == 2 and [item["line"] for item in report["skipped"]] == [2]
    assert report["skipped"][0]["credential"] and "Private Key" in report["skipped"][0]["error"]
    assert len(report["warnings"]) == 1 and "mine" in report["warnings"][0]
    assert not leaked(PEM_BODY, run.out, run.err) and not leaked(AWS, run.out, run.err)
    text = cli("import", str(source))
    assert text.code == 1 and "--allow-secrets" in text.err and not leaked(PEM_BODY, text.err)
    allowed = cli("import", str(source), "--allow-secrets", "--json")
    assert allowed.code == 0 and json.loads(allowed.out)["skipped"] == []
    assert cli("show", "pem", "--json").json["text"] == SECRETS[2][0]


def capture(cli, env, text: str, *flags: str):
    transcript = env / "transcript.txt"
    transcript.write_text(text)
    return cli("capture", str(transcript), *flags)


@pytest.mark.parametrize("visibility", ["private", "public"])
def test_capture_leaves_a_statement_with_a_credential_out_and_counts_it(cli, store, env, monkeypatch, visibility):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    said = f"User: {ISSUE_LINE}\nUser: remember that the staging database restarts on Sundays\n"
    run = capture(cli, env, said, "--json", "--visibility", visibility)
    assert run.code == 0, run.err
    assert (run.json["found"], run.json["written"], run.json["credentials_left_out"]) == (2, 1, 1)
    assert run.json["credential_kinds"] == ["AWS Access Key", "password"]
    assert [item["text"] for item in run.json["items"]] == ["The staging database restarts on Sundays"]
    text = capture(cli, env, said, "--visibility", visibility, "--dry-run")
    assert "left out 1: holding what looks like a credential (AWS Access Key, password)" in text.out
    stored = cli("list", "--json", "--visibility", "private").json["items"]
    assert [item["text"] for item in stored] == ["The staging database restarts on Sundays"]
    for shown in (run.out, run.err, text.out, text.err):
        assert not leaked(AWS, shown) and not leaked("Hunter2-Zebra!", shown)


def test_the_session_end_hook_leaves_it_out_and_logs_only_the_count(cli, store, env, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    monkeypatch.setenv("EIDETIC_CAPTURE", "public")
    folder = env / "home" / ".claude" / "projects" / "-work"
    folder.mkdir(parents=True)
    transcript = folder / "s.jsonl"
    lines = [
        payload.transcript_line("user", ISSUE_LINE, "s", env / "work", "2026-01-20T11:57:18.000Z"),
        payload.transcript_line("assistant", "Decision: staging keys rotate monthly", "s", env / "work", "not a date"),
    ]
    transcript.write_text("\n".join(lines) + "\n")
    answer = payload.handled("session-end", payload.session_end(env / "work", transcript, session="s"), env / "work")
    assert answer["log"] == [
        "session-end: captured 1 of 2 statement(s), 0 stored already, "
        "1 left out for a credential (AWS Access Key, password)"
    ]
    assert [item["text"] for item in cli("list", "--json").json["items"]] == ["Staging keys rotate monthly"]


def test_the_python_api_names_its_own_switch(store):
    with pytest.raises(EideticError) as refused, Memory.open() as memory:
        memory.remember([{"id": "k", "text": SECRETS[0][0]}], embed=False)
    assert "allow_secrets=True" in refused.value.remediation and AWS not in str(refused.value)


@pytest.mark.slow
def test_the_mcp_tool_refuses_with_a_tool_error_and_warns_the_client_of_a_private_one(store, monkeypatch):
    """The SDK's own client over stdio against a real server: a public session is refused (a tool
    error naming the kind and the tool's own switch) unless it passes allow_secrets; a private
    session's record is written, and the client's log hears the warning."""
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    logged: list[str] = []

    async def log(params) -> None:
        logged.append(str(params.data))

    async def session(*flags: str, calls) -> list:
        server = StdioServerParameters(
            command=sys.executable, args=["-m", "eidetic", "mcp", *flags], env=dict(os.environ)
        )
        async with stdio_client(server) as streams, ClientSession(*streams, logging_callback=log) as client:
            await client.initialize()
            return [await client.call_tool("remember", arguments) for arguments in calls]

    stripe = {"id": "k", "text": SECRETS[5][0]}
    refused, allowed = anyio.run(
        lambda: session(calls=[{"records": stripe}, {"records": stripe, "allow_secrets": True}])
    )
    message = refused.content[0].text
    assert refused.is_error and "'k'" in message and "Stripe Access Key" in message
    assert '"allow_secrets": true' in message and "4eC39HqLyjWDarjtT1zdp7dc" not in message
    assert not allowed.is_error and allowed.structured_content["ids"] == ["k"]
    (mine,) = anyio.run(
        lambda: session(
            "--scope", "me", "--visibility", "private", calls=[{"records": {"id": "m", "text": ISSUE_LINE}}]
        )
    )
    assert not mine.is_error and mine.structured_content["ids"] == ["m"]
    assert any("'m'" in line and "kept private" in line for line in logged)
    assert not any(AWS in line or "Hunter2-Zebra!" in line for line in logged)


def test_the_viewer_refuses_an_edit_that_adds_a_credential_to_a_public_record(store, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    with Memory.open() as memory:
        memory.remember([{"id": "deploy", "text": "Deploys run on Tuesdays"}])
    with served() as client:
        made = client.post("/record/supersede", data={"id": "deploy", "text": SECRETS[7][0]})
        error = page(made).select_one("div.error").text
        assert made.status_code == 400 and "password in a URL" in error and "--allow-secrets" in error
        assert "Sup3rSecret" not in error
    with Memory.open() as memory:
        assert [record.id for _, record in memory.iter_records(memory.access())] == ["deploy"]


def test_eidetic_edit_refuses_a_credential_in_a_public_record_keeps_the_edit_and_takes_the_flag(
    cli, store, env, monkeypatch
):
    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    assert cli("remember", "--id", "deploy", "Deploys run on Tuesdays").code == 0
    script = env / "editor.py"
    script.write_text(
        "import sys, pathlib\npath = pathlib.Path(sys.argv[1])\n"
        f"path.write_text(path.read_text().replace('Tuesdays', 'Tuesdays with {AWS}'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    refused = cli("edit", "deploy", stdin="")  # not a terminal: nobody to offer another try
    assert refused.code == 1 and "AWS Access Key" in refused.err and "--allow-secrets" in refused.err
    assert not leaked(AWS, refused.err) and cli("show", "deploy", "--json").json["text"] == "Deploys run on Tuesdays"
    kept = re.search(r"your edit is kept in (\S+)", refused.err).group(1)
    allowed = cli("edit", "deploy", "--from", kept, "--allow-secrets")
    assert allowed.code == 0 and "kept public, as allowed" in allowed.err
    # the editor ran again on the kept edit
    assert cli("show", "deploy", "--json").json["text"] == f"Deploys run on Tuesdays with {AWS} with {AWS}"


def test_the_rule_is_the_records_visibility_on_every_backend(cli, backend):
    """A team server's public records are every user's: refused there too; a private one warned."""
    refused = cli("remember", "--id", "key", SECRETS[8][0], "--json")
    assert refused.code == 1 and "JSON Web Token" in refused.err and not leaked(JWT[40:80], refused.err)
    kept = cli("remember", "--id", "key", SECRETS[8][0], "--scope", "me", "--visibility", "private", "--json")
    assert kept.code == 0 and "JSON Web Token" in kept.err and not leaked(JWT[40:80], kept.out, kept.err)
    listed = cli("list", "--scope", "me", "--visibility", "private", "--json").json["items"]
    assert [(item["id"], item["scope"]["visibility"]) for item in listed] == [("key", "private")]
