"""Holon's own items (comments, check runs) this process wrote or found, by marker key, so the
next change to the same item goes straight to it: one call (the edit) instead of a look-up and
the edit, as when a run's progress comment is settled after it was started.

Only a shortcut, never the truth: a new process (a redelivery, the next workflow run) knows
nothing and looks its items up by marker, and an item is never created on this knowledge (only
an id that is known is written to). An item deleted meanwhile answers 404: the caller forgets it
and looks it up again. A write that says what Holon last wrote is not sent on this knowledge
either: the caller looks the item up, which costs the same one call and sees an edit by
someone else. What was written is kept as a digest, and the oldest entries go past `LIMIT`, so
a long-lived serve holds a bounded amount.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from holon.github.errors import NotFound

LIMIT = 4096  # items remembered; each about a hundred bytes


def digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Written:
    id: int
    said: bytes  # digest of what Holon last wrote into it

    def says(self, text: str) -> bool:
        return self.said == digest(text)


class Known:
    def __init__(self, limit: int = LIMIT) -> None:
        self._items: OrderedDict[Hashable, Written] = OrderedDict()
        self._limit = limit

    def get(self, key: Hashable) -> Written | None:
        return self._items.get(key)

    def remember(self, key: Hashable, item_id: int, text: str) -> None:
        """`item_id` is Holon's item for `key` and now says `text`."""
        self._items[key] = Written(item_id, digest(text))
        self._items.move_to_end(key)
        while len(self._items) > self._limit:
            self._items.popitem(last=False)

    def forget(self, key: Hashable) -> None:
        self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class _Item(Protocol):
    @property
    def id(self) -> int: ...


Item = TypeVar("Item", bound=_Item)


def write_known(
    known: Known, key: Hashable, said: str, write: Callable[[int], Item]
) -> Item | None:
    """`write(id)` to the known item for `key`, which then says `said`; None when the item is
    not known, already says `said` as far as this process knows (the caller looks it up), or
    is gone (then forgotten, and the caller looks it up)."""
    written = known.get(key)
    if written is None or written.says(said):
        return None
    try:
        item = write(written.id)
    except NotFound:
        known.forget(key)
        return None
    known.remember(key, item.id, said)
    return item
