"""Turn, task and agent layers: each closes on its own evidence; the agent summarizes them."""

from __future__ import annotations

from typing import Any

from holon.closure.agent import summarize_agent
from holon.closure.derive import Closure, derive_closure
from holon.closure.evidence import Evidence

T = "2026-11-21T10:00:00Z"


def _closure(unit: str, items: list[dict[str, Any]], kind: str = "turn") -> Closure:
    full = [{"source": "test", "at": T, **item} for item in items]
    return derive_closure(
        Evidence.model_validate({"unit": {"kind": kind, "id": unit}, "items": full})
    )


def test_task_closes_independently_and_feeds_back() -> None:
    # The child task's own evidence: it asked its operator a question.
    child = _closure(
        "task-t1",
        [
            {"id": "r", "kind": "run", "state": "completed", "outcome": "needs_human"},
            {"id": "q", "kind": "wait", "on": "operator", "question": {"id": "q1", "text": "?"}},
        ],
        kind="task",
    )
    assert (child.closure_outcome, child.waiting_reason) == ("waiting", "awaiting_operator_input")
    # The parent turn finished its own run; its closure reflects the child's only if blocking.
    parent_items = [{"id": "r", "kind": "run", "state": "completed", "outcome": "success"}]
    task = {
        "id": "t",
        "kind": "task",
        "task_id": "t1",
        "state": "completed",
        "closure": {"outcome": child.closure_outcome, "waiting_reason": child.waiting_reason},
    }
    blocking = _closure("turn-1", [*parent_items, {**task, "blocking": True}])
    assert (blocking.closure_outcome, blocking.waiting_reason) == (
        "waiting",
        "awaiting_task_result",
    )
    independent = _closure("turn-1", [*parent_items, {**task, "blocking": False}])
    assert independent.closure_outcome == "completed"
    # The child's closure did not change by being looked at from its parent.
    assert child.unit == "task-t1"


def test_created_task_alone_does_not_make_the_parent_wait() -> None:
    created = {"id": "t", "kind": "task", "task_id": "t1", "state": "running"}
    parent = _closure(
        "turn", [{"id": "r", "kind": "run", "state": "completed", "outcome": "success"}, created]
    )
    assert parent.closure_outcome == "completed"
    with_local_work = _closure(
        "turn", [{**created, "blocking": True}, {"id": "w", "kind": "work_item"}]
    )
    assert with_local_work.closure_outcome == "continuable"
    no_local_work = _closure("turn", [{**created, "blocking": True}])
    assert no_local_work.waiting_reason == "awaiting_task_result"


def test_agent_summary() -> None:
    done = _closure("a", [{"id": "r", "kind": "run", "state": "completed", "outcome": "success"}])
    waiting = _closure("b", [{"id": "w", "kind": "wait", "on": "timer", "until": T}])
    cont = _closure("c", [{"id": "w", "kind": "work_item"}])
    failed = _closure("d", [{"id": "r", "kind": "run", "state": "failed"}])
    running = _closure("e", [{"id": "r", "kind": "run", "state": "running"}])

    assert summarize_agent([done]).state == "idle"
    assert summarize_agent([done, cont]).state == "continuable"
    summary = summarize_agent([done, cont, waiting])
    assert (summary.state, summary.waiting_reasons, summary.waiting) == (
        "waiting",
        ["awaiting_timer"],
        ["b"],
    )
    assert summarize_agent([done, waiting, failed]).state == "failed"
    assert summarize_agent([done, waiting, failed]).failed == ["d"]
    assert summarize_agent([failed, running]).state == "active"
    # A later closure of the same unit replaces the earlier one: recovery clears the failure.
    recovered = _closure(
        "d", [{"id": "r", "kind": "run", "state": "completed", "outcome": "success"}]
    )
    assert summarize_agent([failed, recovered]).state == "idle"
