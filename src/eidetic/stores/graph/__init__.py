"""The ``neo4j`` backend: records as nodes of a graph server reached over Bolt (Neo4j 5, or
any server that speaks Bolt and Cypher, such as ArcadeDB), with derived indexes in the cache
folder. ``docs/graph-backend.md`` describes the graph model."""

from .store import GraphStore

__all__ = ["GraphStore"]
