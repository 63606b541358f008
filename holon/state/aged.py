"""The serve state's records, indexed by age for pruning (`state.model.prune`).

`Records` is the dict a `ServeState` keeps its records in. Every change to it also goes into
age-ordered heaps, one per group `prune` bounds (dedupe marks, settled intents, closures,
memories, and what retention drops: dedupe marks, spend records and tombstones), with each
group's count. `prune` then removes only the oldest excess, found at the top of those heaps,
instead of walking every record at each checkpoint: the same records go, as the walk picks them.

A heap entry is (updated_at, key, record id, sequence number, record); it still stands only
while the state holds that very record under that id (records are frozen values: a change puts
a new record, which is pushed anew), so replaced and removed records' entries are dropped as
they come up, and a heap is rebuilt when stale entries outnumber the live ones.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holon.state.model import Record

DEDUPE, SETTLED, CLOSURES, MEMORIES, RETIRING = range(5)
GROUPS = 5
# A heap is rebuilt once its stale entries outnumber its live ones by this margin and more.
_SLACK = 1024

Entry = tuple[datetime, str, str, int, "Record"]


def groups_of(record: Record) -> tuple[int, ...]:
    """The groups `prune` bounds that `record` counts in (see its docstring)."""
    kind = record.kind
    if kind == "dedupe":
        return (DEDUPE, RETIRING)
    retiring = kind == "spend" or record.deleted
    if kind == "intent" and record.rank >= 2:
        return (SETTLED, RETIRING) if retiring else (SETTLED,)
    if kind == "closure":
        return (CLOSURES, RETIRING) if retiring else (CLOSURES,)
    if kind == "memory":
        return (MEMORIES, RETIRING) if retiring else (MEMORIES,)
    return (RETIRING,) if retiring else ()


_dict_get = dict.get
_dict_set = dict.__setitem__


class Records(dict[str, "Record"]):
    """A dict of records by id that keeps the age index as it changes (see the docstring)."""

    def __init__(self, items: Mapping[str, Record] | Iterable[tuple[str, Record]] = ()) -> None:
        super().__init__()
        self._heaps: list[list[Entry]] = [[] for _ in range(GROUPS)]
        self._counts = [0] * GROUPS
        self._sequence = itertools.count()
        # The ids changed since `changed` was last asked, for the one reader that asked
        # (`StateJSON`: each record's JSON is made again only when it changed).
        self._changed: set[str] = set()
        self._reader: object = None
        self.update(items)

    # -- the mutators a dict has, each keeping the index
    def __setitem__(self, rid: str, record: Record) -> None:
        # dict's own methods, not `super()`: a pass puts several records per event.
        old = _dict_get(self, rid)
        _dict_set(self, rid, record)
        self._changed.add(rid)
        if old is not None:
            self._forget(old)
        self._track(rid, record)

    def __delitem__(self, rid: str) -> None:
        old = super().pop(rid)
        self._changed.add(rid)
        self._forget(old)

    def pop(self, rid: str, *default: Any) -> Any:
        if rid not in self:
            return super().pop(rid, *default)
        old = super().pop(rid)
        self._changed.add(rid)
        self._forget(old)
        return old

    def popitem(self) -> tuple[str, Record]:
        rid, old = super().popitem()
        self._changed.add(rid)
        self._forget(old)
        return rid, old

    def setdefault(self, rid: str, default: Record | None = None) -> Any:
        if rid not in self:
            self[rid] = default  # type: ignore[assignment]
        return super().__getitem__(rid)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for rid, record in dict(*args, **kwargs).items():
            self[rid] = record

    def __ior__(self, other: Any) -> Records:  # type: ignore[override,misc]
        self.update(other)
        return self

    def clear(self) -> None:
        self._changed.update(self)
        super().clear()
        self._heaps = [[] for _ in range(GROUPS)]
        self._counts = [0] * GROUPS

    def copy(self) -> Records:
        return Records(self)

    def __copy__(self) -> Records:
        return Records(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Records:
        import copy

        return Records({rid: copy.deepcopy(r, memo) for rid, r in self.items()})

    def __reduce__(self) -> tuple[Any, ...]:
        return (Records, (dict(self),))

    # -- the index
    def changed(self, reader: object) -> set[str] | None:
        """The ids set or removed since `reader` last asked; None if another reader asked
        since (or none before): every id may have changed for this one."""
        found = self._changed if self._reader is reader else None
        self._changed = set()
        self._reader = reader
        return found

    def count(self, group: int) -> int:
        return self._counts[group]

    def oldest(self, group: int) -> tuple[str, Record] | None:
        """The group's oldest record by (updated_at, key) and its id (None: the group is
        empty); entries of records the state no longer holds are dropped on the way."""
        heap = self._heaps[group]
        get = super().get
        while heap:
            entry = heap[0]
            if get(entry[2]) is entry[4]:
                return entry[2], entry[4]
            heapq.heappop(heap)
        return None

    def _track(self, rid: str, record: Record) -> None:
        groups = groups_of(record)
        if not groups:
            return
        entry = (record.updated_at, record.key, rid, next(self._sequence), record)
        for group in groups:
            self._counts[group] += 1
            heap = self._heaps[group]
            heapq.heappush(heap, entry)
            if len(heap) > 2 * self._counts[group] + _SLACK:
                self._heaps[group] = self._live(heap)

    def _forget(self, record: Record) -> None:
        for group in groups_of(record):
            self._counts[group] -= 1

    def _live(self, heap: list[Entry]) -> list[Entry]:
        get = super().get
        kept = [e for e in heap if get(e[2]) is e[4]]
        heapq.heapify(kept)
        return kept


__all__ = ["CLOSURES", "DEDUPE", "MEMORIES", "RETIRING", "SETTLED", "Records", "groups_of"]
