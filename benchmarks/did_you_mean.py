"""What a "did you mean" costs (src/eidetic/errors.py ``close_matches``, and the id suggestion
of memory/curation.py) on the way to an error.

    python benchmarks/did_you_mean.py [--records 20000] [--rounds 5]

1. Matching one mistyped derived id (``m-`` and 20 hex digits, the hardest case: every id has
   the same length and letters) against 1,000 to 100,000 ids: difflib alone, and as shipped
   (the ids sharing most letter pairs first). Median of ``--rounds``.
2. Processes: ``eidetic show`` of a mistyped id in a files store of ``--records`` records (the
   most ids a suggestion is looked for among), next to ``show`` of an id that is there, and a
   mistyped verb next to ``eidetic --version``. Wall time, median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

from eidetic.errors import close_matches


def derived_ids(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"m-{rng.getrandbits(80):020x}" for _ in range(count)]


def median_s(run, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matching(rounds: int) -> list[dict]:
    rows = []
    for count in (1_000, 20_000, 100_000):
        ids = derived_ids(count)
        typo = ids[count // 2][:-1] + ("0" if ids[count // 2][-1] != "0" else "1")
        shipped = close_matches(typo, ids)
        assert ids[count // 2] in shipped, (typo, shipped)
        rows.append(
            {
                "ids": count,
                "difflib_alone_s": round(median_s(partial(difflib.get_close_matches, typo, ids), rounds), 3),
                "shipped_s": round(median_s(partial(close_matches, typo, ids), rounds), 3),
            }
        )
    return rows


def processes(records: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "EIDETIC_DATA_DIR": f"{home}/store"}
        env |= {"EIDETIC_CACHE_DIR": f"{home}/cache", "EIDETIC_STATE_DIR": f"{home}/state", "EIDETIC_EMBEDDER": "none"}
        lines = "".join(json.dumps({"id": f"note-{i}", "text": f"record number {i}"}) + "\n" for i in range(records))
        eidetic = [sys.executable, "-m", "eidetic"]
        subprocess.run(
            [*eidetic, "remember", "--no-embed", "--json"],
            input=lines,
            text=True,
            env=env,
            check=True,
            capture_output=True,
            cwd=home,
        )

        def timed(*args: str, code: int) -> float:
            def run() -> None:
                proc = subprocess.run([*eidetic, *args], env=env, capture_output=True, text=True, cwd=home)
                assert proc.returncode == code, proc.stderr

            run()  # the index is warm
            return round(median_s(run, rounds), 3)

        return {
            "records": records,
            "show_found_s": timed("show", f"note-{records // 2}", code=0),
            "show_mistyped_s": timed("show", f"nte-{records // 2}", code=1),
            "version_s": timed("--version", code=0),
            "mistyped_verb_s": timed("recal", "x", code=1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps({"matching": matching(args.rounds), "processes": processes(args.records, args.rounds)}, indent=1))


if __name__ == "__main__":
    main()
