"""Property tests of merge: a convergent, rank-respecting join over generated states."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from holon.state.model import STATUS_RANK, Record, RecordKind, ServeState, merge

T0 = datetime(2026, 1, 1, tzinfo=UTC)
KINDS: list[RecordKind] = ["intent", "dedupe"]
KEYS = ["k0", "k1", "k2"]
STATUSES = [*STATUS_RANK, "custom"]

records = st.builds(
    Record,
    kind=st.sampled_from(KINDS),
    key=st.sampled_from(KEYS),
    status=st.sampled_from(STATUSES),
    rank=st.integers(min_value=0, max_value=2),
    updated_at=st.integers(min_value=0, max_value=3).map(lambda m: T0 + timedelta(minutes=m)),
    writer=st.sampled_from(["a", "b"]),
    deleted=st.booleans(),
    data=st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2),
)


def _state(items: list[Record]) -> ServeState:
    state = ServeState()
    for record in items:
        state.put(record)
    return state


states = st.lists(records, max_size=8).map(_state)
SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(states, states)
def test_commutative(a: ServeState, b: ServeState) -> None:
    assert merge(a, b) == merge(b, a)


@SETTINGS
@given(states, states, states)
def test_associative(a: ServeState, b: ServeState, c: ServeState) -> None:
    assert merge(merge(a, b), c) == merge(a, merge(b, c))


@SETTINGS
@given(states)
def test_idempotent(a: ServeState) -> None:
    assert merge(a, a) == a


@SETTINGS
@given(states, states)
def test_every_key_survives_as_one_sides_record(a: ServeState, b: ServeState) -> None:
    merged = merge(a, b)
    assert set(merged.records) == set(a.records) | set(b.records)
    for rid, winner in merged.records.items():
        assert winner in (a.records.get(rid), b.records.get(rid))


@SETTINGS
@given(states, states)
def test_settled_never_replaced_by_inflight(a: ServeState, b: ServeState) -> None:
    merged = merge(a, b)
    for rid, winner in merged.records.items():
        sides = [r for r in (a.records.get(rid), b.records.get(rid)) if r is not None]
        if any(r.rank == 2 for r in sides):
            assert winner.rank == 2


@SETTINGS
@given(states, states)
def test_tombstone_beats_live_of_same_rank(a: ServeState, b: ServeState) -> None:
    merged = merge(a, b)
    for rid, winner in merged.records.items():
        left, right = a.records.get(rid), b.records.get(rid)
        if left is None or right is None or left.rank != right.rank:
            continue
        if left.deleted or right.deleted:
            assert winner.deleted


@SETTINGS
@given(records, st.integers(min_value=4, max_value=9))
def test_settled_stays_settled_even_against_a_newer_inflight(settled: Record, later: int) -> None:
    done = settled.model_copy(update={"status": "succeeded", "rank": 2})
    retry = Record(
        kind=done.kind,
        key=done.key,
        status="inflight",
        updated_at=T0 + timedelta(minutes=later),
        writer="z",
    )
    assert merge(_state([done]), _state([retry])).records[f"{done.kind}:{done.key}"] == done
