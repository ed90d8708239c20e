"""Record types a caller may see, and a warning for a type none of them has: ``--type decisoin``
is most likely ``decision``. Types are free text, so an unknown one is warned about, never
refused; only types of records the caller may see are named, so another scope's private
records show through neither as a suggestion nor as a count."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import did_you_mean
from ..listing import Order
from ..ranking.access import Access
from ..ranking.filters import Filters
from ..records import COMMON_TYPES, LIFECYCLES
from .stores import StoreSet

SHOWN = 12  # the most known types a warning lists


def unknown(stores: StoreSet, types: Iterable[str], access: Access) -> list[str]:
    """The types among ``types`` that are neither common nor held by a record ``access`` may see
    (in any lifecycle): one count per type and store, no record read."""
    asked = [kind for kind in dict.fromkeys(types) if kind not in COMMON_TYPES]
    if not asked:
        return []
    everything, synced = Access(access.scope, states=LIFECYCLES), stores.synced()
    return [
        kind
        for kind in asked
        if not any(store.listing(everything, Filters(types=(kind,)), Order(), 0)[1] for store in synced)
    ]


def known(stores: StoreSet, access: Access) -> list[str]:
    """The common types and those of every record ``access`` may see, sorted."""
    held = {item.record.type for _, item in stores.entries(access)}
    return sorted(held | set(COMMON_TYPES))


def warnings(stores: StoreSet, types: Iterable[str], access: Access, *, new: bool) -> list[str]:
    """One warning per unknown type. ``new``: the types of records being written, where a type
    no record has yet is warned about only when it is close to a known one (a typo, not a new
    kind of record); else the types of a filter, which match nothing when unknown."""
    missing = unknown(stores, types, access)
    if not missing:
        return []
    kinds = known(stores, access)
    listed = ", ".join(kinds[:SHOWN]) + (f" and {len(kinds) - SHOWN} more" if len(kinds) > SHOWN else "")
    out = []
    for kind in missing:
        guess = did_you_mean(kind, kinds)
        if new and not guess:
            continue
        what = "is new: no record you may see has it" if new else "matches no record you may see"
        out.append(f"type {kind!r} {what}; {guess + ' ' if guess else ''}known types: {listed}")
    return out
