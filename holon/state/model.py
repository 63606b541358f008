"""Serve state records and their convergent merge. Pure: no I/O.

A ServeState maps f"{kind}:{key}" to one Record. Two copies of a state (say a serve instance's and
an Actions run's) merge record by record: the greater record under a total order wins, so merge is
commutative, associative and idempotent and every copy converges on the same state.

The order is (rank, deleted, updated_at, writer, canonical data, status), higher wins. Rank comes
first so a settled record (rank 2) never goes back to inflight (rank 1); `deleted` comes next so a
tombstone beats a live record of the same rank. Status is the last tiebreak only to make the order
total (two statuses can share a rank).
"""

from __future__ import annotations

import heapq
import json
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from typing import Any, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import to_json

from holon.state import aged
from holon.state.aged import Records

RecordKind = Literal[
    "dedupe", "intent", "wait", "closure", "cooldown", "pause", "meta", "memory", "spend"
]

STATUS_RANK: dict[str, int] = {
    "pending": 0,
    "live": 0,
    "inflight": 1,
    "succeeded": 2,
    "failed": 2,
    "refused": 2,
    "expired": 2,
    "cancelled": 2,
    "seen": 2,
    "done": 2,
}

# Records carry times Holon's clock gave them; outside these a state file is not one Holon wrote.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)
DEFAULT_RETENTION = timedelta(days=30)
DEFAULT_MAX_DEDUPE = 20_000
DEFAULT_MAX_SETTLED = 2_000
DEFAULT_MAX_CLOSURES = 2_000
DEFAULT_MAX_MEMORIES = 2_000


def rank_of(status: str) -> int:
    """The merge rank of a status; unknown statuses rank 0 (they lose to anything in flight)."""
    return STATUS_RANK.get(status, 0)


def record_id(kind: str, key: str) -> str:
    # Kinds contain no colon, so the first colon splits an id unambiguously.
    return f"{kind}:{key}"


# One set per combination of the fields a record was given (at most 2**8 of them).
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class Record(BaseModel):
    """One keyed fact of the serve loop: a dedupe mark, an intent, a wait, a pause, ..."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Not serialized: state.json files each record under its id `kind:key`, and loading restores
    # both from it, which keeps the file small (see ServeState._ids_restored).
    kind: RecordKind = Field(exclude=True)
    key: str = Field(exclude=True)
    status: str = "live"
    rank: int = 0
    updated_at: AwareDatetime
    writer: str
    deleted: bool = False
    data: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _rank_follows_status(cls, value: Any) -> Any:
        # An omitted rank is the status's rank, so a settled record cannot be built to lose a merge
        # to an inflight one by forgetting it. An explicit rank (as stored on disk) is kept.
        if isinstance(value, dict) and "rank" not in value and isinstance(value.get("status"), str):
            return {**value, "rank": rank_of(value["status"])}
        return value

    @model_validator(mode="after")
    def _shared_fields_set(self) -> Record:
        # pydantic gives every instance its own set of the fields given (~730 bytes for seven),
        # twice the rest of a dedupe mark; a frozen record never changes it (model_copy copies
        # it), so records given the same fields share one: a full state (20,000 dedupe marks,
        # 2,000 each of intents, memories, closures) is ~20 MiB smaller in a long-running serve.
        given = self.__pydantic_fields_set__
        object.__setattr__(
            self, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(given), given)
        )
        return self

    @classmethod
    def fresh(
        cls,
        kind: RecordKind,
        key: str,
        status: str,
        updated_at: datetime,
        writer: str,
        data: dict[str, Any],
    ) -> Record:
        """The record `Record(kind=..., key=..., status=..., updated_at=..., writer=...,
        data=...)` builds, without its validation's cost: for records Holon makes from its own
        values (a pass writes several per event). The same checks, the same result."""
        if (
            kind not in _KINDS
            or type(key) is not str
            or type(status) is not str
            or type(writer) is not str
            or type(data) is not dict
            or not isinstance(updated_at, datetime)
            or updated_at.tzinfo is None
            or not EARLIEST <= updated_at < LATEST
        ):
            # Not plainly Holon's own values: validated the usual way (same result or error).
            return cls(
                kind=kind, key=key, status=status, updated_at=updated_at, writer=writer, data=data
            )
        values = {
            "kind": kind,
            "key": key,
            "status": status,
            "rank": rank_of(status),
            "updated_at": updated_at.astimezone(UTC),
            "writer": writer,
            "deleted": False,
            "data": dict(data),  # as validation does: the caller may change its dict later
        }
        record = cls.__new__(cls)
        object.__setattr__(record, "__dict__", values)
        object.__setattr__(record, "__pydantic_fields_set__", _FRESH_FIELDS)
        object.__setattr__(record, "__pydantic_extra__", None)
        object.__setattr__(record, "__pydantic_private__", None)
        return record

    @field_validator("updated_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        # A restored state is not trusted: near year 1 or 9999 an offset cannot even be converted
        # (`0001-01-01T00:00:00+23:59`), and retention and cooldown arithmetic would overflow.
        # Comparing across offsets is safe; converting is not, so the range is checked first.
        if not EARLIEST <= value < LATEST:
            raise ValueError("timestamp out of range (1970 to 3000)")
        # One representation per instant: equal records then serialize identically.
        return value.astimezone(UTC)


_KINDS = frozenset(get_args(RecordKind))
# The fields a record built from kind, key, status, time, writer and data was given (the rank
# added from the status): what `Record.fresh` shares, as validation would.
_FRESH_FIELDS = _FIELDS_SETS.setdefault(
    frozenset(("kind", "key", "status", "rank", "updated_at", "writer", "data")),
    {"kind", "key", "status", "rank", "updated_at", "writer", "data"},
)


class ServeState(BaseModel):
    """All records of one state directory. Mutable: the serve loop updates it in place."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    records: dict[str, Record] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _ids_restored(cls, value: Any) -> Any:
        records = value.get("records") if isinstance(value, dict) else None
        if not isinstance(records, dict):
            return value
        restored = {}
        for rid, record in records.items():
            if isinstance(record, dict) and "kind" not in record and isinstance(rid, str):
                kind, _, key = rid.partition(":")
                record = {**record, "kind": kind, "key": key}
            restored[rid] = record
        return {**value, "records": restored}

    @model_validator(mode="after")
    def _ids_match(self) -> ServeState:
        for rid, record in self.records.items():
            expected = record_id(record.kind, record.key)
            if rid != expected:
                raise ValueError(
                    f"record {rid!r} is filed under the wrong id (expected {expected!r})"
                )
        # Indexed by age as it changes, so `prune` need not walk every record (aged.py).
        self.__dict__["records"] = Records(self.records)
        return self

    def get(self, kind: RecordKind, key: str) -> Record | None:
        """The live record, or None when absent or tombstoned."""
        record = self.records.get(record_id(kind, key))
        return None if record is None or record.deleted else record

    def put(self, record: Record) -> None:
        """Store a record unconditionally: the local writer is authoritative over its own copy."""
        self.records[record_id(record.kind, record.key)] = record

    def delete(self, kind: RecordKind, key: str, *, at: datetime, writer: str) -> None:
        """Replace a live record by a tombstone (same rank, new time); absent or deleted: no-op."""
        current = self.records.get(record_id(kind, key))
        if current is None or current.deleted:
            return
        # The payload is dropped: a tombstone only has to win merges, and it keeps the file small.
        self.put(
            Record(
                kind=kind,
                key=key,
                status=current.status,
                rank=current.rank,
                updated_at=at,
                writer=writer,
                deleted=True,
            )
        )

    def live(self, kind: RecordKind) -> list[Record]:
        """Non-deleted records of a kind, oldest first (ties by key)."""
        found = [r for r in self.records.values() if r.kind == kind and not r.deleted]
        return sorted(found, key=lambda r: (r.updated_at, r.key))


class StateJSON:
    """`state.model_dump_json(exclude_defaults=True)`, byte for byte, at the cost of the records
    changed since the previous dump: each record's JSON is kept with the record it was made of.

    Records are values: a state changes by putting a new record under an id, never by changing
    one in place (they are frozen; their data is copied when made and never written to after),
    so the same record object always serializes the same. A serve checkpointing a state of
    20,000-odd records every 1,000 events reserializes about a thousand of them, not all.
    """

    def __init__(self) -> None:
        # By record id: the record last serialized, and its `"id":{...}` JSON (bytes only: a
        # dict the garbage collector need not walk).
        self._records: dict[str, Record] = {}
        self._pieces: dict[str, bytes] = {}
        # The age-indexed records the last dump was of (their changes since are asked).
        self._last: Records | None = None

    def dump(self, state: ServeState) -> bytes:
        return b"".join(self.chunks(state))

    def chunks(self, state: ServeState) -> list[bytes]:
        """`dump`'s bytes in a few pieces, to be written as they are: joining them would copy
        the whole file once more (megabytes, at every checkpoint)."""
        records = state.records
        made, pieces = self._records, self._pieces
        if not records or type(state) is not ServeState:
            self._last = None
            made.clear()
            pieces.clear()
            return [state.model_dump_json(exclude_defaults=True).encode()]
        serialize = _RECORD_JSON.to_json
        # An age-indexed state says which ids changed since this dump's previous one of it
        # (asked each time: what it says then starts from this dump).
        indexed = records if type(records) is Records else None
        changed = indexed.changed(self) if indexed is not None else None
        if self._last is not indexed:  # another state's records were dumped in between
            changed = None
        self._last = indexed
        if changed is None:
            changed = records.keys() | made.keys()
        for rid in changed:
            record = records.get(rid)
            if record is None:  # records gone from the state are not held
                if rid in made:
                    del made[rid], pieces[rid]
            elif made.get(rid) is not record:
                made[rid] = record
                pieces[rid] = to_json(rid) + b":" + serialize(record, exclude_defaults=True)
        joined = b",".join(map(pieces.__getitem__, records))  # in the state's order
        return [b'{"records":{', joined, b"}}"]


_RECORD_JSON = Record.__pydantic_serializer__
_age = attrgetter("updated_at", "key")


def _canonical(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def greater(a: Record, b: Record) -> Record:
    """The merge winner of two records with the same id (see the module docstring)."""
    head_a = (a.rank, a.deleted, a.updated_at, a.writer)
    head_b = (b.rank, b.deleted, b.updated_at, b.writer)
    if head_a != head_b:
        return a if head_a > head_b else b
    # Rare full tie on the cheap fields: only now pay for serializing the payloads.
    tail_a = (_canonical(a.data), a.status)
    tail_b = (_canonical(b.data), b.status)
    return a if tail_a >= tail_b else b


def merge(a: ServeState, b: ServeState) -> ServeState:
    """A new state holding, for every record id of either side, the greater record."""
    records: dict[str, Record] = {}
    for rid in sorted(a.records.keys() | b.records.keys()):
        left, right = a.records.get(rid), b.records.get(rid)
        if left is None or right is None:
            winner = left if right is None else right
            assert winner is not None  # the id came from one of the two sides
            records[rid] = winner
        else:
            records[rid] = greater(left, right)
    return ServeState(records=records)


def prune(
    state: ServeState,
    *,
    now: datetime,
    retention: timedelta = DEFAULT_RETENTION,
    max_dedupe: int = DEFAULT_MAX_DEDUPE,
    max_settled: int = DEFAULT_MAX_SETTLED,
    max_closures: int = DEFAULT_MAX_CLOSURES,
    max_memories: int = DEFAULT_MAX_MEMORIES,
) -> int:
    """Physically drop old dedupe records, settled intents and tombstones; return how many.

    Dedupe marks (live or tombstoned) older than `retention` go, then the oldest beyond
    `max_dedupe`; spend records and tombstones of any kind older than `retention` go too;
    settled intents (rank 2, their results stay in actions.ndjson, whose segments are all kept
    by default) beyond the newest `max_settled`, the closures of the least recently active
    subjects beyond `max_closures`, and likewise their memories (`memory` records, one per
    subject, each of bounded size) beyond `max_memories`, go as well. This bounds the state file
    however many events arrive. The price: a copy older than `retention` can resurrect what a
    pruned tombstone had deleted, so copies should merge well within the retention window.
    """
    if now.tzinfo is None:
        raise ValueError("prune needs a timezone-aware 'now'")
    if max_dedupe < 0:
        raise ValueError("max_dedupe must not be negative")
    cutoff = now - retention
    if type(state.records) is Records:
        return _prune_indexed(
            state.records, cutoff, max_dedupe, max_settled, max_closures, max_memories
        )
    doomed: list[str] = []
    dedupe: list[Record] = []
    settled: list[Record] = []
    closures: list[Record] = []
    memories: list[Record] = []
    # One pass: this runs every serve pass over up to max_dedupe + one pass's worth of records.
    for rid, record in state.records.items():
        kind = record.kind
        # A day's spend records (controller/spending.py) matter only on their day.
        if (kind == "dedupe" or kind == "spend" or record.deleted) and record.updated_at < cutoff:
            doomed.append(rid)
        elif kind == "dedupe":
            dedupe.append(record)
        elif kind == "intent":
            if record.rank >= 2:
                settled.append(record)
        elif kind == "closure":
            closures.append(record)
        elif kind == "memory":
            memories.append(record)
    capped = (
        (dedupe, max_dedupe),
        (settled, max_settled),
        (closures, max_closures),
        (memories, max_memories),
    )
    for found, cap in capped:
        excess = max(0, len(found) - cap)
        if excess:
            # The oldest `excess`, as sorting all and cutting would give them (ties kept in
            # order), without sorting all: a checkpoint usually cuts ~1,000 of ~21,000 marks.
            oldest = heapq.nsmallest(excess, found, key=_age)
            doomed.extend(record_id(r.kind, r.key) for r in oldest)
    for rid in doomed:
        del state.records[rid]
    return len(doomed)


def _prune_indexed(
    records: Records,
    cutoff: datetime,
    max_dedupe: int,
    max_settled: int,
    max_closures: int,
    max_memories: int,
) -> int:
    """`prune` on an age-indexed state: the records it would drop, taken oldest first off
    their groups' heaps (aged.py) rather than found by walking them all."""
    removed = 0
    # What retention drops first: they then count in no cap, as in the full walk.
    while (top := records.oldest(aged.RETIRING)) is not None and top[1].updated_at < cutoff:
        del records[top[0]]
        removed += 1
    capped = (
        (aged.DEDUPE, max_dedupe),
        (aged.SETTLED, max_settled),
        (aged.CLOSURES, max_closures),
        (aged.MEMORIES, max_memories),
    )
    for group, cap in capped:
        for _ in range(max(0, records.count(group) - cap)):
            top = records.oldest(group)
            assert top is not None  # the count says there are this many
            del records[top[0]]
            removed += 1
    return removed
