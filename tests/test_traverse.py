"""The traversal engine, pure: no store, no clock."""

from __future__ import annotations

from eidetic.ranking.traverse import traverse
from eidetic.records import Record, Scope

PRIVATE = Scope("secret", "private")


def rec(rid, links=(), supersedes=None, scope=None, lifecycle="active"):
    return Record(
        id=rid, text=rid, links=list(links), supersedes=supersedes, scope=scope or Scope(), lifecycle=lifecycle
    )


def run(seeds, graph, depth=1, max_nodes=20, admits=lambda r: r.scope.visibility == "public"):
    def fetch(ids):
        return {i: graph[i] for i in ids if i in graph}

    return traverse([graph[s] for s in seeds], fetch, admits, depth, max_nodes)


def ids(result):
    return [(n.record.id, n.depth, n.via, n.parent) for n in result.nodes]


def test_links_then_supersedes_breadth_first():
    graph = {
        "s1": rec("s1", ["a", "b"], supersedes="z"),
        "s2": rec("s2", ["c"]),
        "a": rec("a", ["d"]),
        "b": rec("b"),
        "c": rec("c", ["d"]),
        "d": rec("d"),
        "z": rec("z"),
    }
    result = run(["s1", "s2"], graph, depth=2)
    assert ids(result) == [
        ("a", 1, "links", "s1"),
        ("b", 1, "links", "s1"),
        ("z", 1, "supersedes", "s1"),
        ("c", 1, "links", "s2"),
        ("d", 2, "links", "a"),
    ]
    assert result.truncated is False


def test_depth_bound_sets_truncated_only_for_admissible_records():
    graph = {
        "s": rec("s", ["a"]),
        "a": rec("a", ["b"]),
        "b": rec("b"),
        "t": rec("t", ["p"]),
        "p": rec("p", ["q"]),
        "q": rec("q", scope=PRIVATE),
    }
    assert run(["s"], graph, depth=1).truncated is True
    assert run(["s"], graph, depth=2).truncated is False
    assert run(["t"], graph, depth=1).truncated is False  # only a private record lies beyond
    dangling = {"s": rec("s", ["a"]), "a": rec("a", ["missing"])}
    assert run(["s"], dangling, depth=1).truncated is False


def test_node_budget():
    graph = {"s": rec("s", ["a", "b", "c"]), "a": rec("a"), "b": rec("b"), "c": rec("c")}
    limited = run(["s"], graph, max_nodes=2)
    assert [n.record.id for n in limited.nodes] == ["a", "b"] and limited.truncated is True
    exact = run(["s"], graph, max_nodes=3)
    assert len(exact.nodes) == 3 and exact.truncated is False
    seeds_only = {f"s{i}": rec(f"s{i}") for i in range(5)}
    assert run(list(seeds_only), seeds_only, max_nodes=1) == run([], {}, max_nodes=1)


def test_rejected_records_are_dead_ends_and_cycles_terminate():
    graph = {
        "s": rec("s", ["p"]),
        "p": rec("p", ["x"], scope=PRIVATE),
        "x": rec("x"),
        "c1": rec("c1", ["c2"]),
        "c2": rec("c2", ["c1"]),
    }
    result = run(["s"], graph, depth=3)
    assert ids(result) == [] and result.truncated is False  # x is only reachable through p
    cycle = run(["c1"], graph, depth=5)
    assert ids(cycle) == [("c2", 1, "links", "c1")] and cycle.truncated is False


def test_depth_zero_and_no_seeds():
    graph = {"s": rec("s", ["a"]), "a": rec("a")}
    assert run(["s"], graph, depth=0).nodes == () and run(["s"], graph, depth=0).truncated is False
    assert run([], graph).nodes == ()


def test_seeds_are_not_emitted_again():
    graph = {"s1": rec("s1", ["s2", "a"]), "s2": rec("s2", ["s1"]), "a": rec("a")}
    assert [n.record.id for n in run(["s1", "s2"], graph).nodes] == ["a"]
