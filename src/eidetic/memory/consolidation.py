"""``consolidate``: find near-duplicate records per store and scope, propose a survivor for each
cluster, and (with ``apply``) fold the others into it (``memory.folding``). The rules are in
``ranking.clusters`` and ``eidetic explain consolidate``.

Only what the caller's access admits is read (active records of the scopes in its reach), so
another scope's private records are never compared, shown or counted. Vectors come from each
store (computed first for records that lack them, as recall does); pairs are found among a
scope's vectors by ``ranking.neighbours``, not by comparing every pair.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..errors import EideticError, user_error
from ..lifecycle import command
from ..ranking.access import Access
from ..ranking.clusters import KEEPS, Candidate, Cluster, clusters
from ..ranking.neighbours import similar_pairs
from ..ranking.similar import SIMILAR_COSINE
from ..record_intake import record_from_input
from ..records import Scope
from ..results import ClusterMember, ConsolidateReport, ConsolidationCluster
from ..stores.base import Admitted, RecordStore
from ..timeutil import format_ts, now_utc
from ..worddiff import differing
from . import folding
from .embedding import Embedding
from .stores import StoreSet, hidden


@dataclass(frozen=True)
class ConsolidateOptions:
    """One run: how survivors are chosen, the cosine line, and optionally one cluster formed
    around ``survivor`` (an id) whose survivor takes ``text``."""

    keep: str = "recent"
    threshold: float = SIMILAR_COSINE
    survivor: str | None = None
    text: str | None = None
    apply: bool = False

    def checked(self) -> ConsolidateOptions:
        if self.keep not in KEEPS:
            raise user_error(f"unknown keep rule {self.keep!r}", "keep is 'recent' or 'recalled'")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)):
            raise user_error(f"threshold must be a number (got {self.threshold!r})", "e.g. 0.9")
        if not 0 < self.threshold <= 1:
            raise user_error(f"threshold {self.threshold} is not in (0, 1]", "a cosine line such as 0.9")
        if self.text is not None and self.survivor is None:
            raise user_error("a merged text needs the record that takes it", "name it with survivor (--survivor ID)")
        return replace(self, threshold=float(self.threshold))


@dataclass
class _Group:
    """The active records of one scope in one store, and their vectors."""

    store: RecordStore
    scope: Scope
    rows: list[Admitted]
    vectors: Any
    usage: dict[str, tuple[float, str | None]] = field(default_factory=dict)


class Consolidation:
    def __init__(self, stores: StoreSet, embedding: Embedding) -> None:
        self.stores = stores
        self.embedding = embedding

    def run(self, access: Access, options: ConsolidateOptions, now: datetime | None = None) -> ConsolidateReport:
        """Find the clusters ``access`` may see; with ``options.apply``, fold them (one atomic
        write per store: an interruption leaves that store as it was)."""
        options = options.checked()
        if options.text is not None:  # checked as remember checks a text, before anything is written
            raw = {"id": options.survivor, "text": options.text}
            record_from_input(
                raw, default_scope=access.scope, added_by=None, max_text_bytes=self.stores.settings.max_text_bytes
            )
        access = Access(access.scope, scope_only=access.scope_only)  # active records only
        report = ConsolidateReport(not options.apply, options.keep, options.threshold, 0, 0, [])
        groups = self._groups(access, report)
        found = [self._clusters(group, options) for group in groups]
        if options.survivor is not None and not any(found):
            raise user_error(
                f"no active record {options.survivor!r} with near-duplicates in reach of scope "
                f"{access.scope.name}/{access.scope.visibility}",
                "run 'eidetic consolidate' to see the clusters, and name a survivor or member of one",
            )
        views = [(group, self._view(group, c, options.text)) for group, cs in zip(groups, found) for c in cs]
        report.items = [view for _, view in views]
        if options.apply:
            self._apply(views, format_ts(now or now_utc()), report)
        return report

    def _groups(self, access: Access, report: ConsolidateReport) -> list[_Group]:
        """Per store and scope, the active records ``access`` admits (an id an earlier store
        also has is left to that store) with their vectors."""
        embedder, why = self.embedding.embedder()
        if embedder is None:
            report.warnings.append(f"vectors unavailable ({why}): near-duplicates by normalised text only")
        stores = self.stores.synced(report.warnings)
        groups: list[_Group] = []
        for position, store in enumerate(stores):
            rows = store.admitted(access)
            shadowed = hidden(stores[:position], [row.id for row in rows], access) if position else set()
            rows = [row for row in rows if row.id not in shadowed]
            vectors = self._vectors(store, access, rows, embedder, report)
            by_scope: dict[Scope, list[int]] = defaultdict(list)
            for index, row in enumerate(rows):
                by_scope[row.scope].append(index)
            for scope in sorted(by_scope):
                picked = by_scope[scope]
                groups.append(_Group(store, scope, [rows[i] for i in picked], vectors[picked]))
            report.scanned += len(rows)
        return groups

    def _vectors(
        self, store: RecordStore, access: Access, rows: list[Admitted], embedder: Any, report: ConsolidateReport
    ) -> Any:
        """The rows' vectors (computed first where missing); rows of zeros where there are none."""
        import numpy as np

        if embedder is None or not rows:
            report.without_vectors += len(rows)
            return np.zeros((len(rows), 0), dtype=np.float32)
        try:
            store.sync_vectors(embedder.name, access, lambda pairs: self.embedding.vectors_for(store, embedder, pairs))
        except EideticError as exc:
            report.warnings.append(f"vectors not computed ({exc.message}); records without one compared by text only")
        vectors = store.vectors_of(embedder.name, access, [row.doc for row in rows])
        report.without_vectors += int((~vectors.any(axis=1)).sum()) if vectors.shape[1] else len(rows)
        return vectors

    def _clusters(self, group: _Group, options: ConsolidateOptions) -> list[Cluster]:
        usage = group.usage = group.store.usage(row.id for row in group.rows)
        candidates = [
            Candidate(row.id, row.text, row.created, row.updated, usage.get(row.id, (0.0, None))[0])
            for row in group.rows
        ]
        forced = None
        if options.survivor is not None:
            forced = next((i for i, c in enumerate(candidates) if c.id == options.survivor), None)
            if forced is None:
                return []
        pairs = similar_pairs(group.vectors, options.threshold) if group.vectors.shape[1] else {}
        return clusters(candidates, pairs, options.keep, forced)

    def _view(self, group: _Group, cluster: Cluster, text: str | None) -> ConsolidationCluster:
        usage = group.usage
        kept = text if text is not None else group.rows[cluster.survivor].text

        def member(position: int, score: float) -> ClusterMember:
            row = group.rows[position]
            changes = differing(kept, row.text) if position != cluster.survivor else []
            return ClusterMember(
                row.id, round(score, 4), row.text, row.created, row.updated, usage.get(row.id, (0, None))[0], changes
            )

        return ConsolidationCluster(
            group.scope.to_dict(),
            group.store.location,
            member(cluster.survivor, 1.0),
            [member(position, score) for position, score in cluster.members],
            text,
        )

    def _apply(self, views: list[tuple[_Group, ConsolidationCluster]], stamp: str, report: ConsolidateReport) -> None:
        """Fold the clusters, one atomic write per store (``folding.fold``); a member that
        changed meanwhile (no longer active) is left out."""
        by_store: dict[str, list[tuple[_Group, ConsolidationCluster]]] = defaultdict(list)
        for group, view in views:
            by_store[group.store.key].append((group, view))
        for pairs in by_store.values():
            wanted = [(view.survivor.id, [m.id for m in view.members], view.merged_text) for _, view in pairs]
            folded, warnings = folding.fold(pairs[0][0].store, wanted, stamp)
            report.warnings += warnings
            for (group, view), ids in zip(pairs, folded):
                view.members = [m for m in view.members if m.id in ids]
                view.applied = bool(ids)
                view.undo = [command("restore", rid, group.scope) for rid in ids]
