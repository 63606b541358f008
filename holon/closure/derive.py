"""Evidence-driven closure derivation (Result Closure RFC, "Evidence-Driven Derivation").

The seven rules are tried in the RFC's order; the first that applies decides. A user interruption
is an explicit blocking wait (rule 2, awaiting_operator_input). When no rule applies, the closure
is `failed` with reason `no_closure_evidence`: stopping is never success. Assistant claims and
prose are never read to decide; claims are only reported back as rejected when blocking evidence
remained. Pure: no I/O, no clock; one pass over the items, then constant work per rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holon.closure.evidence import (
    ClaimItem,
    ClosureOutcome,
    Evidence,
    EvidenceItem,
    InterruptionItem,
    PostureItem,
    Question,
    RunItem,
    TaskItem,
    WaitingReason,
    WaitItem,
    WorkItem,
)

RuntimePosture = Literal["active", "idle", "sleeping"]
RuleName = Literal[
    "terminal_failure",
    "blocking_wait",
    "blocking_task",
    "timer_wait",
    "external_wait",
    "runnable_work",
    "completion",
    "no_closure_evidence",
]
OperatorWait = Literal["question", "interruption", "other"]

_FAILED_STATES = ("failed", "timed_out")
_STOPPED_STATES = ("cancelled", "interrupted")


class Closure(BaseModel):
    """The derived closure of one unit, with the evidence that decided it."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    unit: str
    closure_outcome: ClosureOutcome
    waiting_reason: WaitingReason | None = None
    runtime_posture: RuntimePosture
    rule: RuleName
    rule_number: int | None = Field(description="1-7 in the RFC's order; None for the default.")
    deciding_items: list[str]
    operator_wait: OperatorWait | None = Field(
        default=None, description="For awaiting_operator_input: what the operator is waited on for."
    )
    question: Question | None = None
    detail: str = Field(description="One line: why this closure.")
    rejected_claims: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _invariants(self) -> Closure:
        if (self.closure_outcome == "waiting") != (self.waiting_reason is not None):
            raise ValueError("waiting_reason is present exactly when the closure is waiting")
        if (self.waiting_reason == "awaiting_operator_input") != (self.operator_wait is not None):
            raise ValueError("operator_wait is present exactly for awaiting_operator_input")
        if (self.operator_wait == "question") != (self.question is not None):
            raise ValueError("question is present exactly when the operator is asked a question")
        return self


@dataclass
class _Facts:
    """The items sorted into what each rule looks at, in one pass."""

    run: RunItem | None = None
    failures: list[EvidenceItem] = field(default_factory=list)
    questions: list[WaitItem] = field(default_factory=list)
    operator_waits: list[WaitItem] = field(default_factory=list)
    interruptions: list[EvidenceItem] = field(default_factory=list)
    needs_human: list[EvidenceItem] = field(default_factory=list)
    active_blocking: list[EvidenceItem] = field(default_factory=list)
    timers: list[WaitItem] = field(default_factory=list)
    externals: list[WaitItem] = field(default_factory=list)
    runnable: list[EvidenceItem] = field(default_factory=list)
    success: list[EvidenceItem] = field(default_factory=list)
    claims: list[ClaimItem] = field(default_factory=list)
    posture: PostureItem | None = None
    tasks: dict[str, TaskItem] = field(default_factory=dict)
    task_waits: list[WaitItem] = field(default_factory=list)


def _key(item: EvidenceItem) -> tuple[datetime, str]:
    return (item.at, item.id)


def _first(items: Sequence[EvidenceItem]) -> EvidenceItem:
    return min(items, key=_key)


def _on_run(item: RunItem, facts: _Facts) -> None:
    facts.run = item
    if item.state in _FAILED_STATES or (item.state == "completed" and item.outcome == "failure"):
        facts.failures.append(item)
    elif item.state in _STOPPED_STATES:
        facts.interruptions.append(item)
    elif item.state == "running":
        facts.runnable.append(item)
    elif item.outcome == "needs_human":
        facts.needs_human.append(item)
    elif item.outcome == "success":
        facts.success.append(item)


def _on_task(item: TaskItem, facts: _Facts) -> None:
    # A task listed more than once: its latest item (by time, then id) is its state, whatever
    # the listing order; it blocks if any of its items says so.
    current = facts.tasks.get(item.task_id)
    if current is None:
        facts.tasks[item.task_id] = item
        return
    latest, other = (item, current) if _key(item) > _key(current) else (current, item)
    if other.blocking and not latest.blocking:
        latest = latest.model_copy(update={"blocking": True})
    facts.tasks[item.task_id] = latest


def _on_wait(item: WaitItem, facts: _Facts) -> None:
    if item.resolved:
        return
    if item.on == "operator":
        (facts.questions if item.question is not None else facts.operator_waits).append(item)
    elif item.on == "timer":
        facts.timers.append(item)
    elif item.on == "external":
        facts.externals.append(item)
    else:
        facts.task_waits.append(item)


def _on_interruption(item: InterruptionItem, facts: _Facts) -> None:
    facts.interruptions.append(item)


def _on_work(item: WorkItem, facts: _Facts) -> None:
    if item.state == "runnable":
        facts.runnable.append(item)


def _on_claim(item: ClaimItem, facts: _Facts) -> None:
    facts.claims.append(item)


def _on_posture(item: PostureItem, facts: _Facts) -> None:
    current = facts.posture
    if current is None or (item.at, item.id) > (current.at, current.id):
        facts.posture = item


# One dictionary lookup per item (free text has no entry): this loop is the whole cost of a
# derivation, so it stays linear and cheap.
_DISPATCH: dict[type, Callable[[Any, _Facts], None]] = {
    RunItem: _on_run,
    TaskItem: _on_task,
    WaitItem: _on_wait,
    InterruptionItem: _on_interruption,
    WorkItem: _on_work,
    ClaimItem: _on_claim,
    PostureItem: _on_posture,
}


def _collect(evidence: Evidence) -> _Facts:
    facts = _Facts()
    dispatch = _DISPATCH.get
    for item in evidence.items:
        handler = dispatch(type(item))
        if handler is not None:
            handler(item, facts)
    tasks = facts.tasks
    # A parent that waits on a task takes its result: the task's failure or stop is fed back
    # into the parent even when the task was not created as blocking (Result Closure, "Task").
    waited = {wait.task_id for wait in facts.task_waits}
    for task in tasks.values():
        _classify_task(task, facts, waited=task.task_id in waited)
    for wait in facts.task_waits:
        # Waiting on a task that is still open blocks like a blocking task; a closed one
        # is already decided by the task's own state.
        task = tasks[wait.task_id or ""]
        if _task_open(task):
            facts.active_blocking.append(wait)
    return facts


def _task_open(task: TaskItem) -> bool:
    if task.closure is not None:
        return task.closure.outcome in ("waiting", "continuable")
    # A task that ended needing a human has no result yet: it still holds its parent.
    return task.state == "running" or (task.state == "completed" and task.outcome == "needs_human")


def _task_failed(task: TaskItem) -> bool:
    if task.closure is not None:
        return task.closure.outcome == "failed"
    # Completed with no recorded outcome is no evidence of success: missing data never is.
    return (
        task.state in _FAILED_STATES
        or task.outcome == "failure"
        or (task.state == "completed" and task.outcome is None)
    )


def _classify_task(task: TaskItem, facts: _Facts, *, waited: bool) -> None:
    if not (task.blocking or waited):
        return  # a created task does not by itself block its parent
    if _task_failed(task):
        facts.failures.append(task)
    elif task.state in _STOPPED_STATES:
        facts.interruptions.append(task)
    elif task.blocking and _task_open(task):
        # An open task that is only waited on blocks through the wait item (below).
        facts.active_blocking.append(task)


@dataclass(frozen=True)
class _Decision:
    outcome: ClosureOutcome
    reason: WaitingReason | None
    items: list[EvidenceItem]
    detail: str
    operator_wait: OperatorWait | None = None
    question: Question | None = None


def _terminal_failure(f: _Facts) -> _Decision | None:
    if not f.failures:
        return None
    first = _first(f.failures)
    what = "the run"
    if isinstance(first, TaskItem):
        what = f"{'blocking' if first.blocking else 'awaited'} task {first.task_id}"
    state: str = first.state if isinstance(first, RunItem | TaskItem) else "failed"
    if isinstance(first, TaskItem) and first.closure is not None:
        state = "failed"  # its own closure says so
    elif isinstance(first, TaskItem) and state == "completed" and first.outcome is None:
        state = "completed without a recorded outcome"
    elif isinstance(first, RunItem | TaskItem) and state == "completed":
        state = "completed with outcome failure"
    reason = first.reason if isinstance(first, RunItem) else None
    detail = f"{what} ended {state}" + (f": {reason}" if reason else "")
    return _Decision("failed", None, sorted(f.failures, key=_key), detail)


def _blocking_wait(f: _Facts) -> _Decision | None:
    if f.interruptions:
        first = _first(f.interruptions)
        how = first.by if isinstance(first, InterruptionItem) else getattr(first, "state", "")
        actor = first.actor if isinstance(first, InterruptionItem) else None
        detail = f"stopped by {actor or 'the user'} ({how})"
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            sorted(f.interruptions, key=_key),
            detail,
            operator_wait="interruption",
        )
    if f.questions:
        first_q = min(f.questions, key=_key)
        question = first_q.question
        assert question is not None
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            sorted(f.questions, key=_key),
            f"asked the operator: {question.text}",
            operator_wait="question",
            question=question,
        )
    blockers: list[EvidenceItem] = [*f.operator_waits, *f.needs_human]
    if blockers:
        first_b = _first(blockers)
        why = getattr(first_b, "reason", None) or "the agent needs human review"
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            sorted(blockers, key=_key),
            f"waiting on an operator decision: {why}",
            operator_wait="other",
        )
    return None


def _blocking_task(f: _Facts) -> _Decision | None:
    if not f.active_blocking or f.runnable:
        return None  # local progress remains: the task does not block yet
    ids = sorted({getattr(i, "task_id", "") for i in f.active_blocking})
    return _Decision(
        "waiting",
        "awaiting_task_result",
        sorted(f.active_blocking, key=_key),
        "waiting on task " + ", ".join(ids),
    )


def _timer_wait(f: _Facts) -> _Decision | None:
    if not f.timers:
        return None
    first = min(f.timers, key=lambda w: (w.until or w.at, w.id))
    until = (first.until or first.at).isoformat()
    return _Decision(
        "waiting", "awaiting_timer", sorted(f.timers, key=_key), f"sleeping until {until}"
    )


def _external_wait(f: _Facts) -> _Decision | None:
    if not f.externals:
        return None
    watched = "; ".join(sorted({w.condition or "" for w in f.externals}))
    return _Decision(
        "waiting",
        "awaiting_external_change",
        sorted(f.externals, key=_key),
        f"waiting for {watched}",
    )


def _runnable_work(f: _Facts) -> _Decision | None:
    if not f.runnable:
        return None
    return _Decision(
        "continuable",
        None,
        sorted(f.runnable, key=_key),
        f"{len(f.runnable)} runnable item(s) remain",
    )


def _completion(f: _Facts) -> _Decision | None:
    if not f.success:
        return None
    return _Decision(
        "completed", None, sorted(f.success, key=_key), "the run completed successfully"
    )


Rule = tuple[RuleName, Callable[[_Facts], _Decision | None]]

# The RFC's order. Tests swap every adjacent pair and check the scenario table notices.
RULES: tuple[Rule, ...] = (
    ("terminal_failure", _terminal_failure),
    ("blocking_wait", _blocking_wait),
    ("blocking_task", _blocking_task),
    ("timer_wait", _timer_wait),
    ("external_wait", _external_wait),
    ("runnable_work", _runnable_work),
    ("completion", _completion),
)


def _posture(f: _Facts, outcome: ClosureOutcome) -> RuntimePosture:
    if f.posture is not None:
        return f.posture.posture
    if f.run is not None and f.run.state == "running":
        return "active"
    return "sleeping" if outcome == "waiting" else "idle"


def derive_closure(evidence: Evidence, rules: Sequence[Rule] = RULES) -> Closure:
    """The closure of `evidence.unit`, decided by the first rule that applies."""
    facts = _collect(evidence)
    name: RuleName = "no_closure_evidence"
    decision = _Decision(
        "failed", None, [], "no runtime evidence of completion: stopping is not success"
    )
    for rule_name, rule in rules:
        decided = rule(facts)
        if decided is not None:
            name, decision = rule_name, decided
            break
    rejected = [] if decision.outcome == "completed" else sorted(c.id for c in facts.claims)
    canonical = {rule_name: i for i, (rule_name, _) in enumerate(RULES, start=1)}
    return Closure(
        unit=evidence.unit.id,
        closure_outcome=decision.outcome,
        waiting_reason=decision.reason,
        runtime_posture=_posture(facts, decision.outcome),
        rule=name,
        rule_number=canonical.get(name),
        deciding_items=[item.id for item in decision.items],
        operator_wait=decision.operator_wait,
        question=decision.question,
        detail=decision.detail,
        rejected_claims=rejected,
    )
