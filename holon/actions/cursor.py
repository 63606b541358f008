"""The reconcile cursor: where the last tick's look stopped (pure).

Kept in the state as the `meta` record `reconcile_cursor`: a time `since` and the dedupe keys
(with their times) of the events already reported at or after it. The next tick lists what
GitHub changed since `since` (GitHub's `since` is inclusive, to the second) and skips those
keys, so an item at the boundary is neither missed nor reported twice. The cursor stays a
little behind the tick (`SETTLE`), since GitHub's listings can show an item some seconds after
its time; the keys cover the overlap. A kind whose listing failed or was cut at the limit holds
the cursor back to where it is complete: what it did not read is read by the next tick.

The state may be restored from elsewhere, so a cursor is read strictly: one that is not the
shape written here, or lies in the future, counts as none (the caller then starts at `now`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from holon.gateway.github import parse_time
from holon.state.model import Record, ServeState

KEY = "reconcile_cursor"
LOOKBACK = timedelta(days=7)  # a tick never looks further back (docs/reconcile.md)
SETTLE = timedelta(minutes=2)
MAX_SEEN = 2_000  # keys a cursor may carry: 4 kinds of at most 100 items, with room


@dataclass(frozen=True)
class Cursor:
    since: datetime
    seen: Mapping[str, datetime] = field(default_factory=dict)


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def read_cursor(state: ServeState, now: datetime) -> Cursor | None:
    """The cursor in `state`; None when there is none, or none this build wrote."""
    record = state.get("meta", KEY)
    if record is None:
        return None
    data = record.data
    raw_seen = data.get("seen")
    if not isinstance(raw_seen, dict) or len(raw_seen) > MAX_SEEN:
        return None
    try:
        since = parse_time(data.get("since"))
        seen = {key: parse_time(at) for key, at in raw_seen.items() if isinstance(key, str)}
    except ValueError:
        return None
    if since is None or since > now or any(at is None for at in seen.values()):
        return None
    return Cursor(since, {key: at for key, at in seen.items() if at is not None})


def window_start(cursor: Cursor, now: datetime) -> datetime:
    """Where this tick's look starts: the cursor, but never more than `LOOKBACK` ago."""
    return max(cursor.since, now - LOOKBACK)


def advance(
    previous: Mapping[str, datetime],
    reported: Iterable[tuple[str, datetime]],
    *,
    now: datetime,
    start: datetime,
    complete_until: Iterable[datetime],
) -> Cursor:
    """The cursor after a tick that looked from `start`: at `now - SETTLE`, held back to the
    earliest point up to which some kind was not read whole (`complete_until`), never before
    `start`; carrying the keys at or after it."""
    since = min([now - SETTLE, *complete_until])
    since = max(since.replace(microsecond=0), start)
    seen = {key: at for key, at in [*previous.items(), *reported] if at >= since}
    if len(seen) > MAX_SEEN:
        # More than a cursor can carry at its time (hostile volume): the newest are kept; the
        # rest are left to the state's dedupe records.
        newest = sorted(seen.items(), key=lambda item: (item[1], item[0]))[-MAX_SEEN:]
        seen = dict(newest)
    return Cursor(since, seen)


def cursor_record(cursor: Cursor, *, now: datetime, writer: str) -> Record:
    return Record(
        kind="meta",
        key=KEY,
        status="live",
        updated_at=now,
        writer=writer,
        data={
            "since": _iso(cursor.since),
            "seen": {key: _iso(at) for key, at in sorted(cursor.seen.items())},
        },
    )


__all__ = [
    "KEY",
    "LOOKBACK",
    "MAX_SEEN",
    "SETTLE",
    "Cursor",
    "advance",
    "cursor_record",
    "read_cursor",
    "window_start",
]
