"""Synthetic but realistic record corpora for speed benchmarks.

Words are drawn from the empirical word distribution of the Python standard library's own
English (docstrings and comments), so the vocabulary is real, Zipf-like and large (tens of
thousands of words), like agent memories and doc chunks. Deterministic for a given seed and
Python version. Two shapes: short notes (20-60 words) and longer doc chunks (60-300 words).
"""

from __future__ import annotations

import random
import re
import sysconfig
from collections import Counter
from functools import lru_cache
from pathlib import Path

_WORD = re.compile(r"[A-Za-z][a-z]{2,14}")


@lru_cache(maxsize=1)
def vocabulary() -> tuple[list[str], list[int]]:
    """(words, counts) harvested from the stdlib's comments and docstrings."""
    counts: Counter[str] = Counter()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py"))[:400]:
        try:
            text = path.read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
        for chunk in re.findall(r'#[^\n]*|"""[\s\S]*?"""', text):
            counts.update(w.lower() for w in _WORD.findall(chunk))
    words = [w for w, _ in counts.most_common()]
    return words, [counts[w] for w in words]


def records(n: int, seed: int = 7, short_share: float = 0.5) -> list[dict]:
    words, weights = vocabulary()
    rng = random.Random(seed)
    sources = ["chat", "docs", "retro", "email", "runbook", "review", "discord", "ci"]
    types = ["note", "lesson", "decision", "reference", "feedback", "project"]
    out = []
    pool = rng.choices(words, weights=weights, k=min(4_000_000, n * 170))
    cursor = 0
    for i in range(n):
        length = rng.randint(20, 60) if rng.random() < short_share else rng.randint(60, 300)
        if cursor + length > len(pool):
            cursor = 0
            rng.shuffle(pool)
        body = pool[cursor : cursor + length]
        cursor += length
        text = " ".join(body).capitalize() + "."
        out.append(
            {
                "id": f"rec-{i:07d}",
                "text": text,
                "type": types[i % len(types)],
                "metadata": {"source": sources[i % len(sources)], "priority": i % 5},
                "created": f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T10:00:00+00:00",
            }
        )
    return out


def keyword_queries(corpus: list[dict], n: int = 200, seed: int = 11) -> list[str]:
    """1-5 content words taken from one record, as an agent would paraphrase a memory."""
    from eidetic.index.analyzer import STOP_WORDS

    rng = random.Random(seed)
    queries = []
    while len(queries) < n:
        words = [
            w for w in corpus[rng.randrange(len(corpus))]["text"].lower().rstrip(".").split() if w not in STOP_WORDS
        ]
        if words:
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(1, 5)))))
    return queries


def exact_queries(corpus: list[dict], n: int = 200, seed: int = 13) -> list[str]:
    """Verbatim fragments: half whole phrases of 2-4 words, half a single word or part of one."""
    rng = random.Random(seed)
    queries = []
    while len(queries) < n:
        words = corpus[rng.randrange(len(corpus))]["text"].rstrip(".").split()
        if rng.random() < 0.5 and len(words) > 4:
            start = rng.randrange(len(words) - 4)
            queries.append(" ".join(words[start : start + rng.randint(2, 4)]))
        else:
            word = rng.choice(words)
            queries.append(word if rng.random() < 0.5 or len(word) < 6 else word[1:-1])
    return queries
