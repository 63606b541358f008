"""One pass: an event in, a `PassReport` out. The controller's loop, read top to bottom here.

`run_pass(envelope, loaded, parts)` observes, decides, guards, acts, records and feeds back
(RFC-0004 section 7): journal the event; drop it if its dedupe key was seen (a pass that raised
leaves its key unseen); keep it if paused; otherwise decide (the injected decider), guard
(`guarding.py`), follow a stop or restart (`stops.py`), journal the decision, perform each intent
(`attempts.py`), and settle the closure of every subject the pass touched (`settlement.py`). A
timer tick re-checks waits instead (`ticks.py`). `resume` decides the kept events, one pass each
(Holon's own only when it says what the state holds); `recovery.recover` reconciles what a
previous process left inflight. Nothing here does I/O but through the injected parts.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pydantic import ValidationError

from holon.controller.attempts import perform
from holon.controller.decide import Decision, PolicyDecider, target_of
from holon.controller.follow_ups import QUEUED, settled_as_claimed
from holon.controller.guarding import judge
from holon.controller.guardrails import foreign_problem
from holon.controller.held import continue_held, held_records, hold
from holon.controller.journals import decision_entry, journal_decision, journal_event
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import Pass, PassReport
from holon.controller.pause import (
    KEPT,
    expired,
    is_paused,
    keep,
    kept_events,
    pause_record,
    read_kept,
)
from holon.controller.pricing import spend_of
from holon.controller.reactivation import admit
from holon.controller.remembering import remember_answer, remember_decision
from holon.controller.settlement import settle_closures
from holon.controller.spend_guard import wait_for_operator
from holon.controller.spending import day_of, day_spend, record_spend
from holon.controller.stops import follow_commands
from holon.controller.ticks import recheck
from holon.controller.view import ControllerView
from holon.errors import InvalidInput
from holon.gateway.continuation import DISPATCH_TYPE, asks_to_continue
from holon.gateway.envelope import EventEnvelope, is_internal
from holon.spend import Spend
from holon.state.model import Record


def run_pass(env: EventEnvelope, loaded: LoadedState, parts: Parts) -> PassReport:
    """Handle one event against the loaded state; the report says what it did and how the
    subjects it touched now close."""
    p = Pass(parts, loaded, "event", env.id)
    journal_event(parts.journals, env, parts.clock())
    state = loaded.state
    # Holon's own event leaves the queue as it is taken, with its dedupe key (follow_ups.py).
    p.delete("meta", f"{QUEUED}{env.id}")
    if state.get("dedupe", env.dedupe_key) is not None:
        journal_decision(p, env, "duplicate", f"{env.dedupe_key} was already processed")
        return p.report()
    # No payload: the journal has the event; the state only has to remember the key.
    p.put("dedupe", env.dedupe_key, "seen", {})
    p.put("meta", "last_event", "live", {"id": env.id, "type": env.type, "at": env.at.isoformat()})
    if is_paused(state):
        keep(p, env)
        return p.report()
    try:
        decide_and_act(p, env)
    except BaseException:
        # A pass that failed did not handle its event: a redelivery is decided, not dropped as
        # a duplicate. What it did record (an inflight run) the guardrails and recovery see.
        p.delete("dedupe", env.dedupe_key)
        raise
    return p.report()


def decide_and_act(p: Pass, env: EventEnvelope, suffix: str = "") -> None:
    foreign = foreign_problem(env, p.parts.repo)
    if foreign is not None:
        # Not even decided: a decider's facts would be read in a repository Holon does not serve.
        journal_decision(p, env, "refused", foreign, suffix=suffix)
        return
    if not admit(p, env, suffix):
        return  # a re-activation that is not the next expected one: journaled, not decided
    subject = target_of(env).subject()
    if is_continuation(env) and held_records(p, subject):
        # The re-activation of held work continues that work; nothing is decided anew.
        settle_closures(p, continue_held(p, env, subject, suffix) or [subject])
        return
    # A person's reply to the subject's open question is remembered before deciding on it.
    remember_answer(p, env, subject)
    decider = p.parts.decider
    if type(decider) is PolicyDecider:
        decision = decider.decide_viewing(env, partial(_view, p, subject))
    else:
        decision = decider.decide(env, _view(p, subject))
    if decision.special == "recheck":
        recheck(p, env, decision)
        # A tick also continues held work (a lost re-activation must not strand it).
        settle_closures(p, continue_held(p, env, None, suffix))
        return
    verdict = judge(p, env, decision)
    # The decision's own spend (a model decider's), priced, counted for the day and the subject.
    usage = _priced(p, decision)
    if usage is not None:
        decision = replace(decision, usage=usage)  # journaled priced
    record_spend(p, f"dec:{env.id}{suffix}", usage)
    subjects = [subject, *(proposal.target.subject() for proposal in decision.proposals)]
    remember_decision(p, subjects, usage)
    follow_commands(p, env, decision, verdict)
    # After the commands: a `/holon solve` lifts the last wait on the budget, not this one.
    waiting = wait_for_operator(p, verdict.spent)
    performed = verdict.performed
    journal_decision(
        p,
        env,
        "decided",
        decision.rationale,
        decision,
        performed,
        verdict.refused,
        verdict.rejected,
        suffix,
    )
    hold(p, env, verdict.held, suffix)
    for intent in performed:
        perform(p, intent, env)
    # The event's subject, and those its intents act on (a failed check's fix acts on its PR).
    acted = [*performed, *verdict.held]
    settle_closures(p, [subject, *(i.target.subject() for i in acted), *waiting])


def is_continuation(env: EventEnvelope) -> bool:
    """A re-activation (admitted by `admit` before this is asked)."""
    return env.type == DISPATCH_TYPE and asks_to_continue(env.payload)


def resume(loaded: LoadedState, parts: Parts, by: str) -> list[PassReport]:
    """Unpause and decide the kept events in the order they were kept, one pass each."""
    state = loaded.state
    state.put(pause_record(paused=False, by=by, reason="", at=parts.clock(), writer=parts.writer))
    return [_resume_one(loaded, parts, record) for record in kept_events(state)]


def _resume_one(loaded: LoadedState, parts: Parts, record: Record) -> PassReport:
    event_id = record.key.removeprefix(KEPT)
    p = Pass(parts, loaded, "resumed", event_id)
    p.delete("meta", record.key)
    try:
        env = read_kept(record, parts.mention)
    except (InvalidInput, ValidationError) as exc:
        # Never decided on what the stored record claims: refused, and the journal says why.
        _refuse_kept(p, record, str(exc))
        return p.report()
    if is_internal(env) and not settled_as_claimed(p.state, env, target_of(env).subject()):
        # Restored state never authorizes: Holon's own event must say what the state holds.
        _refuse_kept(p, record, "the run it reports did not settle as it says")
        return p.report()
    if expired(record, parts.clock(), parts.policy):
        reason = "kept while paused longer than the policy allows"
        journal_decision(p, env, "expired", reason, suffix=":resumed")
        return p.report()
    decide_and_act(p, env, suffix=":resumed")
    return p.report()


def _refuse_kept(p: Pass, record: Record, why: str) -> None:
    event_id = record.key.removeprefix(KEPT)
    p.journal(
        decision_entry(
            entry_id=f"dec:{event_id}:resumed",
            event_id=event_id,
            type_=str(record.data.get("type") or "unknown"),
            subject="unknown",
            at=p.parts.clock(),
            outcome="refused",
            rationale=f"kept event not decided: {why}",
        )
    )


def _view(p: Pass, subject: str) -> ControllerView:
    paused = is_paused(p.state)
    settings = p.parts.policy.settings
    if settings.budgets.day_tokens is None and settings.budgets.day_cost_usd is None:
        return ControllerView(paused=paused, subject=p.ledger.view(subject))
    day = day_of(p.parts.clock())
    spent = day_spend(p.state, day)
    return ControllerView(paused, p.ledger.view(subject), day=day, day_spend=spent)


def _priced(p: Pass, decision: Decision) -> Spend | None:
    """A model decision's usage at the policy's prices (the decider counts tokens only)."""
    usage = decision.usage
    if usage is None:
        return None
    prices = p.parts.policy.settings.prices
    return spend_of(usage.input_tokens, usage.output_tokens, decision.model, prices)


__all__ = ["decide_and_act", "resume", "run_pass"]
