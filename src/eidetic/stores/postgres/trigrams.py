"""The trigram filter of the postgres backend's exact search, kept by eidetic in core PostgreSQL.

The server has no substring index of its own here: ``pg_trgm`` is an extension that a team's
server (or the bundled test server) may not have. So each row of ``eidetic_docs`` carries
``trigrams``, the distinct 3-character windows of its text as eidetic folds it (:func:`folded`),
each hashed to an ``int``; a GIN index (``array_ops``, core) answers ``trigrams @> ARRAY[...]``.
A text containing a query has every trigram of the query, so that condition keeps every match
(and some texts that merely share the trigrams: the substring check in SQL then decides).

Why it never loses a match, case-sensitive or not: :func:`folded` is a map of each character
on its own (Python lower-cases character by character but for a word-final Σ, which becomes ς,
and :func:`folded` makes every ς a σ), so a substring of a text folds to a substring of the
folded text. The case-insensitive check looks for Python's ``query.lower()`` in the server's
``lower(text)``; that folds to the same trigrams as the text itself as long as :func:`folded`
of a character is that of its lower case on the server. It is for every character Python's
Unicode tables know under simple and full case mapping (``pg_c_utf8``, ``pg_unicode_fast``)
and ASCII-only lowering (the C collation), checked over every code point against PostgreSQL 18,
and for a Turkish locale's ``I`` -> ``ı``. A text with a character Python does not know (newer
than its Unicode tables; the server may lower it) gets no trigrams (NULL): such rows are always
checked. So are rows written by an eidetic older than schema version 5, which leave it NULL.

Hashing (63 bits of code points folded to 32) can only merge trigrams: more texts to check,
never fewer.
"""

from __future__ import annotations

import unicodedata
from typing import Any

BACKFILL_BATCH = 2000  # rows read and updated at a time when a store gains the column (schema 5)
_MIX = -7046029254386353131  # 0x9E3779B97F4A7C15 as an int64: Fibonacci hashing

# Rows that may contain the query, whatever the filter missed: ``%s`` is the query's trigrams.
CANDIDATES = "(d.trigrams @> %s::int[] OR d.trigrams IS NULL)"


def folded(text: str) -> str:
    """``text`` as trigrams see it: lower-cased, with what lower-casing does differently by
    context or by server made one: final sigma as σ, dotless ı as i, and the combining dot
    above (which full case mapping adds to İ and simple mapping does not) dropped."""
    return text.lower().replace("ς", "σ").replace("ı", "i").replace("\u0307", "")


def _known(text: str) -> bool:
    """Whether Python's Unicode tables know every character (so the server lowers them as it does)."""
    return text.isascii() or all(unicodedata.category(c) != "Cn" for c in set(text))


def _hashed(key: str) -> Any:
    """The distinct hashed trigrams of a folded string, sorted (a NumPy int32 array)."""
    import numpy as np

    points = np.frombuffer(key.encode("utf-32-le"), dtype="<u4").astype(np.int64)
    packed = (points[:-2] << 42) | (points[1:-1] << 21) | points[2:]  # code points are 21 bits
    with np.errstate(over="ignore"):
        hashed = ((packed * _MIX) >> 32).astype(np.int32)
    hashed.sort()
    return hashed[np.concatenate(([True], hashed[1:] != hashed[:-1]))]


def column(text: str) -> str | None:
    """The ``trigrams`` value of a row with this text, as an array literal (COPY's text form);
    None (always checked) when Python cannot fold it as the server would."""
    if not _known(text):
        return None
    key = folded(text)
    if len(key) < 3:
        return "{}"
    return "{" + str(_hashed(key).tolist())[1:-1] + "}"  # a list's repr: the fastest way to the literal


def of_query(query: str) -> list[int] | None:
    """The distinct trigrams of a query (the same for either case): every text containing it
    holds them all, so any of them may be looked up. None when the filter cannot help: under 3
    folded characters, or a character Python's Unicode tables do not know."""
    key = folded(query)
    if len(key) < 3 or not _known(query):
        return None
    grams: list[int] = _hashed(key).tolist()
    return grams


def backfill(conn: Any) -> None:
    """Fill ``trigrams`` of the rows that have none, in batches by doc number, inside the
    caller's transaction: the schema upgrade's (every row, and the store is never seen half
    filled), or a rebuild's (rows an older eidetic wrote)."""
    last = -1
    while True:
        rows = conn.execute(
            "SELECT doc, text FROM eidetic_docs WHERE doc > %s AND trigrams IS NULL ORDER BY doc LIMIT %s",
            (last, BACKFILL_BATCH),
        ).fetchall()
        if not rows:
            return
        conn.execute(
            "UPDATE eidetic_docs d SET trigrams = t.grams::int[] FROM unnest(%s::bigint[], %s::text[]) "
            "AS t(doc, grams) WHERE d.doc = t.doc",
            ([doc for doc, _ in rows], [column(text) for _, text in rows]),
        )
        last = rows[-1][0]
