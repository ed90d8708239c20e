"""The neo4j backend against a real graph server (ArcadeDB over Bolt): what the graph holds
(nodes, relationships a user can query), its schema, the derived copy following it from other
cache folders and after losses, and a lost connection. What every backend shares is in
tests/test_contract.py."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ndjson, use_graph
from graph_server import Proxy, available

pytestmark = pytest.mark.skipif(not available(), reason="the graph server's package is not installed")


@pytest.fixture
def graph(env, monkeypatch, graph_server):
    """A fresh graph store; returns a function running Cypher on it."""
    import neo4j

    monkeypatch.setenv("EIDETIC_EMBEDDER", "none")
    uri = use_graph(monkeypatch, graph_server, "graph")
    driver = neo4j.GraphDatabase.driver(graph_server.uri, auth=(graph_server.user, graph_server.password))
    database = uri.rsplit("/", 1)[1]

    def cypher(query: str, **params) -> list[dict]:
        with driver.session(database=database) as session:
            return [dict(row) for row in session.run(query, params)]

    yield cypher
    driver.close()


def test_records_are_nodes_and_links_are_relationships(cli, graph):
    run = cli(
        "remember",
        stdin=ndjson(
            {"id": "a", "text": "alpha", "links": ["b", "ghost"], "metadata": {"k": [1, 2]}},
            {"id": "b", "text": "beta", "supersedes": "old"},
            {"id": "old", "text": "older beta"},
        ),
    )
    assert run.code == 0, run.err
    node = graph("MATCH (m:Memory {id: 'a'}) RETURN properties(m) AS p")[0]["p"]
    assert node["text"] == "alpha" and node["links"] == ["b", "ghost"] and json.loads(node["metadata"]) == {"k": [1, 2]}
    assert node["scope"] == "default" and node["visibility"] == "public" and node["lifecycle"] == "active"
    edges = graph("MATCH (x:Memory)-[r]->(y:Memory) RETURN x.id AS x, type(r) AS t, y.id AS y ORDER BY x, y")
    assert edges == [
        {"x": "a", "t": "LINKS", "y": "b"},
        {"x": "a", "t": "LINKS", "y": "ghost"},
        {"x": "b", "t": "SUPERSEDES", "y": "old"},
    ]
    # an id nobody stores is a stub: no record, gone once nothing points at it
    assert graph("MATCH (m:Memory {id: 'ghost'}) RETURN m.stub AS stub, m.text AS text") == [
        {"stub": True, "text": None}
    ]
    assert cli("recall", "ghost", "--mode", "exact", "--json").json["items"] == []
    assert cli("remember", stdin=ndjson({"id": "a", "text": "alpha", "links": ["b"]})).code == 0
    assert graph("MATCH (m:Memory {id: 'ghost'}) RETURN m") == []
    # a purged record others still link to stays as a stub, its relationships with it
    assert cli("forget", "b", "--purge", "--yes").code == 0, "purge"
    assert graph("MATCH (:Memory {id: 'a'})-[:LINKS]->(m) RETURN m.stub AS stub, m.text AS text") == [
        {"stub": True, "text": None}
    ]
    assert graph("MATCH (:Memory {id: 'b'})-[r]->() RETURN r") == []
    assert cli("show", "b", "--json").code == 1


def test_the_schema_is_created_once_and_versioned(cli, graph):
    assert cli("recall", "x", "--json").code == 0
    assert graph("MATCH (n) RETURN count(n) AS n") == [{"n": 0}], "reads never create the store"
    for _ in range(2):
        assert cli("remember", stdin=ndjson({"id": "a", "text": "alpha"})).code == 0
    [store] = graph("MATCH (s:EideticStore) RETURN s.schema AS schema, s.seq AS seq")
    assert store == {"schema": 1, "seq": 1}, "an unchanged remember writes nothing"
    names = {row["name"] for row in graph("SHOW CONSTRAINTS")}
    assert {"eidetic_memory_id", "eidetic_store_key", "eidetic_lock_key"} <= names
    graph("MATCH (s:EideticStore) SET s.schema = 99")
    run = cli("recall", "alpha", "--json")
    assert run.code == 2 and "schema version 99" in run.err_json["message"]
    assert "upgrade eidetic" in run.err_json["remediation"]


def test_other_cache_folders_follow_and_a_lost_copy_is_filled_again(cli, graph, env, monkeypatch):
    assert cli("remember", stdin=ndjson({"id": "a", "text": "shared walrus"}, {"id": "b", "text": "b"})).code == 0
    assert cli("recall", "walrus", "--mode", "keyword", "--json").json["items"][0]["id"] == "a"
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(env / "other-cache"))  # a colleague's machine
    assert cli("remember", stdin=ndjson({"id": "c", "text": "colleague walrus"})).code == 0
    assert cli("forget", "b", "--purge", "--yes").code == 0
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(env / "cache"))
    found = cli("recall", "walrus", "--mode", "keyword", "--json").json["items"]
    assert sorted(h["id"] for h in found) == ["a", "c"]
    assert cli("show", "b", "--json").code == 1
    for copy in (env / "cache" / "neo4j").glob("*"):  # the derived copy lost
        if copy.is_file():
            copy.unlink()
    found = cli("recall", "walrus", "--mode", "keyword", "--json").json["items"]
    assert sorted(h["id"] for h in found) == ["a", "c"]
    # a copy further behind than the drop log reaches starts over
    monkeypatch.setattr("eidetic.stores.graph.writes.DROPS_KEPT", 1)
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(env / "other-cache"))
    assert cli("forget", "c", "--purge", "--yes").code == 0
    for n in range(4):
        assert cli("remember", stdin=ndjson({"id": f"d{n}", "text": f"walrus number {n}"})).code == 0
    assert graph("MATCH (s:EideticStore) RETURN s.pruned AS p")[0]["p"] > 2
    monkeypatch.setenv("EIDETIC_CACHE_DIR", str(env / "cache"))
    found = cli("recall", "walrus", "--mode", "keyword", "--top-k", "10", "--json").json["items"]
    assert sorted(h["id"] for h in found) == ["a", "d0", "d1", "d2", "d3"]
    # a graph replaced by another at the same address: the copy starts over
    graph("MATCH (n) DETACH DELETE n")
    assert cli("remember", stdin=ndjson({"id": "z", "text": "another walrus"})).code == 0
    assert [h["id"] for h in cli("recall", "walrus", "--mode", "keyword", "--json").json["items"]] == ["z"]


def test_traversal_walks_the_graph_in_the_server_depth_limited(graph, cli):
    from eidetic.memory import Memory

    chain = [{"id": f"n{i}", "text": f"node {i}", "links": [f"n{i + 1}"]} for i in range(5)]
    assert cli("remember", stdin=ndjson(*chain)).code == 0
    with Memory.open() as memory:
        store = memory.stores()[0]
        store.sync()
        assert sorted(store.reach(["n0"], 2)) == ["n1", "n2"]
        result = memory.recall("node 0", mode="exact", depth=2, record=False)
        assert [(h.record.id, h.depth) for h in result.items] == [("n0", 0), ("n1", 1), ("n2", 2)]
        assert result.truncated is True


def test_a_lost_connection_is_an_environment_error_and_the_next_call_reconnects(cli, graph, graph_server, monkeypatch):
    from eidetic.errors import EideticError
    from eidetic.memory import Memory

    proxy = Proxy(graph_server.bolt_port)  # the fixture's database, reached through the proxy
    uri = os.environ["EIDETIC_NEO4J_URI"].replace(f":{graph_server.bolt_port}/", f":{proxy.port}/")
    monkeypatch.setenv("EIDETIC_NEO4J_URI", uri)
    assert cli("remember", stdin=ndjson({"id": "a", "text": "alpha"})).code == 0
    with Memory.open() as memory:
        assert [h.record.id for h in memory.recall("alpha", mode="exact").items] == ["a"]
        proxy.cut()
        with pytest.raises(EideticError) as lost:
            memory.recall("alpha", mode="exact")
        assert lost.value.code == 2 and f"127.0.0.1:{proxy.port}" in lost.value.message
        run = cli("recall", "alpha", "--json")
        assert run.code == 2 and f"127.0.0.1:{proxy.port}" in run.err_json["message"]
        assert graph_server.password not in run.err + run.out
        proxy.resume()
        assert [h.record.id for h in memory.recall("alpha", mode="exact").items] == ["a"]
    proxy.cut()


def test_a_wrong_password_or_database_is_named_without_the_password(cli, graph, graph_server, monkeypatch):
    monkeypatch.setenv("EIDETIC_NEO4J_PASSWORD", "wrong-secret")
    run = cli("recall", "x", "--json")
    assert run.code == 2 and "refused user 'root'" in run.err_json["message"]
    assert "wrong-secret" not in run.err
    run = cli("recall", "x", "--uri", f"bolt://root:pw-in-uri@127.0.0.1:{graph_server.bolt_port}/nodb", "--json")
    assert run.code == 2 and "pw-in-uri" not in run.err
    monkeypatch.setenv("EIDETIC_NEO4J_PASSWORD", graph_server.password)
    run = cli("recall", "x", "--uri", f"{graph_server.uri}/nodb", "--json")
    assert run.code == 2 and "no database 'nodb'" in run.err_json["message"]
    for bad in ("http://host/x", "bolt://host/a b", "bolt://host:99999999"):
        run = cli("recall", "x", "--uri", bad, "--json")
        assert run.code == 1 and "bolt://" in run.err_json["remediation"], bad
    monkeypatch.setenv("EIDETIC_NEO4J_URI", f"bolt://root:pw-in-uri@127.0.0.1:{graph_server.bolt_port}/x")
    shown = {row["env"]: row["value"] for row in cli("config", "--json").json["settings"]}
    assert "pw-in-uri" not in json.dumps(shown) and shown["EIDETIC_NEO4J_PASSWORD"] == "(set)"


def test_mongo_is_explained_and_not_offered(cli, env):
    run = cli("recall", "x", "--backend", "mongo", "--json")
    assert run.code == 1 and "not offered" in run.err_json["message"]
    assert "neo4j" in run.err_json["remediation"] and "postgres" in run.err_json["remediation"]
