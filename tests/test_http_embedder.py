"""The HTTP embedder against a real HTTP server on loopback that speaks the OpenAI
/embeddings format (a toy model: hashed bag of words)."""

from __future__ import annotations

import hashlib
import http.client
import ipaddress
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from eidetic.embed.http import choose_key, is_loopback


class ToyModel(BaseHTTPRequestHandler):
    requests: list[dict] = []
    fail_with: int | None = None

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {
                "path": self.path,
                "auth": self.headers.get("Authorization"),
                "model": body["model"],
                "n": len(body["input"]),
            }
        )
        if type(self).fail_with:
            self.send_response(type(self).fail_with)
            self.end_headers()
            return
        data = []
        for index, text in enumerate(body["input"]):
            vector = [0.0] * 64
            for word in text.lower().split():
                salt = "" if body["model"] == "toy-embed" else body["model"]  # another model, other vectors
                vector[int(hashlib.md5((salt + word.strip(".,")).encode()).hexdigest(), 16) % 64] += 1.0
            data.append({"index": index, "embedding": vector})
        payload = json.dumps({"data": list(reversed(data))}).encode()  # out of order on purpose
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class Proxy(BaseHTTPRequestHandler):
    """A forward proxy: records every request it is asked to carry (with its Authorization
    header), relays plain http ones and refuses to tunnel."""

    seen: ClassVar[list[tuple[str, str, str | None]]] = []

    def do_POST(self):
        type(self).seen.append((self.command, self.path, self.headers.get("Authorization")))
        target = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "proxy-connection")}
        upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
        upstream.request(self.command, target.path, body, headers)
        answer = upstream.getresponse()
        payload = answer.read()
        upstream.close()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.getheader("Content-Type") or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_CONNECT(self):
        type(self).seen.append((self.command, self.path, self.headers.get("Authorization")))
        self.send_response(502)
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """A real server on a free loopback port, stopped when the test ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def server():
    ToyModel.requests = []
    ToyModel.fail_with = None
    with _serve(ToyModel) as port:
        yield f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def proxy(monkeypatch):
    """A forward proxy set in every proxy variable httpx reads, in both cases."""
    Proxy.seen = []
    with _serve(Proxy) as port:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
            monkeypatch.setenv(name.lower(), f"http://127.0.0.1:{port}")
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield Proxy.seen


# what a first recall with --json says on stderr while it embeds the texts it lacks
FIRST_RECALL = (
    json.dumps(
        {"progress": "embedding 151 texts for semantic recall (once: they were stored without vectors)", "total": 151}
    )
    + "\n"
)


@pytest.fixture
def records(cli, store):
    lines = [{"id": f"n{i}", "text": f"note {i} about gardening tomatoes"} for i in range(150)]
    lines.append({"id": "deploy", "text": "deploy friday rollback"})
    assert cli("remember", stdin="".join(json.dumps(x) + "\n" for x in lines)).code == 0


def test_remote_model_ranks_and_batches_with_the_explicit_key(cli, records, server, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    monkeypatch.setenv("EIDETIC_EMBED_MODEL", "toy-embed")
    monkeypatch.setenv("EIDETIC_EMBED_API_KEY", "sk-explicit")
    run = cli("recall", "friday deploy", "--mode", "approximate", "--top-k", "1", "--json")
    assert run.code == 0 and run.err == FIRST_RECALL  # the line says why it takes a moment; no warning
    assert run.json["embedder"] == {"model": "toy-embed", "online": True}
    assert [i["id"] for i in run.json["items"]] == ["deploy"]
    assert {r["path"] for r in ToyModel.requests} == {"/v1/embeddings"}
    assert all(r["auth"] == "Bearer sk-explicit" and r["model"] == "toy-embed" for r in ToyModel.requests)
    assert max(r["n"] for r in ToyModel.requests) <= 64 and sum(r["n"] for r in ToyModel.requests) == 152
    ToyModel.requests.clear()
    cli("recall", "tomatoes", "--mode", "approximate", "--json")  # vectors are cached: only the query
    assert [r["n"] for r in ToyModel.requests] == [1]


def test_borrowed_key_goes_to_loopback(cli, records, server, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    monkeypatch.setenv("COLLEAGUE_API_KEY", "sk-borrowed")
    monkeypatch.delenv("EIDETIC_EMBED_API_KEY", raising=False)
    assert cli("recall", "deploy", "--mode", "approximate", "--json").json["embedder"]["online"] is True
    assert {r["auth"] for r in ToyModel.requests} == {"Bearer sk-borrowed"}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
@pytest.mark.parametrize("key", ["EIDETIC_EMBED_API_KEY", "COLLEAGUE_API_KEY"])
def test_no_key_meets_a_proxy_on_the_way_to_loopback(cli, records, server, proxy, monkeypatch, host, key):
    """With every *_PROXY variable pointing at a recording proxy, a loopback embedder is reached
    directly: the proxy sees nothing, the key arrives, and recall is semantic."""
    import httpx

    url = server.replace("127.0.0.1", host)
    for name in ("EIDETIC_EMBED_API_KEY", "COLLEAGUE_API_KEY", "CULTURE_VLLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(key, "sk-stays-home")
    monkeypatch.setenv("EIDETIC_EMBED_URL", url)
    run = cli("recall", "friday deploy", "--mode", "approximate", "--top-k", "1", "--json", "--no-record")
    assert run.code == 0 and run.err == FIRST_RECALL  # the line says why it takes a moment; no warning
    assert run.json["embedder"]["online"] is True and [i["id"] for i in run.json["items"]] == ["deploy"]
    assert ToyModel.requests and {r["auth"] for r in ToyModel.requests} == {"Bearer sk-stays-home"}
    assert proxy == []
    # the proxy works and the environment does point at it: a client left to the environment goes through it
    assert httpx.post(f"{url}/embeddings", json={"model": "toy-embed", "input": ["x"]}).status_code == 200
    assert [method for method, _, _ in proxy] == ["POST"]


localhost_names = st.one_of(
    st.just("localhost"),
    st.lists(st.from_regex(r"[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True), min_size=1, max_size=3).map(
        lambda labels: ".".join(labels) + ".localhost"
    ),
)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)  # each name is a real DNS lookup
@given(localhost_names)
@example("localhost")
@example("eidetic-does-not-exist.localhost")
def test_a_localhost_name_is_loopback_only_where_it_resolves(name):
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        assert not is_loopback(name)
        return
    assert is_loopback(name) == all(ipaddress.ip_address(a).is_loopback for a in addresses)


def test_a_localhost_name_pointed_elsewhere_is_not_loopback(monkeypatch):
    """/etc/hosts or a DNS server decides where ``*.localhost`` goes, not the name: one address
    elsewhere is enough to make it remote, and then a borrowed key stays home."""
    resolved: list[str] = []

    def resolve(host, *args, **kwargs):
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0)) for a in resolved]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    for addresses, loopback in (
        (["127.0.0.1", "203.0.113.7"], False),
        (["203.0.113.7"], False),
        (["127.0.0.1", "::1"], True),
    ):
        resolved[:] = addresses
        assert is_loopback("gpu.localhost") is loopback, addresses
        key, warning = choose_key("http://gpu.localhost:8001/v1", {"COLLEAGUE_API_KEY": "b"})
        assert (key == "b") is loopback and (warning is None) is loopback, addresses


def test_a_password_in_the_url_is_never_echoed(cli, records, monkeypatch):
    """However EIDETIC_EMBED_URL is wrong, what recall and doctor say names no credential."""
    monkeypatch.setenv("EIDETIC_EMBED_TIMEOUT", "2")
    monkeypatch.setenv("COLLEAGUE_API_KEY", "sk-borrowed")  # and a withheld key is reported too
    monkeypatch.delenv("EIDETIC_EMBED_API_KEY", raising=False)
    urls = {
        "scheme": "ftp://user:s3cr3t@127.0.0.1:1/v1",
        "no scheme": "user:s3cr3t@127.0.0.1:1/v1",
        "control character": "http://user:s3cr3t@loc\x01alhost:1/v1",
        "space in the host": "http://user:s3cr3t@local host:1/v1",
        "port out of range": "http://user:s3cr3t@127.0.0.1:99999/v1",
        "port no number": "http://user:s3cr3t@127.0.0.1:port/v1",
        "slash in the password": "http://user:s3cr3t/x@127.0.0.1:1/v1",  # the password parses as a port
        "bad IPv6": "http://user:s3cr3t@[::1/v1",
        "bad IDNA host": "http://user:s3cr3t@\u2474.localhost:1/v1",
        "unreachable": "http://user:s3cr3t@127.0.0.1:1/v1",
        "withheld key": "http://user:s3cr3t@embed.invalid:1/v1",
    }
    for why, url in urls.items():
        monkeypatch.setenv("EIDETIC_EMBED_URL", url)
        recall = cli("recall", "deploy friday", "--mode", "hybrid", "--json", "--no-record")
        doctor = cli("doctor", "--json")
        said = recall.out + recall.err + doctor.out + doctor.err
        assert "s3cr3t" not in said, (why, said)
        assert recall.code == 0 and recall.json["embedder"]["online"] is False, why
        assert "keyword only" in recall.err, why


def test_a_key_no_header_can_carry_is_said_not_quoted(cli, records, server, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    monkeypatch.setenv("EIDETIC_EMBED_API_KEY", "sk-s\u00e9cr\u00e8t")
    run = cli("recall", "deploy friday", "--mode", "hybrid", "--json", "--no-record")
    assert run.code == 0 and run.json["embedder"]["online"] is False
    assert "API key holds characters" in run.err and "\\xe9" not in run.err and "\u00e9" not in run.err


@pytest.mark.parametrize("url", ["http://local\x01host:8001/v1", "http://127.0.0.1:8001/v1\x7f"])
def test_a_control_character_in_the_url_degrades_to_keyword(cli, records, monkeypatch, url):
    monkeypatch.setenv("EIDETIC_EMBED_URL", url)
    hybrid = cli("recall", "deploy friday", "--mode", "hybrid", "--json", "--no-record")
    assert hybrid.code == 0 and hybrid.json["embedder"]["online"] is False
    assert hybrid.err.count("\n") == 1 and "control character" in hybrid.err and "keyword only" in hybrid.err
    keyword = cli("recall", "deploy friday", "--mode", "keyword", "--json", "--no-record")
    assert [(i["id"], pytest.approx(i["score"], rel=1e-5)) for i in hybrid.json["items"]] == [
        (i["id"], i["score"]) for i in keyword.json["items"]
    ]


def test_key_rules():
    env = {"COLLEAGUE_API_KEY": "b"}
    assert choose_key("https://embed.example.com/v1", env) == ("b", None)
    assert choose_key("http://localhost:8001/v1", env) == ("b", None)
    assert choose_key("http://[::1]:8001/v1", env) == ("b", None)
    key, warning = choose_key("http://embed.example.com/v1", env)
    assert key is None and "withholding" in warning and "COLLEAGUE_API_KEY" in warning
    assert choose_key("http://embed.example.com/v1", {"EIDETIC_EMBED_API_KEY": "e", **env}) == ("e", None)
    assert choose_key("http://embed.example.com/v1", {}) == (None, None)


@pytest.mark.parametrize("failure", ["500", "refused"])
def test_a_failing_embedder_degrades_to_keyword_loudly(cli, records, server, monkeypatch, failure):
    if failure == "500":
        ToyModel.fail_with = 500
        monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    else:
        monkeypatch.setenv("EIDETIC_EMBED_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("EIDETIC_EMBED_TIMEOUT", "2")
    hybrid = cli("recall", "deploy friday", "--json", "--no-record")
    assert hybrid.code == 0
    assert hybrid.json["embedder"]["online"] is False
    assert hybrid.err.startswith(FIRST_RECALL)  # it tried, and said so
    warning = hybrid.err.removeprefix(FIRST_RECALL)
    assert warning.count("\n") == 1 and "keyword only" in warning and "127.0.0.1" in warning
    keyword = cli("recall", "deploy friday", "--mode", "keyword", "--json", "--no-record")
    # the two recalls run seconds apart (retries) and freshness ages with the clock: the 6th
    # decimal of a score may tick over between them
    assert [(i["id"], pytest.approx(i["score"], rel=1e-5)) for i in hybrid.json["items"]] == [
        (i["id"], i["score"]) for i in keyword.json["items"]
    ]


def test_a_bad_url_is_a_warning_and_a_bad_timeout_an_error(cli, records, monkeypatch):
    """A misconfigured embedder, like an unreachable one, costs semantic ranking, not the recall."""
    monkeypatch.setenv("EIDETIC_EMBED_URL", "ftp://nope")
    run = cli("recall", "deploy", "--json")
    assert run.code == 0 and run.json["embedder"]["online"] is False
    assert "EIDETIC_EMBED_URL" in run.err and "keyword only" in run.err
    monkeypatch.setenv("EIDETIC_EMBED_URL", "http://127.0.0.1:1/v1")
    monkeypatch.setenv("EIDETIC_EMBED_TIMEOUT", "soon")
    assert cli("recall", "deploy", "--json").code == 1


def test_doctor_probes_the_remote_embedder(cli, records, server, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    checks = {c["id"]: c for c in cli("doctor", "--json").json["checks"]}
    assert checks["embedder"]["passed"] is True and ToyModel.requests[-1]["n"] == 1
    ToyModel.fail_with = 503
    checks = {c["id"]: c for c in cli("doctor", "--json").json["checks"]}
    assert checks["embedder"]["passed"] is False and "503" in checks["embedder"]["message"]


@pytest.mark.slow
def test_concurrent_recalls_build_one_consistent_vector_index(cli, store, server, monkeypatch):
    """Four processes recall at once on a store whose vector index is empty and due for a graph:
    each appends what is missing under the lock, one builds the graph, all agree, and the index
    ends with one row per record."""
    import json as json_module
    import os
    import subprocess
    import sys

    from eidetic.index.vector_index import VectorIndex

    lines = [{"id": f"n{i}", "text": f"note {i} about topic{i % 37} and topic{i % 11}"} for i in range(400)]
    lines.append({"id": "deploy", "text": "deploy friday rollback"})
    assert cli("remember", "--no-embed", stdin="".join(json_module.dumps(x) + "\n" for x in lines)).code == 0
    env = {**os.environ, "EIDETIC_EMBED_URL": server, "EIDETIC_ANN_THRESHOLD": "100"}
    command = [
        sys.executable,
        "-m",
        "eidetic",
        "recall",
        "friday deploy",
        "--mode",
        "approximate",
        "--top-k",
        "3",
        "--json",
        "--no-record",
    ]
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), [err for _, err in outputs]
    answers = [[item["id"] for item in json_module.loads(out)["items"]] for out, _ in outputs]
    exact = subprocess.run(command, env={**env, "EIDETIC_ANN_THRESHOLD": "0"}, capture_output=True, text=True)
    assert all(answer == answers[0] for answer in answers)
    assert answers[0] == [item["id"] for item in json_module.loads(exact.stdout)["items"]]  # graph = exact here
    folders = [p.parent for p in (store.parent / "cache").rglob("state.json")]
    assert len(folders) == 1
    index = VectorIndex(folders[0])
    assert index.rows == 401 and sorted(set(index.docs().tolist())) == sorted(index.docs().tolist())
    assert index.state()["ann_rows"] == 401 and len(list(folders[0].glob("ann-*.usearch"))) == 1
    assert not list(folders[0].glob(".ann-*"))  # no abandoned temporary graph


def test_a_model_switch_re_embeds_lazily_and_never_mixes(cli, records, server, monkeypatch, env):
    import sqlite3

    monkeypatch.setenv("EIDETIC_EMBED_URL", server)
    monkeypatch.setenv("EIDETIC_EMBED_MODEL", "toy-embed")
    first = cli("recall", "tomatoes note", "--mode", "approximate", "--json", "--no-record")
    assert first.json["embedder"]["model"] == "toy-embed"
    ToyModel.requests.clear()
    monkeypatch.setenv("EIDETIC_EMBED_MODEL", "toy-other")
    second = cli("recall", "tomatoes note", "--mode", "approximate", "--json", "--no-record")
    assert second.json["embedder"]["model"] == "toy-other"
    assert {r["model"] for r in ToyModel.requests} == {"toy-other"}
    assert sum(r["n"] for r in ToyModel.requests) == 152  # every text again, and the query
    cache = sqlite3.connect(env / "cache" / "vectors.sqlite")
    models = dict(cache.execute("SELECT model, count(*) FROM vectors GROUP BY model"))
    assert models["toy-embed"] == models["toy-other"] == 151  # (the local model's, from remember, too)
    vector_folders = {p.parent.parent for p in (env / "cache").rglob("state.json")}
    assert len(vector_folders) == len(models)  # one vector index per model
    ToyModel.requests.clear()
    monkeypatch.setenv("EIDETIC_EMBED_MODEL", "toy-embed")
    again = cli("recall", "tomatoes note", "--mode", "approximate", "--json", "--no-record")
    assert [r["n"] for r in ToyModel.requests] == [1]  # back: only the query is embedded
    assert [i["id"] for i in again.json["items"]] == [i["id"] for i in first.json["items"]]
