"""Property checks of a subject's current unit of work (docs/closure.md): over any history of
runs and side effects, earlier units never count and failures within the current one always do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.controller.ledger import StateLedger
from holon.state.model import Record, ServeState

BASE = datetime(2026, 11, 21, tzinfo=UTC)
SUBJECT = "issue:1"

run_event = st.fixed_dictionaries(
    {"kind": st.just("run"), "outcome": st.sampled_from(["success", "failure", "question"])}
)
effect_event = st.fixed_dictionaries(
    {"kind": st.just("effect"), "ok": st.booleans(), "type": st.sampled_from(["label", "comment"])}
)
histories = st.lists(st.one_of(run_event, effect_event), min_size=1, max_size=12)


def _state(history: list[dict[str, Any]]) -> ServeState:
    state = ServeState()
    for n, event in enumerate(history):
        decided = BASE + timedelta(minutes=n)
        data: dict[str, Any] = {
            "subject": SUBJECT,
            "event_id": f"ev{n}",
            "decided_at": decided.isoformat(),
            "type": "run_skill" if event["kind"] == "run" else event["type"],
        }
        if event["kind"] == "run":
            outcome = event["outcome"]
            status = "failed" if outcome == "failure" else "succeeded"
            result: dict[str, Any] = {"status": status}
            if outcome == "question":
                result |= {"run_outcome": "needs_human", "question": {"id": f"q{n}", "text": "?"}}
            else:
                result["run_outcome"] = outcome
        else:
            status = "succeeded" if event["ok"] else "failed"
            result = {"status": status}
        # Settled a little after it was decided, and never in decision order across events.
        settled = decided + timedelta(seconds=30 + (n * 7919) % 50)
        record = Record(
            kind="intent",
            key=f"act{n}",
            status=status,
            updated_at=settled,
            writer="t",
            data={**data, "result": result},
        )
        state.put(record)
    return state


def _current(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    runs = [n for n, e in enumerate(history) if e["kind"] == "run"]
    start = runs[-1] if runs else len(history) - 1
    return history[start:]


@settings(max_examples=300)
@given(histories)
def test_only_the_current_unit_decides(history: list[dict[str, Any]]) -> None:
    evidence = StateLedger(_state(history)).evidence(SUBJECT)
    unit = _current(history)
    failed_effect = any(e["kind"] == "effect" and not e["ok"] for e in unit)
    run = unit[0] if unit[0]["kind"] == "run" else None
    if evidence is None:
        # Nothing in the unit is evidence: no run and no failure.
        assert run is None
        assert not failed_effect
        return
    closure = ClosureRecord.of(derive_closure(evidence))
    if failed_effect or (run is not None and run["outcome"] == "failure"):
        assert closure.lifecycle_outcome == "failed"
    elif run is not None and run["outcome"] == "question":
        assert closure.lifecycle_outcome == "askuserQuestion"
        assert closure.question is not None
        assert closure.question.id == f"q{history.index(run, len(history) - len(unit))}"
    else:
        assert run is not None
        # Whatever failed before this unit started does not count.
        assert closure.lifecycle_outcome == "finished"
