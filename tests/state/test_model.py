"""ServeState records: get/put/delete/live, rank defaults, merge basics and pruning."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from holon.state.model import (
    Record,
    RecordKind,
    ServeState,
    merge,
    prune,
    rank_of,
    record_id,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(kind: RecordKind, key: str, *, minutes: int = 0, **extra: Any) -> Record:
    fields: dict[str, Any] = {"writer": "serve-a", "updated_at": T0 + timedelta(minutes=minutes)}
    return Record(kind=kind, key=key, **{**fields, **extra})


def test_get_put_delete_live() -> None:
    state = ServeState()
    assert state.get("intent", "i1") is None
    state.put(rec("intent", "i1", minutes=2, status="pending", data={"n": 1}))
    state.put(rec("intent", "i0", minutes=1))
    state.put(rec("wait", "w1"))
    got = state.get("intent", "i1")
    assert got is not None
    assert got.data == {"n": 1}
    assert [r.key for r in state.live("intent")] == ["i0", "i1"]

    state.delete("intent", "i1", at=T0 + timedelta(hours=1), writer="serve-b")
    assert state.get("intent", "i1") is None
    tomb = state.records["intent:i1"]
    assert tomb.deleted
    assert tomb.rank == 0
    assert tomb.writer == "serve-b"
    assert tomb.updated_at == T0 + timedelta(hours=1)
    assert tomb.data == {}
    assert [r.key for r in state.live("intent")] == ["i0"]

    state.delete("intent", "missing", at=T0, writer="x")  # absent: no-op
    assert "intent:missing" not in state.records


def test_put_replaces_unconditionally() -> None:
    state = ServeState()
    state.put(rec("intent", "i", status="succeeded", minutes=5))
    state.put(rec("intent", "i", status="inflight", minutes=1))
    got = state.get("intent", "i")
    assert got is not None
    assert got.status == "inflight"


def test_live_ties_sort_by_key() -> None:
    state = ServeState()
    for key in ["b", "c", "a"]:
        state.put(rec("wait", key))
    assert [r.key for r in state.live("wait")] == ["a", "b", "c"]


def test_rank_follows_status_unless_given() -> None:
    assert rec("intent", "i", status="succeeded").rank == 2
    assert rec("intent", "i", status="inflight").rank == 1
    assert rec("intent", "i", status="whatever").rank == 0
    assert rec("intent", "i", status="succeeded", rank=0).rank == 0
    assert rank_of("refused") == 2
    assert rank_of("unknown") == 0


def test_record_is_frozen_strict_and_normalized_to_utc() -> None:
    with pytest.raises(ValidationError):
        Record(kind="intent", key="i", updated_at=datetime(2026, 1, 1), writer="w")  # naive
    with pytest.raises(ValidationError):
        Record.model_validate({"kind": "nope", "key": "i", "updated_at": T0, "writer": "w"})
    with pytest.raises(ValidationError):
        Record.model_validate({"kind": "meta", "key": "i", "updated_at": T0, "writer": "w", "x": 1})
    plus_two = timezone(timedelta(hours=2))
    record = rec("meta", "m", updated_at=datetime(2026, 1, 1, 2, tzinfo=plus_two))
    assert record.updated_at.utcoffset() == timedelta(0)
    assert record == rec("meta", "m")
    with pytest.raises(ValidationError):
        record.status = "done"  # type: ignore[misc]


def test_state_rejects_records_filed_under_the_wrong_id() -> None:
    good = rec("intent", "a:b")
    assert record_id("intent", "a:b") == "intent:a:b"
    ServeState(records={"intent:a:b": good})
    with pytest.raises(ValidationError, match="wrong id"):
        ServeState(records={"intent:x": good})


def test_merge_keeps_settled_and_tombstones() -> None:
    a, b = ServeState(), ServeState()
    a.put(rec("intent", "i", status="succeeded", minutes=1, writer="a"))
    b.put(rec("intent", "i", status="inflight", minutes=9, writer="b"))
    a.put(rec("wait", "w", minutes=1))
    b.put(rec("wait", "w", minutes=0))
    b.delete("wait", "w", at=T0, writer="b")  # older than a's live copy, same rank
    b.put(rec("meta", "only-b"))
    merged = merge(a, b)
    assert merged == merge(b, a)
    intent = merged.get("intent", "i")
    assert intent is not None
    assert intent.status == "succeeded"
    assert merged.get("wait", "w") is None
    assert merged.records["wait:w"].deleted
    assert merged.get("meta", "only-b") is not None
    assert a.get("wait", "w") is not None  # inputs untouched


def test_prune_by_age_drops_old_dedupe_and_old_tombstones_only() -> None:
    now = T0 + timedelta(days=40)
    state = ServeState()
    state.put(rec("dedupe", "old", status="seen"))  # 40 days old
    state.put(rec("dedupe", "new", status="seen", minutes=60 * 24 * 20))
    state.put(rec("intent", "old-live", status="succeeded"))  # old but live and not dedupe
    state.put(rec("intent", "old-gone"))
    state.delete("intent", "old-gone", at=T0, writer="a")
    state.put(rec("wait", "new-gone"))
    state.delete("wait", "new-gone", at=now - timedelta(days=1), writer="a")
    assert prune(state, now=now) == 2
    assert set(state.records) == {"dedupe:new", "intent:old-live", "wait:new-gone"}


def test_prune_by_count_keeps_the_newest() -> None:
    state = ServeState()
    for i in range(10):
        state.put(rec("dedupe", f"d{i}", status="seen", minutes=i))
    state.put(rec("intent", "i"))
    assert prune(state, now=T0, max_dedupe=3) == 7
    assert [r.key for r in state.live("dedupe")] == ["d7", "d8", "d9"]
    assert state.get("intent", "i") is not None
    assert prune(state, now=T0, max_dedupe=3) == 0


def test_prune_refuses_naive_now() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        prune(ServeState(), now=datetime(2026, 1, 1))


@pytest.fixture
def _no_gc() -> Iterator[None]:
    # A million short-lived records would make the cyclic collector rescan the live ones again and
    # again; nothing here forms cycles, so pausing it halves the test's time.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.usefixtures("_no_gc")
def test_a_million_dedupe_inserts_stay_under_five_megabytes() -> None:
    state = ServeState()
    template = rec("dedupe", "x", status="seen", writer="serve-0123456789")
    batch, total = 10_000, 1_000_000
    removed = 0
    for start in range(0, total, batch):
        # model_copy skips validation: a cheap way to build a million distinct records. A batch
        # shares one time; keys still order it, so "oldest" stays well defined.
        stamped = template.model_copy(update={"updated_at": T0 + timedelta(seconds=start)})
        for n in range(start, start + batch):
            key = f"delivery-{n:012d}"
            state.records["dedupe:" + key] = stamped.model_copy(update={"key": key})
        removed += prune(state, now=T0 + timedelta(seconds=start))
    assert len(state.records) == 20_000
    assert removed == total - 20_000
    assert state.live("dedupe")[0].key == f"delivery-{total - 20_000:012d}"
    size = len(state.model_dump_json().encode())
    assert size < 5 * 1024 * 1024, size


def test_prune_caps_settled_intents_but_keeps_inflight() -> None:
    from datetime import UTC, datetime, timedelta

    from holon.state.model import Record, ServeState, prune

    now = datetime(2026, 11, 21, tzinfo=UTC)
    state = ServeState()
    for i in range(10):
        state.put(
            Record(
                kind="intent",
                key=f"s{i}",
                status="succeeded",
                updated_at=now + timedelta(seconds=i),
                writer="w",
            )
        )
    state.put(Record(kind="intent", key="open", status="inflight", updated_at=now, writer="w"))
    assert prune(state, now=now, max_settled=3) == 7
    assert sorted(r.key for r in state.live("intent")) == ["open", "s7", "s8", "s9"]
