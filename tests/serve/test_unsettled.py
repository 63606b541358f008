"""holon/serve/unsettled.py: a subject whose comment a settle failed to write is kept in the
state and settled by a later pass from the state's closure; a restored record that names no
subject Holon writes in, or whose closure does not read, settles nothing and is dropped."""

from __future__ import annotations

from datetime import UTC, datetime

from holon.closure.derive import derive_closure
from holon.closure.evidence import Evidence
from holon.closure.record import ClosureRecord
from holon.serve import unsettled
from holon.state.model import Record, ServeState

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def closure_data() -> dict[str, object]:
    """A closure as the state holds one: derived from (empty) evidence."""
    return ClosureRecord.of(derive_closure(Evidence())).model_dump(mode="json")


class Hooks:
    def __init__(self, fail: bool = False) -> None:
        self.unsettled: set[str] = set()
        self.resettled: set[str] = set()
        self.fail = fail
        self.settled: list[str] = []

    def settle_subject(self, subject: str, closure: ClosureRecord, *, checks: bool = False) -> None:
        assert checks  # a later pass completes the check runs too
        self.settled.append(subject)
        (self.unsettled if self.fail else self.resettled).add(subject)


def closure_record(subject: str, data: dict[str, object]) -> Record:
    return Record(kind="closure", key=subject, updated_at=NOW, writer="t", data=data)


def test_a_failed_settle_is_kept_then_written_by_a_later_pass() -> None:
    state = ServeState()
    valid = closure_data()
    state.put(closure_record("issue:1", valid))
    failing = Hooks(fail=True)
    failing.unsettled.add("issue:1")
    assert unsettled.keep(state, failing, NOW, "t") == {"issue:1"}
    assert state.get("meta", "unsettled:issue:1") is not None
    # The pass that failed it does not retry at once; a later one does, and the record goes.
    later = Hooks()
    unsettled.resettle(state, later, NOW, "t", skip={"issue:1"})
    assert later.settled == []
    unsettled.resettle(state, later, NOW, "t")
    assert later.settled == ["issue:1"]
    assert state.get("meta", "unsettled:issue:1") is None


def test_a_retry_that_fails_again_keeps_the_record() -> None:
    state = ServeState()
    valid = closure_data()
    state.put(closure_record("pull_request:2", valid))
    state.put(Record(kind="meta", key="unsettled:pull_request:2", updated_at=NOW, writer="t"))
    hooks = Hooks(fail=True)
    unsettled.resettle(state, hooks, NOW, "t")
    assert hooks.settled == ["pull_request:2"]
    assert state.get("meta", "unsettled:pull_request:2") is not None


def test_hostile_restored_records_settle_nothing_and_are_dropped() -> None:
    state = ServeState()
    valid = closure_data()
    state.put(closure_record("issue:3", {"outcome": "nonsense"}))
    state.put(closure_record("repository:x", valid))
    for subject in ("issue:3", "repository:x", "issue:../../etc", "issue:4"):
        state.put(Record(kind="meta", key=f"unsettled:{subject}", updated_at=NOW, writer="t"))
    hooks = Hooks()
    unsettled.resettle(state, hooks, NOW, "t")
    assert hooks.settled == []
    assert [r.key for r in state.live("meta")] == []
