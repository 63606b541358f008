"""Evidence-driven closure derivation (Result Closure RFC, "Evidence-Driven Derivation").

The seven rules are tried in the RFC's order; the first that applies decides. A user interruption
is an explicit blocking wait (rule 2, awaiting_operator_input). When no rule applies, the closure
is `failed` with reason `no_closure_evidence`: stopping is never success. Assistant claims and
prose are never read to decide; claims are only reported back as rejected when blocking evidence
remained. Pure: no I/O, no clock; one pass over the items, then constant work per rule.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
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

# What a step cut short is said to be (`holon action`'s cleanup, fan-out's settle after a
# cancelled decide job: an interruption `cancelled_workflow`): no user stopped it.
CUT_SHORT = (
    "Holon's step was cut short before it finished (the workflow run was cancelled or timed "
    "out, or the step was killed)"
)

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


class Ids:
    """The ids of a group's items, handed back in the rules' order: by time, then id."""

    def __init__(self) -> None:
        self._keys: list[tuple[int, str]] = []

    def add(self, order: int, ident: str) -> None:
        self._keys.append((order, ident))

    def ordered(self) -> Iterator[tuple[int, str]]:
        return iter(sorted(self._keys))


IdsFactory = Callable[[], "Ids"]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def instant(at: datetime) -> int:
    """`at` as microseconds since the epoch: orders as the aware datetimes do."""
    return (at - _EPOCH) // _MICROSECOND


class _Group:
    """Items one rule looks at: how many, the first by (time, id), and every id in that order.
    Only the first item is held; the ids go to `ids` (a list here, a spool when streamed)."""

    __slots__ = ("count", "first", "ids")

    def __init__(self, ids: Ids) -> None:
        self.count = 0
        self.first: Any = None
        self.ids = ids

    def add(self, item: EvidenceItem) -> None:
        self.count += 1
        if self.first is None or _key(item) < _key(self.first):
            self.first = item
        self.ids.add(instant(item.at), item.id)

    def __bool__(self) -> bool:
        return self.count > 0


class _Facts:
    """The items sorted into what each rule looks at, in one pass (a fold: `add` each item,
    then `close`). Bounded apart from tasks and waits on tasks: each group keeps its first item
    and a count, its ids go to `ids`."""

    def __init__(self, ids: IdsFactory = Ids) -> None:
        self.run: RunItem | None = None
        self.failures = _Group(ids())
        self.questions = _Group(ids())
        self.operator_waits = _Group(ids())
        self.interruptions = _Group(ids())
        # The first interruption item: it says who stopped the work and how, where the runs
        # it cancelled (in `interruptions` too, often first) say only that they stopped.
        self.interruption: InterruptionItem | None = None
        self.needs_human = _Group(ids())
        self.active_blocking = _Group(ids())
        self.blocking_tasks: set[str] = set()
        self.timers = _Group(ids())
        self.first_timer: WaitItem | None = None
        self.externals = _Group(ids())
        self.conditions: set[str] = set()
        self.runnable = _Group(ids())
        self.success = _Group(ids())
        self.claims = ids()
        self._claims = 0
        self.posture: PostureItem | None = None
        self.tasks: dict[str, TaskItem] = {}
        self.task_waits: list[WaitItem] = []

    @property
    def claims_count(self) -> int:
        return self._claims

    def add_claim(self, ident: str) -> None:
        self.claims.add(0, ident)
        self._claims += 1

    def add(self, item: EvidenceItem) -> None:
        handler = _DISPATCH.get(type(item))
        if handler is not None:
            handler(item, self)

    def close(self) -> _Facts:
        tasks = self.tasks
        # A parent that waits on a task takes its result: the task's failure or stop is fed
        # back into the parent even when the task was not created as blocking (Result Closure,
        # "Task").
        waited = {wait.task_id for wait in self.task_waits}
        for task in tasks.values():
            _classify_task(task, self, waited=task.task_id in waited)
        for wait in self.task_waits:
            # Waiting on a task that is still open blocks like a blocking task; a closed one
            # is already decided by the task's own state.
            task = tasks[wait.task_id or ""]
            if _task_open(task):
                self.active_blocking.add(wait)
                self.blocking_tasks.add(wait.task_id or "")
        return self


def _key(item: EvidenceItem) -> tuple[datetime, str]:
    return (item.at, item.id)


def _on_run(item: RunItem, facts: _Facts) -> None:
    facts.run = item
    if item.state in _FAILED_STATES or (item.state == "completed" and item.outcome == "failure"):
        facts.failures.add(item)
    elif item.state in _STOPPED_STATES:
        facts.interruptions.add(item)
    elif item.state == "running":
        facts.runnable.add(item)
    elif item.outcome == "needs_human":
        facts.needs_human.add(item)
    elif item.outcome == "success":
        facts.success.add(item)


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
        (facts.questions if item.question is not None else facts.operator_waits).add(item)
    elif item.on == "timer":
        facts.timers.add(item)
        first = facts.first_timer
        if first is None or _timer_key(item) < _timer_key(first):
            facts.first_timer = item
    elif item.on == "external":
        facts.externals.add(item)
        facts.conditions.add(item.condition or "")
    else:
        facts.task_waits.append(item)


def _timer_key(wait: WaitItem) -> tuple[datetime, str]:
    return (wait.until or wait.at, wait.id)


def _on_interruption(item: InterruptionItem, facts: _Facts) -> None:
    facts.interruptions.add(item)
    if facts.interruption is None or _key(item) < _key(facts.interruption):
        facts.interruption = item


def _on_work(item: WorkItem, facts: _Facts) -> None:
    if item.state == "runnable":
        facts.runnable.add(item)


def _on_claim(item: ClaimItem, facts: _Facts) -> None:
    facts.add_claim(item.id)


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


def fold(items: Iterable[EvidenceItem], ids: IdsFactory = Ids) -> _Facts:
    """Every item folded in, in order: what the rules decide on."""
    facts = _Facts(ids)
    add = facts.add
    for item in items:
        add(item)
    return facts.close()


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
        facts.failures.add(task)
    elif task.state in _STOPPED_STATES:
        facts.interruptions.add(task)
    elif task.blocking and _task_open(task):
        # An open task that is only waited on blocks through the wait item (below).
        facts.active_blocking.add(task)
        facts.blocking_tasks.add(task.task_id)


@dataclass(frozen=True)
class _Decision:
    outcome: ClosureOutcome
    reason: WaitingReason | None
    groups: tuple[_Group, ...]
    detail: str
    operator_wait: OperatorWait | None = None
    question: Question | None = None

    def item_ids(self) -> Iterator[str]:
        """The deciding items' ids by (time, id), whatever groups they came from."""
        return (ident for _, ident in heapq.merge(*(g.ids.ordered() for g in self.groups)))


def _first(*groups: _Group) -> Any:
    return min((g.first for g in groups if g), key=_key)


def _terminal_failure(f: _Facts) -> _Decision | None:
    if not f.failures:
        return None
    first = f.failures.first
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
    return _Decision("failed", None, (f.failures,), detail)


def _blocking_wait(f: _Facts) -> _Decision | None:
    if f.interruptions:
        first = f.interruption or f.interruptions.first
        how = first.by if isinstance(first, InterruptionItem) else getattr(first, "state", "")
        actor = first.actor if isinstance(first, InterruptionItem) else None
        detail = f"stopped by {actor or 'the user'} ({how})"
        if how == "cancelled_workflow":
            detail = CUT_SHORT
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            (f.interruptions,),
            detail,
            operator_wait="interruption",
        )
    if f.questions:
        first_q: WaitItem = f.questions.first
        question = first_q.question
        assert question is not None
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            (f.questions,),
            f"asked the operator: {question.text}",
            operator_wait="question",
            question=question,
        )
    if f.operator_waits or f.needs_human:
        first_b = _first(f.operator_waits, f.needs_human)
        why = getattr(first_b, "reason", None) or "the agent needs human review"
        return _Decision(
            "waiting",
            "awaiting_operator_input",
            (f.operator_waits, f.needs_human),
            f"waiting on an operator decision: {why}",
            operator_wait="other",
        )
    return None


def _blocking_task(f: _Facts) -> _Decision | None:
    if not f.active_blocking or f.runnable:
        return None  # local progress remains: the task does not block yet
    return _Decision(
        "waiting",
        "awaiting_task_result",
        (f.active_blocking,),
        "waiting on task " + ", ".join(sorted(f.blocking_tasks)),
    )


def _timer_wait(f: _Facts) -> _Decision | None:
    first = f.first_timer
    if first is None:
        return None
    until = (first.until or first.at).isoformat()
    return _Decision("waiting", "awaiting_timer", (f.timers,), f"sleeping until {until}")


def _external_wait(f: _Facts) -> _Decision | None:
    if not f.externals:
        return None
    watched = "; ".join(sorted(f.conditions))
    return _Decision(
        "waiting", "awaiting_external_change", (f.externals,), f"waiting for {watched}"
    )


def _runnable_work(f: _Facts) -> _Decision | None:
    if not f.runnable:
        return None
    return _Decision(
        "continuable", None, (f.runnable,), f"{f.runnable.count} runnable item(s) remain"
    )


def _completion(f: _Facts) -> _Decision | None:
    if not f.success:
        return None
    return _Decision("completed", None, (f.success,), "the run completed successfully")


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


def _rejected(decision: _Decision, facts: _Facts) -> Iterator[str]:
    if decision.outcome == "completed":
        return iter(())
    return (ident for _, ident in facts.claims.ordered())


@dataclass(frozen=True)
class Derived:
    """A closure whose two lists may be long: `closure` holds them only when `whole`; otherwise
    they are empty there and `deciding_items()` / `rejected_claims()` stream them in order."""

    closure: Closure
    decision: _Decision
    facts: _Facts
    whole: bool

    def deciding_items(self) -> Iterator[str]:
        return self.decision.item_ids()

    def rejected_claims(self) -> Iterator[str]:
        return _rejected(self.decision, self.facts)


def decide(
    facts: _Facts, unit: str, rules: Sequence[Rule] = RULES, *, max_listed: int | None = None
) -> Derived:
    """The closure of a folded `facts`, decided by the first rule that applies. Its deciding
    items and rejected claims are listed in it unless they number over `max_listed`."""
    name: RuleName = "no_closure_evidence"
    decision = _Decision(
        "failed", None, (), "no runtime evidence of completion: stopping is not success"
    )
    for rule_name, rule in rules:
        decided = rule(facts)
        if decided is not None:
            name, decision = rule_name, decided
            break
    canonical = {rule_name: i for i, (rule_name, _) in enumerate(RULES, start=1)}
    listed = sum(g.count for g in decision.groups)
    listed += 0 if decision.outcome == "completed" else facts.claims_count
    whole = max_listed is None or listed <= max_listed
    closure = Closure(
        unit=unit,
        closure_outcome=decision.outcome,
        waiting_reason=decision.reason,
        runtime_posture=_posture(facts, decision.outcome),
        rule=name,
        rule_number=canonical.get(name),
        deciding_items=list(decision.item_ids()) if whole else [],
        operator_wait=decision.operator_wait,
        question=decision.question,
        detail=decision.detail,
        rejected_claims=list(_rejected(decision, facts)) if whole else [],
    )
    return Derived(closure, decision, facts, whole)


def new_facts(ids: IdsFactory = Ids) -> _Facts:
    """An empty fold: `add` each item in document order, then `close()` and `decide`."""
    return _Facts(ids)


def derive_closure(evidence: Evidence, rules: Sequence[Rule] = RULES) -> Closure:
    """The closure of `evidence.unit`, decided by the first rule that applies."""
    return decide(fold(evidence.items), evidence.unit.id, rules).closure
