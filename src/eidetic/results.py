"""Typed results of the API; each ``to_dict`` is the JSON the CLI prints with ``--json`` and the MCP
server returns (docs/api.md lists every field)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .records import Record


@dataclass
class Hit:
    """One recalled record with its ranking facts."""

    record: Record
    score: float
    signal: float
    recall_count: float = 0
    last_recall: str | None = None
    tier: str = "primary"
    depth: int = 0
    via: str | None = None
    parent: str | None = None
    store: str = ""
    explain: dict[str, Any] | None = None
    path: str | None = None  # the record's file, absolute (files backend); None elsewhere
    relevance: float | None = None  # when judged (``memory.floor``): evidence over the floor (1.0: on it)
    relevant: bool | None = None  # when judged: whether the hit clears the floor (None: not judged)
    time_factor: float = 1.0  # > 1: the record's time falls in the window the query names

    def to_dict(self) -> dict[str, Any]:
        data = self.record.to_dict()
        data.update(
            {
                "recall_count": whole(self.recall_count),
                "last_recall": self.last_recall,
                "score": self.score,  # full precision: a caller may sort, compare or blend them
                "signal": self.signal,
                "tier": self.tier,
                "depth": self.depth,
                "path": self.path,
            }
        )
        if self.tier == "traversal":
            data["via"] = self.via
            data["parent"] = self.parent
        if self.relevance is not None:
            data["relevance"] = self.relevance
        if self.relevant is not None:
            data["relevant"] = self.relevant
        if self.explain is not None:
            data["explain"] = self.explain
        return data


def whole(count: float) -> float:
    """A recall count as JSON shows it: 3, not 3.0 (linked records add halves)."""
    return int(count) if float(count).is_integer() else count


@dataclass
class RecallResult:
    query: str
    mode: str
    items: list[Hit]
    truncated: bool = False
    embedder_model: str | None = None
    embedder_online: bool = False
    warnings: list[str] = field(default_factory=list)
    # when nothing matched: how many archived / shadowed records would have (of the top k), by
    # lifecycle, counting only what the caller may see
    hidden: dict[str, int] = field(default_factory=dict)
    as_of: str | None = None  # the moment a recall ``as_of`` answered for (ISO, UTC)
    # with the relevance floor on: its line (1.0: the calibrated floor) and how many of the top k
    # primary hits, all of them records the caller may see, fell below it
    relevance_floor: float | None = None
    below_floor: int = 0
    # the time the query names, as a window ({"phrase", "start", "end", "mode"}), if it names one
    time_window: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "truncated": self.truncated,
            "embedder": {"model": self.embedder_model, "online": self.embedder_online},
            "items": [hit.to_dict() for hit in self.items],
        }
        if self.as_of is not None:
            data["as_of"] = self.as_of
        if self.hidden:
            data["hidden"] = self.hidden
        if self.relevance_floor is not None:
            data["relevance_floor"] = self.relevance_floor
            data["below_floor"] = self.below_floor
        if self.time_window:
            data["time_window"] = self.time_window
        return data


@dataclass
class ListedRecord:
    """One record of a listing: the record, its usage and where it lives."""

    record: Record
    recall_count: float = 0
    last_recall: str | None = None
    store: str = ""
    path: str | None = None  # the record's file, absolute (files backend); None elsewhere

    def to_dict(self) -> dict[str, Any]:
        data = self.record.to_dict()
        data.update({"recall_count": whole(self.recall_count), "last_recall": self.last_recall, "path": self.path})
        return data


@dataclass
class ListResult:
    """A page of a listing, and how many records match in all (for the next page)."""

    items: list[ListedRecord]
    total: int
    hidden: dict[str, int] = field(default_factory=dict)  # as in RecallResult, when nothing matched
    as_of: str | None = None  # as in RecallResult

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"items": [item.to_dict() for item in self.items], "total": self.total}
        if self.as_of is not None:
            data["as_of"] = self.as_of
        if self.hidden:
            data["hidden"] = self.hidden
        return data


@dataclass
class RecordView:
    """One record as ``show`` presents it: every field, usage, where it lives and its
    connections. A connection is ``{"id", "found", "type", "name", "lifecycle"}``; a link to a
    record the caller may not see reads as not found, exactly like a missing one."""

    item: ListedRecord
    backend: str
    location: str  # the store: a folder, a database file, a server without its password
    links_out: list[dict[str, Any]]  # the record's links, in order
    links_in: list[dict[str, Any]]  # records whose links name it
    supersedes: dict[str, Any] | None  # the record it supersedes
    superseded_by: list[dict[str, Any]]  # records that supersede it (and shadow it, in its scope)

    def to_dict(self) -> dict[str, Any]:
        data = self.item.to_dict()
        data["store"] = {"backend": self.backend, "location": self.location}
        data["connections"] = {
            "links_out": self.links_out,
            "links_in": self.links_in,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
        }
        return data


@dataclass
class RememberResult:
    """What a remember did: the ids upserted, the duplicates left out, and per record what
    happened to it and where it lives (``items``)."""

    ids: list[str]
    duplicates: list[dict[str, str]]
    written: int = 0  # files actually (re)written; unchanged re-remembers write nothing
    warnings: list[str] = field(default_factory=list)
    # {"id", "status": new|updated|unchanged|duplicate, "duplicate_of"?, "shadowed"?, "backend", "store", "path"}
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def upserted(self) -> int:
        return len(self.ids)

    def to_dict(self) -> dict[str, Any]:
        return {"upserted": self.upserted, "ids": self.ids, "duplicates": self.duplicates, "items": self.items}


@dataclass
class SweepReport:
    """What ``sweep`` changed (or would, with ``dry_run``), named and counted only as far as the
    caller may see."""

    dry_run: bool
    now: str
    scanned: int
    shadowed: int
    archived: int
    changed: list[dict[str, str]]  # {"id", "lifecycle"}
    suggestions: list[dict[str, Any]]  # {"reason", "ids", "scope"}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Check:
    """One health check of ``doctor``: ``severity`` error, warning or info."""

    id: str
    passed: bool
    severity: str
    message: str
    remediation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DoctorReport:
    checks: list[Check]

    @property
    def healthy(self) -> bool:
        """False when a check of severity error failed."""
        return all(c.passed for c in self.checks if c.severity == "error")

    def to_dict(self) -> dict[str, Any]:
        return {"healthy": self.healthy, "checks": [c.to_dict() for c in self.checks]}


@dataclass
class StoreOverview:
    """One store as ``overview`` shows it: what the caller may see, by scope and lifecycle."""

    store: str
    backend: str
    exists: bool
    records: int
    scopes: list[dict[str, Any]]  # {"name", "visibility", "total", "active", "shadowed", "archived", "contributors"}
    connections: dict[str, int]  # {"links", "supersedes"} between records the caller may see
    index: dict[str, Any] | None  # {"path", "current", "unparseable"}
    embedder: dict[str, Any]  # {"model", "online", "reason"?}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ClusterMember:
    """One record of a near-duplicate cluster; ``score``: its similarity to the survivor (1.0
    for the survivor itself, and for the same text once normalised). ``differing``: each change
    from the survivor's text (the merged text, if given) to this one, ``[its words, these]``
    (``worddiff.differing``), so a reader sees what folding would lose; empty for the survivor."""

    id: str
    score: float
    text: str
    created: str
    updated: str | None
    recall_count: float
    differing: list[list[str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ConsolidationCluster:
    """Near-duplicates of one scope and the record they are folded into (``survivor``).
    ``merged_text``: the text the survivor takes (``--text``), else None. ``undo``: the
    commands that bring each member back, once applied."""

    scope: dict[str, str]
    store: str
    survivor: ClusterMember
    members: list[ClusterMember]
    merged_text: str | None = None
    applied: bool = False
    undo: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ConsolidateReport:
    """What ``consolidate`` found (and, unless ``dry_run``, did), named and counted only as far
    as the caller may see. ``without_vectors``: records compared by normalised text alone."""

    dry_run: bool
    keep: str
    threshold: float
    scanned: int
    without_vectors: int
    items: list[ConsolidationCluster]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["clusters"] = len(self.items)
        data["superseded"] = sum(len(c.members) for c in self.items if c.applied)
        return data
