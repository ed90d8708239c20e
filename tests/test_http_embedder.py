"""The HTTP embedder against a real HTTP server on loopback that speaks the OpenAI
/embeddings format (a toy model: hashed bag of words)."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from eidetic.embed.http import choose_key


class ToyModel(BaseHTTPRequestHandler):
    requests: list[dict] = []
    fail_with: int | None = None

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "model": body["model"], "n": len(body["input"])})
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


@pytest.fixture
def server():
    ToyModel.requests = []
    ToyModel.fail_with = None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ToyModel)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


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
    assert run.code == 0 and run.err == ""
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
    assert hybrid.err.count("\n") == 1 and "keyword only" in hybrid.err and "127.0.0.1" in hybrid.err
    keyword = cli("recall", "deploy friday", "--mode", "keyword", "--json", "--no-record")
    # the two recalls run seconds apart (retries) and freshness ages with the clock: the 6th
    # decimal of a score may tick over between them
    assert [(i["id"], pytest.approx(i["score"], rel=1e-5)) for i in hybrid.json["items"]] == \
        [(i["id"], i["score"]) for i in keyword.json["items"]]


def test_bad_configuration_is_a_clear_error(cli, records, monkeypatch):
    monkeypatch.setenv("EIDETIC_EMBED_URL", "ftp://nope")
    run = cli("recall", "deploy", "--json")
    assert run.code == 1 and "EIDETIC_EMBED_URL" in run.err_json["message"]
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
    command = [sys.executable, "-m", "eidetic", "recall", "friday deploy", "--mode", "approximate",
               "--top-k", "3", "--json", "--no-record"]
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
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
