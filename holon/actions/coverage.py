"""Which state artifacts a state already holds, so a restore merges every one it lacks. Pure.

Runs that start together each restore the same state and upload their own artifact. Merging
only the newest few would lose the others for good: the next run would merge those few, and
every later run what came after. Instead each bundle says which artifacts its state holds (a
`meta` record `restored_artifacts`: the ids the restore that made it merged, or found held by
what it merged), and a restore walks the trusted artifacts newest first, downloading only those
no newer bundle (nor the live state) holds already. Held is transitive: a run's record lists
what its own sources held too, so in the steady state a restore downloads just the artifacts
of the runs since the last one merged. A bundle can only vouch for older artifacts (it was
made after them), which the newest-first walk gives for free.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from holon.state.model import Record, ServeState

KEY = "restored_artifacts"
WRITER = "restore"
# Downloads per restore. The rest stay unheld, so the next restore takes them (newest first).
MAX_MERGED = 30


def held(state: ServeState) -> set[int]:
    """The artifact ids `state` says it holds; nothing when its record is not well formed."""
    record = state.get("meta", KEY)
    found = record.data.get("ids") if record is not None else None
    if not isinstance(found, list):
        return set()
    return {i for i in found if isinstance(i, int) and not isinstance(i, bool) and i > 0}


def held_record(ids: Iterable[int], at: datetime) -> Record:
    """The record saying the state holds `ids` (sorted, so equal sets are equal records)."""
    data: dict[str, Any] = {"ids": sorted(set(ids))}
    return Record(kind="meta", key=KEY, status="live", updated_at=at, writer=WRITER, data=data)


__all__ = ["KEY", "MAX_MERGED", "held", "held_record"]
