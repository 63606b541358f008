"""A comment storm on one issue: each decision reads a bounded part of the subject's history
(counted work, not timed), and what the guardrails ask of the older history is still answered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.controller import ledger as ledger_module
from holon.controller.ledger import MAX_SETTLED_PER_SUBJECT, StateLedger
from holon.state.model import Record, ServeState
from tests.controller.conftest import Clock, comment_event, make_controller

SUBJECT = "Codertocat/Hello-World#issue:7"


def _reads_per_event(count: int, tmp_path: Path) -> list[int]:
    ctl = make_controller(tmp_path)
    clock = ctl.clock
    assert isinstance(clock, Clock)
    reads: list[int] = []
    for i in range(count):
        clock.now += timedelta(seconds=1)  # each comment decided a moment after the last
        before = ctl.ledger.reads
        ctl.handle(comment_event("/holon solve", number=7, comment_id=1000 + i))
        reads.append(ctl.ledger.reads - before)
    ctl.journals.close()
    return reads


def test_records_read_per_decision_stay_bounded_however_long_the_subject_history(
    tmp_path: Path,
) -> None:
    count = 3 * MAX_SETTLED_PER_SUBJECT
    reads = _reads_per_event(count, tmp_path)
    # Every event decided a run: the subject's history grew by one intent each time.
    late = reads[-MAX_SETTLED_PER_SUBJECT // 2 :]
    middle = reads[2 * MAX_SETTLED_PER_SUBJECT - len(late) : 2 * MAX_SETTLED_PER_SUBJECT]
    assert max(late) == max(middle)  # no growth from 2x to 3x the bound
    # Each decision reads the subject's index a few times, each at most the bound and its unit.
    assert max(reads) <= 8 * (MAX_SETTLED_PER_SUBJECT + 2)


def _intent(key: str, at: datetime, **data: Any) -> Record:
    status = data.pop("status", "succeeded")
    return Record(
        kind="intent",
        key=key,
        status=status,
        updated_at=at,
        writer="test",
        data={"subject": SUBJECT, "decided_at": at.isoformat(), "event_id": key, **data},
    )


def test_settled_intents_leaving_the_index_still_answer_the_guardrails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger_module, "MAX_SETTLED_PER_SUBJECT", 3)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    state = ServeState()
    trigger = {"kind": "comment", "id": 1}
    state.put(
        _intent(
            "review",
            start,
            type="run_skill",
            skill="github-review",
            head_sha="abc",
            automatic=True,
            trigger=trigger,
        )
    )
    for i in range(10):  # later comments: none starts a unit, the review's run stays its start
        state.put(_intent(f"c{i}", start + timedelta(minutes=1 + i), type="comment"))
    # A later run: the review is no longer in the current unit and may leave the index.
    later = start + timedelta(hours=1)
    state.put(_intent("solve", later, type="run_skill", skill="github-issue-solve"))
    ledger = StateLedger(state)
    kept = [r.key for r in ledger.intent_records(SUBJECT)]
    assert "review" not in kept
    assert "solve" in kept
    assert len(kept) <= 3 + 1
    assert ledger.ran_for_sha(SUBJECT, "github-review", "abc")
    assert not ledger.ran_for_sha(SUBJECT, "github-review", "def")
    assert ledger.last_automatic_run(SUBJECT) == start
    assert ledger.latest_trigger(SUBJECT) == trigger
