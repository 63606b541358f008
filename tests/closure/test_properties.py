"""Property-based checks of the Result Closure invariants over generated evidence."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from holon.closure.derive import derive_closure
from holon.closure.evidence import Evidence

BASE = datetime(2026, 11, 21, tzinfo=UTC)
TASK_IDS = ["t0", "t1", "t2"]
STATES = ["running", "completed", "failed", "timed_out", "cancelled", "interrupted"]
OUTCOMES = [None, "success", "failure", "needs_human"]

times = st.integers(min_value=0, max_value=10_000).map(lambda s: BASE + timedelta(seconds=s))


def _run() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "kind": st.just("run"),
            "state": st.sampled_from(STATES),
            "outcome": st.sampled_from(OUTCOMES),
        }
    )


def _task() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "kind": st.just("task"),
            "task_id": st.sampled_from(TASK_IDS),
            "state": st.sampled_from(STATES),
            "outcome": st.sampled_from(OUTCOMES),
            "blocking": st.booleans(),
        }
    )


def _wait() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.fixed_dictionaries(
            {
                "kind": st.just("wait"),
                "on": st.just("timer"),
                "until": times,
                "resolved": st.booleans(),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("wait"),
                "on": st.just("external"),
                "condition": st.sampled_from(["ci", "review"]),
                "resolved": st.booleans(),
            }
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("wait"),
                "on": st.just("operator"),
                "question": st.just({"id": "q", "text": "Which?"}),
                "resolved": st.booleans(),
            }
        ),
        st.fixed_dictionaries(
            {"kind": st.just("wait"), "on": st.just("operator"), "reason": st.just("budget spent")}
        ),
        st.fixed_dictionaries(
            {"kind": st.just("wait"), "on": st.just("task"), "task_id": st.sampled_from(TASK_IDS)}
        ),
    )


def _other() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.fixed_dictionaries(
            {
                "kind": st.just("interruption"),
                "by": st.sampled_from(["pause", "stop_command", "cancelled_workflow"]),
            }
        ),
        st.fixed_dictionaries(
            {"kind": st.just("work_item"), "state": st.sampled_from(["runnable", "done"])}
        ),
        st.fixed_dictionaries(
            {"kind": st.just("claim"), "text": st.just("Done! Everything works.")}
        ),
        st.fixed_dictionaries({"kind": st.just("text"), "text": st.just("I am waiting for CI.")}),
    )


@st.composite
def evidence_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    raw = draw(st.lists(st.one_of(_task(), _wait(), _other()), max_size=12))
    if draw(st.booleans()):
        raw.append(draw(_run()))
    created = {item["task_id"] for item in raw if item["kind"] == "task"}
    items = []
    for i, item in enumerate(raw):
        if item["kind"] == "wait" and item.get("on") == "task" and item["task_id"] not in created:
            continue  # a wait on a task nobody created is invalid input, tested elsewhere
        # One task may appear several times (created, then finished): repeated ids are kept.
        items.append({**item, "id": f"i{i}", "source": "test", "at": draw(times)})
    return items


def _evidence(items: list[dict[str, Any]]) -> Evidence:
    return Evidence.model_validate({"items": items})


def _core(items: list[dict[str, Any]]) -> tuple[Any, ...]:
    c = derive_closure(_evidence(items))
    return (c.closure_outcome, c.waiting_reason, c.rule, c.operator_wait, c.runtime_posture)


@settings(max_examples=300)
@given(evidence_items())
def test_rfc_invariants(items: list[dict[str, Any]]) -> None:
    closure = derive_closure(_evidence(items))
    assert closure.closure_outcome in ("completed", "continuable", "failed", "waiting")
    assert (closure.waiting_reason is not None) == (closure.closure_outcome == "waiting")
    if closure.closure_outcome == "continuable":
        assert closure.waiting_reason is None
    assert closure.runtime_posture in ("active", "idle", "sleeping")
    if closure.closure_outcome == "completed":
        assert closure.rejected_claims == []


@settings(max_examples=300)
@given(evidence_items(), st.randoms(use_true_random=False))
def test_order_of_items_does_not_matter(items: list[dict[str, Any]], rnd: random.Random) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert derive_closure(_evidence(shuffled)) == derive_closure(_evidence(items))


@settings(max_examples=300)
@given(evidence_items())
def test_prose_never_decides(items: list[dict[str, Any]]) -> None:
    prose = [i for i in items if i["kind"] in ("claim", "text")]
    without = [i for i in items if i["kind"] not in ("claim", "text")]
    assert _core(items) == _core(without)
    assert derive_closure(_evidence(prose)).closure_outcome != "completed"


LOWER: dict[str, list[dict[str, Any]]] = {
    # Evidence that only a later rule reads, per deciding rule.
    "terminal_failure": [
        {"kind": "wait", "on": "operator", "question": {"id": "q9", "text": "?"}},
        {"kind": "interruption", "by": "pause"},
        {"kind": "wait", "on": "timer", "until": BASE},
        {"kind": "wait", "on": "external", "condition": "ci"},
        {"kind": "work_item", "state": "runnable"},
    ],
    "blocking_wait": [
        {"kind": "wait", "on": "timer", "until": BASE},
        {"kind": "wait", "on": "external", "condition": "ci"},
        {"kind": "work_item", "state": "runnable"},
    ],
    # Rule 3 holds only while no local progress remains, so runnable work is not "lower" for it.
    "blocking_task": [
        {"kind": "wait", "on": "timer", "until": BASE},
        {"kind": "wait", "on": "external", "condition": "ci"},
    ],
    "timer_wait": [
        {"kind": "wait", "on": "external", "condition": "ci"},
        {"kind": "work_item", "state": "runnable"},
    ],
    "external_wait": [{"kind": "work_item", "state": "runnable"}],
    "runnable_work": [],
    "completion": [],
    "no_closure_evidence": [],
}


@settings(max_examples=300)
@given(evidence_items(), st.data())
def test_lower_rule_evidence_never_changes_a_decision(
    items: list[dict[str, Any]], data: st.DataObject
) -> None:
    before = derive_closure(_evidence(items))
    candidates = LOWER[before.rule]
    if not candidates:
        return
    extra = data.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=3))
    added = [
        {**item, "id": f"extra{i}", "source": "test", "at": BASE} for i, item in enumerate(extra)
    ]
    after = derive_closure(_evidence(items + added))
    assert (after.closure_outcome, after.waiting_reason, after.rule) == (
        before.closure_outcome,
        before.waiting_reason,
        before.rule,
    )


def _latest_per_task(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items with each task reduced to its latest entry (by time, then id), blocking when
    any of its entries blocks: what docs/closure.md says a repeated task means."""
    tasks = [i for i in items if i["kind"] == "task"]
    kept = []
    for item in items:
        if item["kind"] != "task":
            kept.append(item)
            continue
        same = [t for t in tasks if t["task_id"] == item["task_id"]]
        if item is max(same, key=lambda t: (t["at"], t["id"])):
            kept.append({**item, "blocking": any(t["blocking"] for t in same)})
    return kept


@settings(max_examples=300)
@given(evidence_items())
def test_repeated_task_is_its_latest_item(items: list[dict[str, Any]]) -> None:
    reduced = _latest_per_task(items)
    assert _core(items) == _core(reduced)


def _failed(task: dict[str, Any]) -> bool:
    return task["state"] in ("failed", "timed_out") or task["outcome"] == "failure"


@settings(max_examples=300)
@given(evidence_items())
def test_failure_of_an_awaited_task_fails_the_parent(items: list[dict[str, Any]]) -> None:
    latest = {t["task_id"]: t for t in _latest_per_task(items) if t["kind"] == "task"}
    awaited = {
        i["task_id"] for i in items if i["kind"] == "wait" and i.get("on") == "task"
    }  # task waits are never generated resolved
    closure = derive_closure(_evidence(items))
    if any(_failed(latest[t]) for t in awaited):
        assert closure.closure_outcome == "failed"
        assert closure.rule == "terminal_failure"


@settings(max_examples=200)
@given(evidence_items(), st.sampled_from(TASK_IDS), st.booleans())
def test_a_failed_task_the_parent_waits_on_always_fails_it(
    items: list[dict[str, Any]], task_id: str, blocking: bool
) -> None:
    # The same task, finished in failure after everything else, whichever way it was created.
    late = BASE + timedelta(days=1)
    extra = [
        {"kind": "task", "task_id": task_id, "state": "failed", "outcome": "failure"},
        {"kind": "wait", "on": "task", "task_id": task_id},
    ]
    added = [
        {**item, "id": f"late{i}", "source": "test", "at": late, "blocking": blocking}
        if item["kind"] == "task"
        else {**item, "id": f"late{i}", "source": "test", "at": late}
        for i, item in enumerate(extra)
    ]
    closure = derive_closure(_evidence(items + added))
    assert (closure.closure_outcome, closure.rule) == ("failed", "terminal_failure")
    assert "late0" in closure.deciding_items


@settings(max_examples=200)
@given(evidence_items(), st.sampled_from(["completed", "needs_human"]))
def test_a_blocking_task_without_a_result_never_lets_the_parent_complete(
    items: list[dict[str, Any]], ending: str
) -> None:
    # Missing data is never success: a blocking task that ended with no outcome, or needing a
    # human, has given its parent no result.
    late = BASE + timedelta(days=1)
    task = {"kind": "task", "task_id": "tx", "state": "completed", "blocking": True}
    if ending == "needs_human":
        task["outcome"] = "needs_human"
    added = {**task, "id": "late-task", "source": "test", "at": late}
    # Even beside a run that completed successfully.
    run = {"kind": "run", "state": "completed", "outcome": "success"}
    others = [i for i in items if i["kind"] != "run"]
    success = {**run, "id": "the-run", "source": "test", "at": BASE}
    closure = derive_closure(_evidence([*others, success, added]))
    assert closure.closure_outcome != "completed"
