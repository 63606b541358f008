"""A record's in-memory cost: a long-running serve holds up to 20,000 dedupe marks and 2,000 each
of intents, memories and closures, so a byte per record is 26 KB. Found by bench.load: a serve
with a full state sat at ~150 MiB, half of a dedupe mark being pydantic's per-instance set of
the fields given."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime

from holon.state.model import Record, ServeState

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _mark(i: int) -> Record:
    key = f"github:Codertocat/Hello-World:issues.opened:{100_000 + i}:opened:2019-05-15T15:20:18Z"
    return Record(kind="dedupe", key=key, status="seen", updated_at=AT, writer="serve-1", data={})


def test_a_dedupe_mark_costs_under_a_kilobyte() -> None:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        marks = [_mark(i) for i in range(5_000)]
        per_mark = (tracemalloc.get_traced_memory()[0] - before) / len(marks)
    finally:
        tracemalloc.stop()
    assert per_mark < 1_000  # ~750 bytes with its key; ~1,470 with a set of its own


def test_records_given_the_same_fields_share_one_set_that_nothing_changes() -> None:
    a, b = _mark(1), _mark(2)
    assert a.model_fields_set is b.model_fields_set
    given = set(a.model_fields_set)
    changed = a.model_copy(update={"status": "done"})
    assert changed.status == "done"
    assert a.model_fields_set == given  # the copy has its own
    lean = Record(kind="dedupe", key="k", updated_at=AT, writer="w")
    assert lean.model_fields_set == {"kind", "key", "updated_at", "writer"}
    assert lean.model_dump(exclude_unset=True) == {"updated_at": AT, "writer": "w"}
    assert a.model_fields_set == given


def test_a_state_round_trips_unchanged() -> None:
    state = ServeState(records={f"dedupe:{m.key}": m for m in (_mark(1), _mark(2))})
    again = ServeState.model_validate_json(state.model_dump_json())
    assert again == state
    assert again.model_dump_json() == state.model_dump_json()
