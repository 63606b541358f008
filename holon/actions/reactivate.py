"""Continuable work re-activates itself: a `workflow_dispatch` of Holon's own workflow with the
subject and a generation counter, within a budget per subject and unit of work (docs/reconcile.md).

`reactivations` is pure: from the closures a step settled and the state, which subjects to
re-dispatch and the records to put. Only `continuable` closures re-activate; waiting work never
does (it resumes on the event it waits for). Per subject, the `meta` record
`reactivation:<subject>` keeps the unit of work the budget counts for, how many re-activations
that unit has spent, the last generation sent and the last one received (the controller admits a
dispatch only as the next expected generation: `holon/controller/reactivation.py`). A subject
whose unit still has work in flight (a run under way, a deferred fan-out run) or whose last
dispatch has not come back yet is left alone: re-dispatching it would only duplicate. A spent
budget becomes an explicit operator wait (closure waiting / awaiting_operator_input, lifecycle
`blocked`), whose reason is the handoff's line: what is spent and which command continues; the
next command or the next unit of work on the subject lifts it.

`dispatch_reactivations` sends them, through the GitHub edge's dispatch effect, one line each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.controller.ledger import (
    StateLedger,
    current_unit,
    is_held,
    last_skill,
    unit_start,
)
from holon.controller.reactivation import reactivation_data, received, record_key, sent
from holon.gateway.continuation import NotAContinuation, inputs_for
from holon.github.effects import EffectRefused, Scope
from holon.github.errors import GitHubError
from holon.state.model import Record, ServeState
from holon.terminal import line

WRITER = "holon-action"
BUDGET_WAIT = "reactivation-budget:"
# A dispatch not back after this long is taken as lost (GitHub answered, no run came): the next
# step may send the next generation, which makes the lost one stale if it arrives after all.
PENDING_FOR = timedelta(hours=1)
# The command that asks for a skill's work again (holon/controller/stops.py RESTARTING).
_COMMAND = {"github-issue-solve": "solve", "github-pr-fix": "fix", "github-review": "review"}


@dataclass(frozen=True)
class Reactivation:
    subject: str  # issue:N | pull_request:N
    generation: int
    skill: str | None = None


def _time(value: Any) -> datetime | None:
    try:
        at = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
    return at if at is not None and at.tzinfo is not None else None


def _spent_line(subject: str, budget: int, skill: str | None, mention: str) -> str:
    word = _COMMAND.get(skill or "", "solve")
    return (
        f"the re-activation budget ({budget} per unit of work) is spent on {subject}: "
        f"comment `/{mention} {word}` to continue the work"
    )


def _closure_record(state: ServeState, extra: Record, subject: str, now: datetime) -> Record:
    """The subject's closure once `extra` is in the state (derived as settlement derives it)."""
    trial = ServeState(records=dict(state.records))
    trial.put(extra)
    evidence = StateLedger(trial).evidence(subject)
    assert evidence is not None  # the wait itself is evidence
    closure = ClosureRecord.of(derive_closure(evidence))
    return Record(
        kind="closure",
        key=subject,
        status="live",
        updated_at=now,
        writer=WRITER,
        data=closure.model_dump(mode="json"),
    )


def reactivations(
    closures: Mapping[str, ClosureRecord],
    state: ServeState,
    *,
    budget: int,
    now: datetime,
    writer: str = WRITER,
    mention: str = "holon",
) -> tuple[list[Reactivation], list[Record]]:
    """Which continuable subjects re-dispatch (subject, generation), and the records to put:
    each one's `meta` record, or for a spent budget its operator wait and new closure."""
    if budget < 0:
        raise ValueError("the re-activation budget must not be negative")
    ledger = StateLedger(state)
    found: list[Reactivation] = []
    records: list[Record] = []
    for subject, closure in closures.items():
        if closure.closure_outcome != "continuable":
            continue  # waiting work resumes on its event; done and failed work stays so
        try:
            inputs_for(subject, 1)
        except NotAContinuation:
            continue  # only issues and pull requests are dispatched for
        intents = ledger.intent_records(subject)
        start = unit_start(intents)
        busy = [r for r in current_unit(intents) if r.status in ("pending", "inflight")]
        # Held work (intents_per_pass) is not in flight: only a continuation performs it.
        if start is None or any(not is_held(r) for r in busy):
            continue  # no work of its own, or work in flight that will settle by itself
        data = reactivation_data(state, subject)
        unit = start.key
        spent = data.get("spent") if data.get("unit") == unit else 0
        spent = spent if isinstance(spent, int) and spent >= 0 else budget  # unreadable: spent
        pending_since = _time(data.get("sent_at"))
        if sent(data) > received(data) and (
            pending_since is None or now - pending_since < PENDING_FOR
        ):
            continue  # its dispatch is on its way
        skill = last_skill(intents)
        if spent >= budget:
            key = f"{BUDGET_WAIT}{subject}"
            if state.get("wait", key) is not None:
                continue
            wait = Record(
                kind="wait",
                key=key,
                status="live",
                updated_at=now,
                writer=writer,
                data={
                    "on": "operator",
                    "reason": _spent_line(subject, budget, skill, mention),
                    "subject": subject,
                    "until_command": True,
                    "unit": unit,
                },
            )
            records.extend([wait, _closure_record(state, wait, subject, now)])
            continue
        generation = sent(data) + 1
        records.append(
            Record(
                kind="meta",
                key=record_key(subject),
                status="live",
                updated_at=now,
                writer=writer,
                data={
                    "subject": subject,
                    "unit": unit,
                    "skill": skill,
                    "spent": spent + 1,
                    "generation": generation,
                    "received": received(data),
                    "sent_at": now.isoformat(),
                },
            )
        )
        found.append(Reactivation(subject, generation, skill))
    return found, records


def dispatch_reactivations(
    items: Iterable[Reactivation], scope: Scope, *, workflow_file: str, ref: str
) -> list[str]:
    """Dispatch `workflow_file` on `ref` once per item; one line each, for the summary. A
    dispatch is sent once: one that failed is not retried here (GitHub may have accepted it);
    the subject's record keeps it pending until `PENDING_FOR` has passed."""
    from holon.github.dispatch import WorkflowDispatch, dispatch  # only when work continues

    lines: list[str] = []
    for item in items:
        try:
            request = WorkflowDispatch(
                workflow_file, ref, inputs_for(item.subject, item.generation)
            )
            dispatch(scope, scope.event_repo, request)
        except (EffectRefused, NotAContinuation) as exc:
            lines.append(line(f"re-activation of {item.subject} refused: {exc}", limit=300))
            continue
        except GitHubError as exc:
            lines.append(line(f"re-activation of {item.subject} failed: {exc}", limit=300))
            continue
        lines.append(
            f"re-activated {item.subject} (generation {item.generation}) "
            f"through {workflow_file} on {ref}"
        )
    return lines


__all__ = ["BUDGET_WAIT", "PENDING_FOR", "Reactivation", "dispatch_reactivations", "reactivations"]
