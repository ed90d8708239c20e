"""Where a record lives never changes its rank or its score, as a property.

Random records, each public, private to the caller's scope or private to another scope, some
of them dated, linked or turns of a conversation, are spread at random over one to three files
stores (or held in one sqlite store); the caller (scope ``me``, private) recalls from them
together, and the answer must be what one store holding the same records with the same scopes
gives, or the same records all public: the same ids in the same order with the same scores.
And another scope's private records, added anywhere, change nothing the caller sees.

Each example writes fresh stores in a folder of its own; the embedding model and its vector
cache are shared by every example (``env``).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eidetic import Memory
from eidetic.locations import plan_stores
from eidetic.usage import UsageState
from profiles import sized

pytestmark = pytest.mark.slow  # a property test: generated records spread over stores

VOCAB = (
    "deploy database restore backup friday editor dark mode pricing decision lunch team staging "
    "night monthly weekly snapshot standup"
).split()
T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = T0 + timedelta(days=400)
SCOPES = (None, ("me", "private"), ("other", "private"))  # public, the caller's private, another's
EXAMPLES = itertools.count()

THREADS = (None, "chat-1", "chat-2")  # conversations: a member is found through its neighbours' words
RECORDS = st.lists(
    st.tuples(
        st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6),  # words
        st.sampled_from(range(len(SCOPES))),  # scope
        st.integers(0, 2),  # store
        st.integers(0, 300),  # age in days
        st.sampled_from(THREADS),  # conversation
    ),
    min_size=1,
    max_size=12,
)
QUERIES = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3).map(" ".join)


def _records(drawn: list[tuple[list[str], int, int, int, str | None]]) -> list[tuple[dict, int]]:
    """Records (a unique word each: no two texts alike) with the store each goes to; members of
    one conversation may sit in any store and partition."""
    out = []
    for i, (words, scope, where, age, thread) in enumerate(drawn):
        record: dict = {
            "id": f"r{i:02d}",
            "text": " ".join([*words, f"item{i}"]),
            "created": (T0 + timedelta(days=age, minutes=i)).isoformat(),
        }
        if thread is not None:
            record["metadata"] = {"thread": thread}
        if SCOPES[scope] is not None:
            record["scope"] = {"name": SCOPES[scope][0], "visibility": SCOPES[scope][1]}
        out.append((record, where))
    return out


def _memory(folders: list[Path], usage: Path) -> Memory:
    return Memory(plan_stores(folders), UsageState(usage))


def _fill(root: Path, records: list[tuple[dict, int]], spread: bool, embed: bool) -> list[Path]:
    """The records in one store, or each in its own of up to three; the folders in precedence
    order (those that exist). ``embed``: with their vectors (the semantic modes)."""
    placed: dict[int, list[dict]] = {}
    for record, where in records:
        placed.setdefault(where if spread else 0, []).append(record)
    folders = [root / f"store{where}" for where in sorted(placed)]
    for folder, where in zip(folders, sorted(placed)):
        with _memory([folder], root / "usage-fill.sqlite") as memory:
            memory.remember(placed[where], now=NOW, embed=embed)
    return folders


def _fill_sqlite(path: Path, records: list[tuple[dict, int]], embed: bool) -> Path:
    """The records in one sqlite store (a database file)."""
    with Memory.open(backend="sqlite", db=path) as memory:
        memory.remember([record for record, _ in records], now=NOW, embed=embed)
    return path


def _answer(folders: list[Path] | Path, usage: Path, query: str, mode: str, **options) -> list[tuple[str, float]]:
    """The caller's answer from files stores (folders) or a sqlite store (a database file)."""
    opened = Memory.open(backend="sqlite", db=folders) if isinstance(folders, Path) else _memory(folders, usage)
    with opened as memory:
        result = memory.recall(
            query, mode=mode, scope="me", visibility="private", record=False, now=NOW, **({"top_k": 8} | options)
        )
    return [(hit.record.id, hit.score) for hit in result.items]


# Float noise a score may carry from where its record lives. Keyword and exact scores are the same
# arithmetic on the same integers. A vector embedded in another batch, or compared by another
# vector index, differs by float32 kernel noise (~1e-7 in a cosine, ``tests/vectors.py``), which
# hybrid's min-max normalisation scales up by 1 / (the pool's cosine range).
NOISE = {"exact": 1e-9, "keyword": 1e-9, "approximate": 1e-6, "hybrid": 2e-5}


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]], mode: str) -> None:
    """The same ids with the same scores (to ``NOISE``), in the same order but for records whose
    scores are within that noise of each other."""
    noise = NOISE[mode]
    assert sorted(rid for rid, _ in got) == sorted(rid for rid, _ in want)
    wanted = dict(want)
    assert [score for _, score in got] == pytest.approx([wanted[rid] for rid, _ in got], rel=1e-6, abs=noise)
    for (rid, _), (expected, score) in zip(got, want):
        assert rid == expected or abs(wanted[rid] - score) <= 2 * noise + 1e-6 * abs(score), (got, want)


SETTINGS = settings(
    max_examples=sized(ci=6, soak=12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    derandomize=True,
)


@pytest.mark.parametrize("mode", ["exact", "approximate"])
@SETTINGS
@given(drawn=RECORDS, query=QUERIES)
def test_spreading_records_over_stores_changes_no_rank_and_no_score(env, mode, drawn, query):
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    one = _fill(root / "one", records, spread=False, embed=mode != "exact")
    spread = _fill(root / "spread", records, spread=True, embed=mode != "exact")
    if mode == "exact":
        query = query.split()[0]
    _same(_answer(spread, root / "u2.sqlite", query, mode), _answer(one, root / "u1.sqlite", query, mode), mode)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@SETTINGS
@given(drawn=RECORDS, query=QUERIES)
def test_keyword_statistics_over_the_union_of_stores(env, mode, drawn, query):
    """BM25's N, document frequencies and average lengths are those of everything the caller
    may read over every store, so spreading records changes no keyword (or fused) score."""
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    embed = mode == "hybrid"
    one = _fill(root / "one", records, spread=False, embed=embed)
    spread = _fill(root / "spread", records, spread=True, embed=embed)
    _same(_answer(spread, root / "u2.sqlite", query, mode), _answer(one, root / "u1.sqlite", query, mode), mode)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@SETTINGS
@given(drawn=RECORDS, query=QUERIES, spread=st.booleans())
def test_moving_records_between_public_and_private_changes_no_score(env, mode, drawn, query, spread):
    """The caller's private records and the public ones are one union to BM25: making every
    private record of the caller public (the caller sees the same records) moves no score,
    in one store or spread over several."""
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    public = [
        ({key: value for key, value in record.items() if key != "scope"}, where)
        if record.get("scope", {}).get("name") == "me"
        else (record, where)
        for record, where in records
    ]
    embed = mode == "hybrid"
    split = _fill(root / "split", records, spread=spread, embed=embed)
    moved = _fill(root / "moved", public, spread=spread, embed=embed)
    _same(_answer(moved, root / "u2.sqlite", query, mode), _answer(split, root / "u1.sqlite", query, mode), mode)


@pytest.mark.parametrize("mode", ["exact", "keyword", "approximate", "hybrid"])
@SETTINGS
@given(drawn=RECORDS, others=RECORDS, query=QUERIES, floor=st.sampled_from(["off", "auto"]))
def test_another_scopes_private_records_change_nothing_the_caller_sees(env, mode, drawn, others, query, floor):
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    strangers = [
        (dict(record, id=f"x{record['id']}", scope={"name": "other", "visibility": "private"}), where)
        for record, where in _records(others)
    ]
    if mode == "exact":
        query = query.split()[0]
    embed = mode in ("approximate", "hybrid")
    before = _fill(root / "before", records, spread=True, embed=embed)
    after = _fill(root / "after", records + strangers, spread=True, embed=embed)
    options = {"relevance_floor": floor}
    want = _answer(before, root / "u1.sqlite", query, mode, **options)
    _same(_answer(after, root / "u2.sqlite", query, mode, **options), want, mode)


TIMES = ("", "last week", "in March", "since Monday", "two days ago", "yesterday", "in 2026")


@pytest.mark.parametrize("mode", ["exact", "keyword", "approximate", "hybrid"])
@SETTINGS
@given(
    drawn=RECORDS,
    links=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=8),
    query=QUERIES,
    when=st.sampled_from(TIMES),
    depth=st.integers(0, 2),
    floor=st.sampled_from(["off", "auto"]),
)
def test_time_words_links_and_the_floor_hold_over_stores(env, mode, drawn, links, query, when, depth, floor):
    """The rest of a recall works on the union too: a time the question names (a window and a
    prior over dated records), the records reached through links (``--depth``, scored from
    their parent's score) and the relevance floor (judged on raw evidence over the caller's
    union) give the same answer whether the records sit in one store or several."""
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    for source, target in links:
        if source < len(records) and target < len(records) and source != target:
            record = records[source][0]
            record["links"] = sorted({*record.get("links", []), records[target][0]["id"]})
    if mode == "exact":
        query, when = query.split()[0], ""
    embed = mode in ("approximate", "hybrid")
    one = _fill(root / "one", records, spread=False, embed=embed)
    spread = _fill(root / "spread", records, spread=True, embed=embed)
    question = f"{query} {when}".strip()
    options = {"relevance_floor": floor, "depth": depth}
    want = _answer(one, root / "u1.sqlite", question, mode, **options)
    _same(_answer(spread, root / "u2.sqlite", question, mode, **options), want, mode)


def test_a_tie_at_the_edge_of_hybrid_s_pools_is_cut_the_same_way_in_every_layout(env):
    """Hybrid reads the best hundred or so of each signal. 150 records that tie on BM25 ("deploy"
    and one word of their own) overflow the keyword pool: a cut through the tie would keep
    whichever records a store listed first, so one store and three would fuse different pools.
    Every record tied with the pool's last is kept, in every layout."""
    root = env / "pool-tie"
    records = [
        ({"id": f"t{i:03d}", "text": f"deploy w{i:03d}", "created": (T0 + timedelta(minutes=i)).isoformat()}, i % 3)
        for i in range(150)
    ]
    one = _fill(root / "one", records, spread=False, embed=True)
    spread = _fill(root / "spread", list(reversed(records)), spread=True, embed=True)
    want = _answer(one, root / "u1.sqlite", "deploy", "hybrid", top_k=3)
    assert len(want) == 3
    _same(_answer(spread, root / "u2.sqlite", "deploy", "hybrid", top_k=3), want, "hybrid")


@pytest.mark.parametrize("mode", ["exact", "keyword", "approximate", "hybrid"])
@SETTINGS
@given(drawn=RECORDS, query=QUERIES)
def test_one_sqlite_store_answers_as_files_stores_spread(env, mode, drawn, query):
    """The sqlite backend, holding every record in one database, gives what files stores
    holding them spread give: the same ids, order and scores."""
    root = env / f"example-{next(EXAMPLES)}"
    records = _records(drawn)
    embed = mode in ("approximate", "hybrid")
    one = _fill_sqlite(root / "one.sqlite", records, embed=embed)
    spread = _fill(root / "spread", records, spread=True, embed=embed)
    if mode == "exact":
        query = query.split()[0]
    _same(_answer(spread, root / "u2.sqlite", query, mode), _answer(one, root / "u1.sqlite", query, mode), mode)
