"""How hard the suite tries, chosen by ``EIDETIC_TEST_PROFILE``:

- ``ci`` (the default: the README's test command, what CI runs): each property test, kill loop
  and crowd of concurrent processes at a size that still fails on the bugs it was written for,
  so the whole suite fits in minutes;
- ``soak``: the sizes these tests were written with, for a run before a release (CONTRIBUTING.md
  says how);
- ``quick``: smaller still, for the edit-test loop.

A test names both sizes where it loops (``sized(ci=..., soak=...)``); Hypothesis's own profiles
of the same names (registered in ``conftest.py``) carry the settings every property test shares.
"""

from __future__ import annotations

import os

PROFILES = ("quick", "ci", "soak")
PROFILE = os.environ.get("EIDETIC_TEST_PROFILE", "ci").strip() or "ci"
if PROFILE not in PROFILES:
    raise SystemExit(f"EIDETIC_TEST_PROFILE={PROFILE!r}: choose one of {', '.join(PROFILES)}")


def sized(ci: int, soak: int) -> int:
    """The size of a loop under the chosen profile: ``soak`` or ``ci`` as given; ``quick`` half
    of ``ci`` (at least 1)."""
    if PROFILE == "soak":
        return soak
    return ci if PROFILE == "ci" else max(1, ci // 2)
