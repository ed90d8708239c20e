"""One recall, end to end: a :class:`~eidetic.query.RecallQuery` -> each store's candidates
(scope, lifecycle and filters applied inside the store) -> the ranking of its mode -> linked
records -> usage -> a :class:`~eidetic.results.RecallResult`.

Each mode has one ranking function (``Recall.ENGINES``); approximate and hybrid fall back to
keyword ranking, and say so, when no embedder answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property, partial
from typing import Any

from ..embed import Embedder
from ..errors import ENV_ERROR, EideticError
from ..query import RecallQuery
from ..ranking import fields, freshness, fusion, reinforce, traverse
from ..ranking.access import Access
from ..ranking.bm25 import KeywordStats
from ..ranking.filters import Filters
from ..ranking.windows import threaded
from ..records import Record
from ..results import Hit, RecallResult
from ..stores.base import IndexedRecord, RecordStore
from ..timeutil import format_ts, now_utc
from ..timewords import TimeWindow, read_question
from . import explain, floor
from .context import keyword_scores, with_context
from .embedding import Embedding
from .fields_mode import fields_hits
from .floor import Evidence
from .ranked import Timing, rank
from .stores import StoreSet
from .window_only import window_hits


@dataclass
class _Run:
    """What every step of one recall shares."""

    query: RecallQuery
    access: Access
    filters: Filters
    now: datetime
    stores: list[RecordStore] = field(default_factory=list)
    embedder: Embedder | None = None
    query_vector: Any = None  # a Future of the query's vector
    evidence: Evidence = field(default_factory=dict)  # each ranked hit's raw cosine and BM25
    cosines: list[float] = field(default_factory=list)  # the semantic pool's: the floor's reference
    docs: dict[tuple[str, str], int] = field(default_factory=dict)  # each semantic hit's doc in its store
    window: TimeWindow | None = None  # the time the query names, unless time_words is off
    words: str = ""  # what keyword and semantic search see: the text less its time words

    @cached_property
    def terms(self) -> list[str]:
        """The analysed terms of ``words``, once: what keyword search and the floor look for."""
        from ..index.analyzer import query_terms

        return query_terms(self.words)


class Recall:
    """Runs recall queries over a :class:`StoreSet`."""

    ENGINES = {
        "exact": "lexical",
        "keyword": "lexical",
        "approximate": "semantic",
        "hybrid": "semantic",
        "fields": "fields",
    }

    def __init__(self, stores: StoreSet, embedding: Embedding) -> None:
        self.stores = stores
        self.embedding = embedding

    def run(self, query: RecallQuery, prior: _Run | None = None) -> RecallResult:
        """Primary hits are the top ``top_k`` after scope, lifecycle and filters; then records
        reached through ``links``/``supersedes`` up to ``depth`` hops (at most ``max_nodes``),
        under the same rules at every hop. The hits a reader used (``ranking.reinforce``) have
        their usage bumped, unless ``query.record`` is False. ``prior``: a run of the same
        words whose synced stores and query vector this one reuses.

        ``as_of``: the store as it stood then (``ranking.access``), asked as if then: freshness
        and a time the query names count from that moment (freshness from age alone: usage has
        no dates), and nothing counts as a recall."""
        access = query.access()
        run = _Run(query, access, query.filter_set(), access.as_of or query.now or now_utc(), words=query.text)
        result = RecallResult(query.text, query.mode, [], as_of=format_ts(access.as_of) if access.as_of else None)
        if query.time_words != "off" and query.mode != "fields":  # fields mode ranks by its own rules
            if prior is not None:  # the same words: their time was read once
                run.window, run.words = prior.window, prior.words
            else:
                named = read_question(query.text, run.now)  # exact mode searches its substring as written
                run.window, run.words = named.window, named.words if query.mode != "exact" else query.text
                result.warnings.extend(named.warnings)
        engine = "window" if run.window and not run.terms else self.ENGINES[query.mode]
        if run.window is not None:
            searched = "" if engine == "window" else run.words
            result.time_window = run.window.to_dict(query.time_words, searched)
        if engine == "semantic":
            engine = self._embedded(run, result, prior)
        run.stores = prior.stores if prior is not None else self.stores.synced(result.warnings)
        hits = None
        if engine == "semantic":
            try:
                hits = self._semantic(run)
            except EideticError as exc:
                if exc.code != ENV_ERROR:
                    raise
                result.warnings.append(f"semantic recall failed ({exc.message}); {query.mode} ranks by keyword only")
                result.embedder_online, engine = False, "lexical"
        if engine == "window" and run.window is not None:
            hits = window_hits(
                run.stores, access, run.filters, run.window, query.top_k, query.min_score, run.now, query.explain
            )
        if hits is None:
            hits = self._fields(run) if engine == "fields" else self._lexical(run)
        for hit in hits:
            hit.record = access.view(hit.record)
        if (query.floor_line is not None or query.judge_relevance) and engine != "window":  # window: no evidence
            hits = self._floored(run, result, hits, engine == "semantic")
        reached, result.truncated = self._traverse(run, hits)
        result.items = hits + reached
        # browsing a type reads nothing in particular, nor does reading the past, nor a question
        # asked as if at another moment (``now``): usage is dated by the machine's clock alone
        if query.record and not query.browse and access.as_of is None and query.now is None and result.items:
            _bump_usage(run.stores, result.items, run.now, best_only=engine in ("semantic", "window"))
        if not result.items:
            result.hidden = self._hidden(run)
        return result

    def _embedded(self, run: _Run, result: RecallResult, prior: _Run | None) -> str:
        """The engine a semantic mode runs on: ``semantic`` with the query being embedded
        meanwhile (or its vector from ``prior``), else ``lexical``, said in the warnings."""
        if prior is not None:
            run.embedder, run.query_vector = prior.embedder, prior.query_vector
        else:
            run.embedder, why = self.embedding.embedder()
            if run.embedder is None:
                result.warnings.append(f"semantic recall unavailable ({why}); {run.query.mode} ranks by keyword only")
                return "lexical"
            run.query_vector = self.embedding.query(run.embedder, run.words)  # meanwhile: the stores
        if run.embedder is None:
            return "lexical"
        result.embedder_model, result.embedder_online = run.embedder.name, True
        return "semantic"

    def _hidden(self, run: _Run) -> dict[str, int]:
        """Nothing matched: how many archived or shadowed records would have (of the top k, as
        the caller may see them), so the answer can name the flag that shows them. The same
        stores and query vector serve: nothing is synced or embedded twice."""
        query = run.query
        if query.include_archived and query.include_shadowed:
            return {}
        wider = replace(query, record=False, depth=0, explain=False, include_archived=True, include_shadowed=True)
        found = self.run(wider, prior=run).items
        shown = run.access.lifecycles()
        return dict(Counter(hit.record.lifecycle for hit in found if hit.record.lifecycle not in shown))

    def _floored(self, run: _Run, result: RecallResult, hits: list[Hit], semantic: bool) -> list[Hit]:
        """The hits that clear the relevance floor (``memory.floor``); with the floor off, every
        hit, judged against the calibrated line for a person to read. Exact matches are all
        relevant, and the fields ranking has its own floor (``min_score``)."""
        from ..ranking.relevance import AUTO

        line = run.query.floor_line
        if run.query.mode in ("exact", "fields"):
            return hits
        ranked = (run.query.mode, run.embedder.name) if semantic and run.embedder is not None else ("keyword", None)
        words = partial(self._words_of, run) if semantic and run.query.mode == "approximate" else None
        judged = floor.judge(
            hits,
            run.evidence,
            AUTO if line is None else line,
            run.terms,
            run.stores,
            run.access,
            ranked,
            run.cosines,
            words,
        )
        if line is None:  # nothing asked of the floor: a hit it cannot judge just reads as unjudged
            return hits
        result.relevance_floor, result.below_floor = line, judged.below
        result.warnings.extend(judged.warnings)
        return judged.kept

    @staticmethod
    def _words_of(run: _Run, hits: list[Hit]) -> dict[tuple[str, str], float]:
        """The BM25 of approximate hits, as keyword recall would score them over the union:
        the words a young store's floor also judges them by (``memory.floor``)."""
        located = {(hit.store, run.docs[(hit.store, hit.record.id)]): hit.record.id for hit in hits}
        scores = keyword_scores(
            run.stores, list(located), run.terms, _union_stats(run, run.terms), run.access, run.filters
        )
        return {(store, located[(store, doc)]): score for (store, doc), score in scores.items()}

    def _lexical(self, run: _Run) -> list[Hit]:
        """exact (substring, shortest text first) or keyword (BM25 under the union's
        statistics), read page by page; keyword over conversations adds each thread member's
        context (``_in_context``)."""
        q = run.query
        exact = q.mode == "exact"
        terms = [] if exact else run.terms
        stats = None if exact else _union_stats(run, terms)
        if stats is not None and threaded(stats):
            hits = self._in_context(run, stats)
        else:

            def pages(store: RecordStore) -> Callable[[int, int], list[tuple[int, float]]]:
                def fetch(limit: int, offset: int) -> list[tuple[int, float]]:
                    if exact:
                        return store.exact(q.text, q.case_sensitive, run.access, run.filters, limit, offset)
                    return store.keyword(terms, run.access, run.filters, limit, offset, stats)

                return fetch

            hits = rank(run.stores, pages, run.access, q.top_k, q.min_score, run.now, _timing(run))
        for hit, raw, _ in hits:
            run.evidence[(hit.store, hit.record.id)] = (None, None if exact else raw)
            if q.explain:
                hit.explain = explain.exact(raw, hit, q.text) if exact else explain.keyword(raw, hit, terms)
        return [hit for hit, _, _ in hits]

    def _in_context(self, run: _Run, stats: KeywordStats) -> list[tuple[Hit, float, int]]:
        """Keyword hits where thread members hold the query's words: the union's best ``pool``
        by their own words and the records whose window holds one of them, each scored with its
        window's words (``memory.context``). The pool (``3 x top-k``, at least 30: each one
        brings its window and up to three more candidates) grows while the top k is short of
        hits (shadowed, below ``min_score``, outside a strict time window) and more remain."""
        q, terms = run.query, run.terms
        pool = max(3 * q.top_k, 30)
        while True:
            own = _best(
                {
                    (store.key, doc): raw
                    for store in run.stores
                    for doc, raw in _with_ties(partial(_keyword_of, store, terms, run, stats), pool).items()
                },
                pool,
            )
            scores = with_context(run.stores, own, terms, stats, run.access, run.filters)
            hits = rank(run.stores, _listed(scores), run.access, q.top_k, q.min_score, run.now, _timing(run))
            if len(hits) >= q.top_k or len(own) < pool:
                return hits
            pool *= 4

    def _semantic(self, run: _Run) -> list[Hit]:
        """approximate: top-k by cosine. hybrid: the union of the top N of each signal
        (N = max(10 x top-k, 100)), fused by ``ranking.fusion``.

        Both pools and hybrid's normalisation are taken over every store at once (``_pooled``):
        a store's best candidate is not 1.0 because it is its store's best, so where a record
        lives never moves its score."""
        q, embedder = run.query, run.embedder
        assert embedder is not None
        hybrid = q.mode == "hybrid"
        pool = max(10 * q.top_k, 100)
        keyword, semantic = self._pooled(run, run.terms if hybrid else [], pool)
        scale = fusion.Scale.of(keyword, semantic) if hybrid else None
        if scale is not None:
            fused = fusion.fuse(keyword, semantic, q.alpha)
            # no keyword match and the weakest meaning of the union: not a hit
            scores = {key: raw for key, raw in fused.items() if raw > 0 or key in keyword}
        else:
            scores = semantic
        run.cosines = list(semantic.values())
        hits = rank(
            run.stores,
            _listed(scores),
            run.access,
            q.top_k,
            q.min_score,
            run.now,
            _timing(run),
        )
        for hit, raw, doc in hits:
            key = (hit.store, doc)
            found = run.evidence[(hit.store, hit.record.id)] = (semantic.get(key), keyword.get(key))
            run.docs[(hit.store, hit.record.id)] = doc
            if q.explain:
                hit.explain = explain.semantic(q.mode, embedder.name, raw, hit, found, scale, q.alpha)
        return [hit for hit, _, _ in hits]

    def _pooled(
        self, run: _Run, terms: list[str], pool: int
    ) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], float]]:
        """The recall's candidates over every store, keyed (store, doc): the ``pool`` best by
        BM25 (when ``terms``: hybrid) and the ``pool`` nearest by cosine, each cut over the union,
        and the cosine of every keyword candidate too. One store holding the same records
        would offer the same two pools."""
        embedder = run.embedder
        assert embedder is not None
        keyword: dict[tuple[str, int], float] = {}
        semantic: dict[tuple[str, int], float] = {}
        stats = _union_stats(run, terms) if terms else None
        for store in run.stores:
            store.sync_vectors(embedder.name, run.access, partial(self.embedding.vectors_for, store, embedder))
            nearest = partial(
                store.nearest, embedder.name, access=run.access, filters=run.filters, pool=pool + TIE_ROOM
            )
            near = None
            if terms and store.parallel_nearest:  # queued behind the query's embedding
                near = self.embedding.background().submit(_after, run.query_vector, nearest)
            if terms:
                offered = _with_ties(partial(_keyword_of, store, terms, run, stats), pool)
                keyword.update(((store.key, doc), raw) for doc, raw in offered.items())
            found = near.result() if near is not None else nearest(run.query_vector.result())
            found = _with_ties(partial(_nearest_of, nearest, run.query_vector), pool, found)
            semantic.update(((store.key, doc), cosine) for doc, cosine in found.items())
        keyword, semantic = _best(keyword, pool), _best(semantic, pool)
        if terms and stats is not None:
            keyword = _best(with_context(run.stores, keyword, terms, stats, run.access, run.filters), pool)
            vector = run.query_vector.result()
            for store in run.stores:
                missing = [doc for key, doc in keyword if key == store.key and (key, doc) not in semantic]
                if missing:
                    found = store.cosines(embedder.name, vector, run.access, missing)
                    semantic.update(((store.key, doc), cosine) for doc, cosine in found.items())
        return keyword, semantic

    def _fields(self, run: _Run) -> list[Hit]:
        q = run.query
        return fields_hits(
            run.stores,
            fields.terms_of(q.text),
            run.access,
            run.filters,
            q.top_k,
            fields.DEFAULT_MIN_SCORE if q.min_score is None else q.min_score,
            float(q.stale_months),
            run.now,
            q.explain,
        )

    def _traverse(self, run: _Run, hits: list[Hit]) -> tuple[list[Hit], bool]:
        """Records linked to the hits (``ranking.traverse``), scored half their parent's."""
        where: dict[str, RecordStore] = {}
        paths: dict[str, str | None] = {}
        # only hits with links or supersedes lead anywhere: the others need no walk
        seeds = [h.record.id for h in hits if h.record.links or h.record.supersedes]
        lookups = _walked(run.stores, seeds, run.query.depth)

        def fetch(ids: Iterable[str]) -> dict[str, Record]:
            found: dict[str, Record] = {}
            wanted = list(ids)
            for store, by_ids in lookups:  # precedence among the copies the caller may see
                for rid, item in by_ids([i for i in wanted if i not in found]).items():
                    if run.access.can_serve(item.record.scope):
                        found[rid] = item.record
                        where[rid] = store
                        paths[rid] = store.file_of(item)
            return found

        def admits(candidate: Record) -> bool:
            return run.access.sees(candidate) and run.filters.matches_source(candidate.metadata)

        walk = traverse.traverse([h.record for h in hits], fetch, admits, run.query.depth, run.query.max_nodes)
        usage: dict[str, tuple[float, str | None]] = {}
        for store in {where[node.record.id].key: where[node.record.id] for node in walk.nodes}.values():
            usage.update(store.usage(node.record.id for node in walk.nodes if where[node.record.id] is store))
        scores = {h.record.id: h.score for h in hits}
        reached: list[Hit] = []
        for node in walk.nodes:
            count, last = usage.get(node.record.id, (0.0, None))
            scores[node.record.id] = score = scores[node.parent] * traverse.DECAY
            judged = (count, last) if run.access.as_of is None else (0.0, None)  # usage has no dates
            hit = Hit(
                record=run.access.view(node.record),
                score=score,
                signal=freshness.signal(node.record.created, *judged, run.now),
                recall_count=count,
                last_recall=last,
                tier="traversal",
                depth=node.depth,
                via=node.via,
                parent=node.parent,
                store=where[node.record.id].key,
                path=paths[node.record.id],
            )
            if run.query.explain:
                hit.explain = explain.reached(hit, scores[node.parent])
            reached.append(hit)
        return reached, walk.truncated


Lookup = Callable[[list[str]], dict[str, IndexedRecord]]


def _walked(stores: list[RecordStore], seeds: list[str], depth: int) -> list[tuple[RecordStore, Lookup]]:
    """Each store with how the traversal looks ids up in it. A graph store walks its
    relationships itself, to the depth bound (``RecordStore.reach``), so the walk finds those
    records without asking it again; the level past the bound (what ``truncated`` looks at)
    and anything the server did not return are looked up as usual."""
    found: list[tuple[RecordStore, Lookup]] = []
    for store in stores:
        known = store.reach(seeds, depth) if depth > 0 and seeds else None
        found.append((store, store.by_ids if known is None else partial(_known_first, store, known)))
    return found


def _known_first(store: RecordStore, known: dict[str, IndexedRecord], ids: list[str]) -> dict[str, IndexedRecord]:
    hits = {rid: known[rid] for rid in ids if rid in known}
    rest = [rid for rid in ids if rid not in hits]
    return hits | (store.by_ids(rest) if rest else {})


def _after(vector: Any, nearest: Callable[[Any], dict[int, float]]) -> dict[int, float]:
    """``nearest`` of the query's vector, once it is embedded (run on the background thread)."""
    return nearest(vector.result())


def _union_stats(run: _Run, terms: list[str]) -> KeywordStats:
    """BM25 statistics of everything the caller may read, over every store of the recall: each
    store scores under them, so where a record lives never moves its keyword score."""
    return sum((store.keyword_stats(terms, run.access) for store in run.stores), KeywordStats())


def _listed(scores: dict[tuple[str, int], float]) -> Callable[[RecordStore], list[tuple[int, float]]]:
    """Each store's candidates of ``scores``, best first (ties by doc), as ``rank`` reads them."""
    by_store: dict[str, list[tuple[int, float]]] = {}
    for (store_key, doc), raw in scores.items():
        by_store.setdefault(store_key, []).append((doc, raw))
    for rows in by_store.values():
        rows.sort(key=lambda item: (-item[1], item[0]))
    return lambda store: by_store.get(store.key, [])


def _keyword_of(
    store: RecordStore, terms: list[str], run: _Run, stats: KeywordStats | None, pool: int
) -> dict[int, float]:
    return dict(store.keyword(terms, run.access, run.filters, pool, 0, stats))


def _nearest_of(nearest: Callable[..., dict[int, float]], vector: Any, pool: int) -> dict[int, float]:
    return nearest(vector.result(), pool=pool)


TIE_ROOM = 8  # candidates a store offers past its pool, so that a tie with the last shows


def _with_ties(
    offer: Callable[[int], dict[int, float]], pool: int, first: dict[int, float] | None = None
) -> dict[int, float]:
    """A store's ``pool`` best candidates and every one tied with the last of them (``first``:
    what it offered when asked for ``pool + TIE_ROOM``): a cut through a tie would keep
    whichever tied record the store happened to list first, and another layout of the same
    records would keep another (``_best`` keeps ties too)."""
    size = pool + TIE_ROOM
    found = offer(size) if first is None else first
    while len(found) >= size and min(found.values()) >= sorted(found.values(), reverse=True)[pool - 1]:
        size *= 2  # every candidate offered ties with the pool's last: more may
        found = offer(size)
    return found


def _best(scores: dict[tuple[str, int], float], pool: int) -> dict[tuple[str, int], float]:
    """The ``pool`` highest of candidates gathered from every store (each offered its own
    ``pool`` and the ties with its last), and any tied with the last of them: the pool one
    store holding them all would have offered, whatever order the stores list ties in."""
    if len(scores) <= pool:
        return scores
    last = sorted(scores.values(), reverse=True)[pool - 1]
    return {key: score for key, score in scores.items() if score >= last}


def _timing(run: _Run) -> Timing | None:
    """How the time the query names moves scores: ``ranking.when``."""
    return Timing(run.window, strict=run.query.time_words == "filter") if run.window else None


def _bump_usage(stores: list[RecordStore], items: list[Hit], now: datetime, best_only: bool) -> None:
    """The hits a reader used (``ranking.reinforce``; ``best_only`` for a semantic ranking)
    grow: a primary hit by 1, a reached record by 0.5^depth."""
    by_key = {store.key: store for store in stores}
    amounts: dict[str, dict[str, float]] = {}
    for (key, rid), amount in reinforce.used(items, best_only=best_only).items():
        amounts.setdefault(key, {})[rid] = amount
    for key, per_store in amounts.items():
        by_key[key].bump_usage(per_store, format_ts(now))
