"""Each record's terms per field, as the keyword index stores and indexes them (``field_lines``),
and, for a large batch, computed by a helper process.

The analysis makes a Python string of every word of every record (~25 us a record), all under
the interpreter's lock, which the rest of a bulk remember (its files, its rows) needs too: at
100k records it was the largest part of the write path's Python work that needs nothing of
this process.
A helper process (``_serve``, started with this interpreter) analyses the batch a thousand rows at
a time while this process indexes what came back, and gives four strings a record instead of
a hundred. A helper that cannot start or stops midway costs nothing but the speed: what it did
not return is analysed here, the same way (docs/benchmarks.md).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .analyzer import analyze

HELPER_MIN = 10_000  # fewer rows are analysed here: the helper's start (~0.2 s) would cost more
CHUNK = 1_000  # rows sent to the helper at a time
# What the helper runs: this package from the folder it is given, then ``_serve``.
_HELPER = "import sys; sys.path.insert(0, sys.argv[1]); from eidetic.index.term_lines import _serve; _serve()"

Row = tuple[int, "str | None", "str | None", str, bool]  # (doc, name, description, text, thread member)
Lines = tuple[list[int], list[str]]  # a record's length in terms and its terms, per field


def field_lines(name: str | None, description: str | None, text: str, member: bool) -> Lines:
    """A record's length in terms and its terms, per field (name, description, text, context),
    as ``TextIndex.add`` indexes it: its text in ``context``, and in ``text`` too for a thread
    member. Each field's terms are one line, in order with their repeats, each between spaces of
    its own (``" dam  otter  dam "``), so that ``decode_counts`` counts a term by counting
    `` term ``. Lines rather than counted terms: counting and writing the counts cost as much as
    the analysis itself, for every record of a bulk remember (docs/benchmarks.md); a recall reads
    only its candidates' lines, for a few terms."""
    named = analyze(name) if name else []
    described = analyze(description) if description else []
    own = analyze(text)  # analysed once, though a thread member's words are in two fields
    line = _line(own)
    return (
        [len(named), len(described), len(own) if member else 0, len(own)],
        [_line(named), _line(described), line if member else _line([]), line],
    )


def _line(terms: list[str]) -> str:
    return f" {'  '.join(terms)} "


def term_lines(rows: Sequence[Row]) -> Iterator[Lines]:
    """``field_lines`` of each row, in order: from a helper process for ``HELPER_MIN`` rows or
    more (where one can start), else analysed here."""
    if len(rows) < HELPER_MIN:
        return (field_lines(name, description, text, member) for _, name, description, text, member in rows)
    return _from_helper(rows)


def _from_helper(rows: Sequence[Row]) -> Iterator[Lines]:
    chunks = [[row[1:] for row in rows[start : start + CHUNK]] for start in range(0, len(rows), CHUNK)]
    helper = _start()
    done = 0
    if helper is not None:
        feeder = threading.Thread(target=_feed, args=(helper.stdin, chunks), name="eidetic-term-lines", daemon=True)
        feeder.start()
        try:
            assert helper.stdout is not None
            for chunk in chunks:
                lines = pickle.load(helper.stdout)
                if not (isinstance(lines, list) and len(lines) == len(chunk)):
                    break  # not the helper's answer: set it aside
                yield from lines
                done += 1
        except Exception:  # noqa: BLE001 (whatever it sent, the helper is set aside)
            pass  # it stopped, or sent what is not an answer: the rest is analysed here
        finally:
            helper.kill()
            helper.wait()
            feeder.join()
            for stream in (helper.stdin, helper.stdout):
                if stream is not None:
                    stream.close()
    for chunk in chunks[done:]:
        for name, description, text, member in chunk:
            yield field_lines(name, description, text, member)


def _start() -> subprocess.Popen[bytes] | None:
    """The helper, running this code (its folder first on the helper's path, and the working
    folder, which may be anyone's repository, not on it), or None where no interpreter can be
    started."""
    if not sys.executable:
        return None
    here = str(Path(__file__).resolve().parents[2])
    try:
        return subprocess.Popen(
            [sys.executable, "-P", "-c", _HELPER, here],  # -P: the working folder never on its path
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def _feed(stream: IO[bytes] | None, chunks: list[list[Any]]) -> None:
    """Send the chunks, then close the helper's input; a helper gone meanwhile ends it early."""
    if stream is None:
        return
    try:
        for chunk in chunks:
            pickle.dump(chunk, stream, protocol=pickle.HIGHEST_PROTOCOL)
        stream.flush()
    except (OSError, ValueError):
        pass  # the helper stopped (or was stopped): what it did not return is analysed here
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _serve() -> None:
    """The helper: each chunk read, analysed and written back, until its input ends."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            chunk = pickle.load(source)
        except EOFError:
            return
        lines = [field_lines(name, description, text, member) for name, description, text, member in chunk]
        pickle.dump(lines, sink, protocol=pickle.HIGHEST_PROTOCOL)
        sink.flush()
