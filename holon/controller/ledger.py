"""The controller's view of its own work: intents and waits per subject, from the serve state.

Keeps an index from subject to its intent and wait records so each event costs work proportional
to its subject, not to the whole history. Also builds a subject's closure evidence.

A subject's index is bounded too, so a long history on ONE subject (a comment storm on an issue)
does not make each of its decisions slower: it keeps every unsettled intent, every intent of the
current unit of work (`current_unit`), and the newest `MAX_SETTLED_PER_SUBJECT` other settled
ones. What the guardrails ask of older settled intents (did a skill run on a head, when did the
last automatic run end, what was the latest trigger) is folded into a small per-subject summary
as they leave the index (`_Past`), so the answers stay the same; the records themselves stay in
the state (pruned by `state.model.prune`) and their results in the journals.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from holon.closure.evidence import (
    Evidence,
    EvidenceItem,
    InterruptionItem,
    Question,
    RunItem,
    RunOutcome,
    TaskItem,
    Unit,
    WaitItem,
    WorkItem,
)
from holon.controller.memory_record import memory_of
from holon.controller.memory_update import failures
from holon.controller.view import IntentSummary, SubjectView, WaitSummary
from holon.gateway.continuation import REACTIVATION
from holon.state.model import Record, ServeState

SETTLED = ("succeeded", "failed", "refused", "expired", "cancelled")
# Settled intents outside the current unit a subject's index keeps, newest (see the docstring).
MAX_SETTLED_PER_SUBJECT = 64
# (skill, head) pairs of runs that left a subject's index remembered as having run (oldest go).
MAX_PAST_RUNS = 64


@dataclass
class _Past:
    """What a subject's settled intents that left its index still tell the guardrails."""

    ran: dict[tuple[str, str], None] = dataclasses.field(default_factory=dict)  # (skill, head sha)
    last_automatic: datetime | None = None
    # The latest (by `sort_key`) trigger among them: (its sort key, the trigger).
    trigger: tuple[tuple[datetime, str], dict[str, Any]] | None = None

    def fold(self, record: Record) -> None:
        data = record.data
        skill, sha = data.get("skill"), data.get("head_sha")
        if skill and sha and record.status == "succeeded" and not data.get("withheld"):
            pair = (str(skill), str(sha))
            self.ran.pop(pair, None)
            self.ran[pair] = None
            while len(self.ran) > MAX_PAST_RUNS:
                del self.ran[next(iter(self.ran))]
        if skill and data.get("automatic"):
            at = record.updated_at
            last = self.last_automatic
            self.last_automatic = at if last is None else max(last, at)
        trigger = data.get("trigger")
        if isinstance(trigger, dict):
            key = _decided(record)
            if self.trigger is None or key > self.trigger[0]:
                self.trigger = (key, trigger)


def is_held(record: Record) -> bool:
    """Whether the intent record is work held back by `settings.intents_per_pass`: decided,
    not yet performed, to be performed by a later pass that continues its subject (held.py)."""
    return record.status == "pending" and isinstance(record.data.get("held"), dict)


class StateLedger:
    """Implements guardrails.Ledger over a ServeState, with per-subject indexes."""

    def __init__(self, state: ServeState) -> None:
        self.state = state
        # Intents the guardrail questions do not see (`without`).
        self.hidden: frozenset[str] = frozenset()
        self.intents: dict[str, list[str]] = defaultdict(list)
        self.waits: dict[str, list[str]] = defaultdict(list)
        # Per subject, what its settled intents that left its index tell (see `_Past`).
        self.past: dict[str, _Past] = {}
        # How many records the index questions have read (a measure of work, for tests).
        self.reads = 0
        for record in state.live("intent"):
            self.track_intent(record)
        for record in state.live("wait"):
            self.track_wait(record)

    def track_intent(self, record: Record) -> None:
        _track(self.intents, record)

    def track_wait(self, record: Record) -> None:
        _track(self.waits, record)

    def intent_records(self, subject: str) -> list[Record]:
        keys = self.intents.get(subject)
        if not keys:
            return []
        found = [r for key in keys if (r := self.state.get("intent", key)) is not None]
        self.reads += len(keys)
        # Settled intents pruned from the state leave the index too, so it stays as bounded
        # as the state; beyond the subject's own bound they leave it as well (`_bounded`).
        if len(found) > MAX_SETTLED_PER_SUBJECT:
            found = self._bounded(subject, found)
        if len(found) != len(keys):
            if found:
                self.intents[subject] = [r.key for r in found]
            else:
                del self.intents[subject]
        return found

    def _bounded(self, subject: str, found: list[Record]) -> list[Record]:
        """`found` less its oldest settled intents outside the current unit beyond
        MAX_SETTLED_PER_SUBJECT, each folded into the subject's `_Past` as it leaves."""
        unit = {r.key for r in current_unit(found)}
        older = [r for r in found if r.rank >= 2 and r.key not in unit]
        excess = len(older) - MAX_SETTLED_PER_SUBJECT
        if excess <= 0:
            return found
        past = self.past.setdefault(subject, _Past())
        leaving = set()
        for record in older[:excess]:
            past.fold(record)
            leaving.add(record.key)
        return [r for r in found if r.key not in leaving]

    def wait_records(self, subject: str) -> list[Record]:
        keys = self.waits.get(subject)
        if not keys:
            return []
        live = [r for key in keys if (r := self.state.get("wait", key)) is not None]
        if live:
            self.waits[subject] = [r.key for r in live]
        else:
            del self.waits[subject]
        return live

    def inflight(self) -> list[Record]:
        return [
            r
            for keys in self.intents.values()
            for k in keys
            if (r := self.state.get("intent", k)) is not None and r.status == "inflight"
        ]

    def without(self, intent_id: str) -> StateLedger:
        """This ledger as the guardrails would see it had `intent_id` not been recorded: an
        intent re-checked on recovery is not its own duplicate, nor its own cooldown."""
        view = copy.copy(self)  # the same state and indexes
        view.hidden = self.hidden | {intent_id}
        return view

    # -- guardrails.Ledger
    def _guarded_records(self, subject: str) -> list[Record]:
        return [r for r in self.intent_records(subject) if r.key not in self.hidden]

    def active_skill(self, subject: str, skill: str) -> bool:
        return any(
            r.status in ("pending", "inflight") and r.data.get("skill") == skill
            for r in self._guarded_records(subject)
        )

    def ran_for_sha(self, subject: str, skill: str, sha: str) -> bool:
        past = self.past.get(subject)
        if past is not None and (skill, sha) in past.ran:
            return True
        return any(
            r.data.get("skill") == skill
            and r.data.get("head_sha") == sha
            and r.status in ("pending", "inflight", "succeeded")
            # A run whose output was withheld (its trigger changed) did not do the work.
            and not r.data.get("withheld")
            for r in self._guarded_records(subject)
        )

    def last_automatic_run(self, subject: str) -> datetime | None:
        times = [
            r.updated_at
            for r in self._guarded_records(subject)
            if r.data.get("skill") and r.data.get("automatic")
        ]
        past = self.past.get(subject)
        if past is not None and past.last_automatic is not None:
            times.append(past.last_automatic)
        return max(times, default=None)

    def latest_trigger(self, subject: str) -> dict[str, Any] | None:
        """The trigger of the subject's latest work that has one (by `sort_key`)."""
        found = [r for r in self.intent_records(subject) if isinstance(r.data.get("trigger"), dict)]
        latest = max(found, key=sort_key) if found else None
        past = self.past.get(subject)
        if (
            past is not None
            and past.trigger is not None
            and (latest is None or past.trigger[0] > sort_key(latest))
        ):
            return dict(past.trigger[1])
        return dict(latest.data["trigger"]) if latest is not None else None

    def failed_attempts(self, subject: str, skill: str, sha: str | None) -> int:
        # The memory outlives the settled intents the state prunes; an unreadable memory
        # record counts nothing (it holds nothing back, and authorizes nothing).
        return failures(memory_of(self.state, subject), skill, sha)

    # -- views and evidence
    def view(self, subject: str) -> SubjectView:
        records = self.intent_records(subject)
        summaries = [_summary(r) for r in records]
        closure = self.state.get("closure", subject)
        return SubjectView(
            last_skill=last_skill(records),
            subject=subject,
            inflight=[s for s in summaries if s.status in ("pending", "inflight")],
            recent=[s for s in summaries if s.status in SETTLED][-5:],
            waits=[_wait_summary(r) for r in self.wait_records(subject)],
            closure=closure.data if closure is not None else None,
            memory=memory_of(self.state, subject),
        )

    def evidence(self, subject: str) -> Evidence | None:
        """The closure evidence of the subject's current unit of work (docs/closure.md)."""
        if not self.intents.get(subject) and not self.waits.get(subject):
            return None  # no intent or wait indexed: nothing to read, no evidence (most events)
        items: list[EvidenceItem] = []
        unit = current_unit(self.intent_records(subject))
        held = [r for r in unit if is_held(r)]
        # A write refused for its changed trigger happened no more than held work; the
        # operator wait it left holds the unit (controller/frozen.py).
        unit = [r for r in unit if not is_held(r) and not _frozen(r)]
        runs = [r for r in unit if r.data.get("type") == "run_skill"]
        merges = [r for r in unit if r.data.get("type") == "merge"]
        if runs:
            latest = max(runs, key=_decided)
            items.extend(_guarded(_run_items, latest))
            # Further runs decided from the same event close as tasks of the unit; a dry run's
            # work that a later run of its skill did for real (a re-activation continuing the
            # unit) is done by that run, not left open beside it.
            for other in runs:
                if other is not latest and not _done_later(other, runs):
                    items.extend(_guarded(lambda r: [_task_of_run(r)], other))
        elif merges:
            # A unit that only merges closes on its merge (failures are added below).
            items.extend(_guarded(_merge_items, max(merges, key=_decided)))
        for record in unit:
            # A refused action (re-checked on recovery and not performed) did not happen either.
            if record.data.get("type") != "run_skill" and record.status in ("failed", "refused"):
                items.append(
                    TaskItem(
                        id=f"action:{record.key}",
                        source="executor",
                        at=record.updated_at,
                        task_id=record.key,
                        state="failed",
                        blocking=True,
                    )
                )
        for record in held:
            # Decided and held back by the per-pass limit: runnable work a later pass performs.
            items.append(
                WorkItem(
                    id=f"held:{record.key}",
                    source="controller",
                    at=record.updated_at,
                    summary=f"{record.data.get('type')} held for the next pass",
                )
            )
        for record in self.wait_records(subject):
            items.extend(_guarded(_wait_items, record))
        if not items:
            return None
        return Evidence(unit=Unit(kind="turn", id=subject), items=items)


def _frozen(record: Record) -> bool:
    return record.status == "refused" and isinstance(record.data.get("frozen"), str)


def timer_until(data: dict[str, Any]) -> datetime | None:
    """When a timer wait fires; None for another wait, or one whose time cannot be read (its
    closure then says the record is unreadable)."""
    raw = data.get("until")
    if data.get("on") != "timer" or not isinstance(raw, str):
        return None
    try:
        until = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return until if until.tzinfo is not None else None


def _track(index: dict[str, list[str]], record: Record) -> None:
    subject = record.data.get("subject")
    if not isinstance(subject, str):
        return  # a record of no subject (a damaged state) belongs to no subject's work
    keys = index[subject]
    if record.key not in keys:
        keys.append(record.key)


def _guarded(convert: Callable[[Record], list[EvidenceItem]], record: Record) -> list[EvidenceItem]:
    """A record's evidence; one the state holds in a shape this build cannot read (restored
    state is not trusted) is a failure of the unit, never success and never a crash."""
    try:
        return convert(record)
    except (ValidationError, KeyError, TypeError, ValueError, AttributeError):
        return [
            TaskItem(
                id=f"unreadable:{record.kind}:{record.key}",
                source="state",
                at=record.updated_at,
                task_id=f"unreadable {record.kind} record {record.key}",
                state="failed",
                blocking=True,
            )
        ]


def _decided(record: Record) -> tuple[datetime, str]:
    """When the intent was decided (its record's last update, for state written before the
    decision time was recorded), then its key: the order of the subject's work."""
    raw = record.data.get("decided_at")
    if isinstance(raw, str):
        try:
            at = datetime.fromisoformat(raw)
        except ValueError:
            at = None
        if at is not None and at.tzinfo is not None:
            return (at, record.key)
    return (record.updated_at, record.key)


def sort_key(record: Record) -> tuple[datetime, str]:
    """The order of a subject's work: when each intent was decided, then its key."""
    return _decided(record)


def current_unit(records: list[Record]) -> list[Record]:
    """The intents of a subject's current unit of work.

    It starts at the latest event that decided a run_skill or a merge for the subject (or, for
    a subject that never had either, the latest event that decided any intent for it) and holds
    every intent decided from that event or later. Earlier units' intents, a label that failed days
    ago among them, are not evidence about the current work.
    """
    start = unit_start(records)
    if start is None:
        return []
    since, event = _decided(start)[0], start.data.get("event_id")
    return [
        r
        for r in records
        if _decided(r)[0] >= since or (event is not None and r.data.get("event_id") == event)
    ]


def unit_start(records: list[Record]) -> Record | None:
    """The intent that started the subject's current unit of work (see `current_unit`)."""
    if not records:
        return None
    # A run that continues another's work (publishing it, or a re-activation of it) starts no
    # unit of its own; a merge, the work that ends a pull request, starts one like a run.
    runs = [r for r in records if _starts_unit(r)]
    return max(runs or records, key=_decided)


def last_skill(records: list[Record]) -> str | None:
    """The skill the subject's current unit of work runs: its latest run that is the work
    itself (not publishing it), which a re-activation continues."""
    runs = [
        r
        for r in current_unit(records)
        if r.data.get("type") == "run_skill"
        and isinstance(r.data.get("skill"), str)
        and (r.data.get("continues") is None or reactivated(r))
    ]
    return str(max(runs, key=_decided).data["skill"]) if runs else None


def reactivated(record: Record) -> bool:
    """Whether the intent was decided from a re-activation of its unit's work: such a run does
    not restart the unit, so the unit's re-activation budget holds across re-activations."""
    value = record.data.get("continues")
    return isinstance(value, str) and value.startswith(REACTIVATION)


def _starts_unit(record: Record) -> bool:
    kind = record.data.get("type")
    return (kind == "run_skill" and not record.data.get("continues")) or kind == "merge"


def _result(record: Record) -> dict[str, Any]:
    result = record.data.get("result")
    return result if isinstance(result, dict) else {}


def _done_later(record: Record, runs: list[Record]) -> bool:
    """Whether `record` was a dry run (nothing ran: work still to do) whose skill a later run
    of the unit ran for real: that run did the work."""
    skill = record.data.get("skill")
    if _result(record).get("dry_run") is not True or skill is None:
        return False
    return any(
        r.data.get("skill") == skill
        and _decided(r) > _decided(record)
        and _result(r).get("dry_run") is not True
        for r in runs
    )


def _summary(record: Record) -> IntentSummary:
    result = _result(record)
    return IntentSummary(
        id=record.key,
        type=str(record.data.get("type")),
        status=record.status,
        skill=record.data.get("skill"),
        head_sha=record.data.get("head_sha"),
        attempts=int(record.data.get("attempts", 0)),
        error=result.get("error"),
    )


def wait_detail(data: dict[str, Any]) -> str:
    """One line saying what a wait waits for (status output, views)."""
    for field in ("reason", "condition", "until", "task_id"):
        if data.get(field):
            return str(data[field])
    question = data.get("question") or {}
    return str(question.get("text", "")) or "an operator decision"


def _wait_summary(record: Record) -> WaitSummary:
    return WaitSummary(
        id=record.key, on=str(record.data.get("on")), detail=wait_detail(record.data)
    )


_OUTCOMES: tuple[RunOutcome, ...] = ("success", "failure", "needs_human")


def _run_items(record: Record) -> list[EvidenceItem]:
    at, status, ident = record.updated_at, record.status, f"run:{record.key}"
    result = _result(record)
    if result.get("dry_run"):
        # Nothing ran: the work is still to do, not done.
        return [WorkItem(id=ident, source="controller", at=at, summary="dry run")]
    if status in ("pending", "inflight") and isinstance(record.data.get("deferred"), dict):
        # Handed on to a run job (fan-out): the unit waits on that job's result, which the
        # settle job collects; it never re-runs by itself (not continuable work).
        task = record.key
        return [
            TaskItem(
                id=f"task:{record.key}",
                source="controller",
                at=at,
                task_id=task,
                state="running",
                blocking=True,
            ),
            WaitItem(
                id=f"deferred:{record.key}", source="controller", at=at, on="task", task_id=task
            ),
        ]
    if status in ("pending", "inflight"):
        return [RunItem(id=ident, source="controller", at=at, state="running")]
    if status == "cancelled":
        return [RunItem(id=ident, source="controller", at=at, state="cancelled")]
    if status != "succeeded":
        # failed, expired, or a status this build does not know: never success.
        reason = result.get("error") or status
        return [RunItem(id=ident, source="executor", at=at, state="failed", reason=str(reason))]
    raw = result.get("run_outcome")
    # A run with no recorded outcome (or one this build does not know) is no evidence of
    # completion: the derivation then closes it failed (no_closure_evidence), never success.
    outcome = next((o for o in _OUTCOMES if o == raw), None)
    items: list[EvidenceItem] = [
        RunItem(id=ident, source="runner", at=at, state="completed", outcome=outcome)
    ]
    question = _question(result.get("question")) if outcome == "needs_human" else None
    if question is not None:
        items.append(
            WaitItem(
                id=f"question:{record.key}",
                source="manifest",
                at=at,
                on="operator",
                question=question,
            )
        )
    return items


def _merge_items(record: Record) -> list[EvidenceItem]:
    """A merge as the unit's own work: merged (or merged already) completes it, a wait it left
    holds it (its wait record), failed and refused merges fail it (`evidence`)."""
    at, status, ident = record.updated_at, record.status, f"merge:{record.key}"
    if _result(record).get("dry_run"):
        return [WorkItem(id=ident, source="controller", at=at, summary="dry run")]
    if status in ("pending", "inflight"):
        return [RunItem(id=ident, source="controller", at=at, state="running")]
    if status == "succeeded":
        return [RunItem(id=ident, source="executor", at=at, state="completed", outcome="success")]
    if status in ("failed", "refused"):
        return []  # the unit's failed actions fail it
    return [RunItem(id=ident, source="controller", at=at, state="failed", reason=status)]


def _question(raw: Any) -> Question | None:
    try:
        return Question.model_validate(raw) if raw else None
    except ValidationError:
        return None  # unreadable: the run still needs a human, as an operator decision


def _task_of_run(record: Record) -> TaskItem:
    (first, *_) = _run_items(record)
    if isinstance(first, RunItem):
        return TaskItem(
            id=f"task:{record.key}",
            source=first.source,
            at=first.at,
            task_id=record.key,
            state=first.state,
            outcome=first.outcome,
            blocking=True,
        )
    # A dry run: nothing ran, so the task is still to do.
    return TaskItem(
        id=f"task:{record.key}",
        source="controller",
        at=record.updated_at,
        task_id=record.key,
        state="running",
        blocking=True,
    )


def _wait_items(record: Record) -> list[EvidenceItem]:
    data, at = record.data, record.updated_at
    ident = f"wait:{record.key}"
    if data.get("interruption"):
        return [
            InterruptionItem(
                id=ident,
                source="controller",
                at=at,
                by=data["interruption"],
                actor=data.get("actor"),
            )
        ]
    if data["on"] == "task":
        task = str(data.get("task_id") or record.key)
        return [
            TaskItem(
                id=f"task:{task}:{record.key}",
                source="controller",
                at=at,
                task_id=task,
                state="running",
                blocking=True,
            ),
            WaitItem(id=ident, source="controller", at=at, on="task", task_id=task),
        ]
    question = data.get("question")
    return [
        WaitItem(
            id=ident,
            source="controller",
            at=at,
            on=data["on"],
            until=data.get("until"),
            condition=data.get("condition"),
            question=Question.model_validate(question) if question else None,
            reason=data.get("reason")
            or ("an operator decision" if data["on"] == "operator" and not question else None),
        )
    ]
