"""Intents found inflight at start: left by a process that stopped mid-effect, or planted in a
state restored from elsewhere. Either way the record is no authority to act.

Each is settled from the actions journal when an attempt there succeeded (nothing is performed
again). Anything that would perform an effect is first re-checked: the event that decided it must
be in the events journal, its envelope is derived again from its payload (`gateway.restored`),
and the intent passes the guardrails again against today's facts and policy, as if decided now
(the intent itself left out of the ledger, so it is not its own duplicate or cooldown). A refused
intent is settled `refused` with the reason journaled, never performed; an intent that passes is
finished (a skill run's output read back if it completed) or performed if it never started.

Settled runs' `holon.run.settled` events that a previous process queued and never handled
(`follow_ups.py`) are handed back as this pass's follow-ups, to be handled first.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from holon.controller.attempts import attempt
from holon.controller.follow_ups import (
    QUEUED,
    RUN_SETTLED,
    queued,
    settled_as_claimed,
    settled_event,
)
from holon.controller.guarding import is_refusal_comment
from holon.controller.guardrails import authority_problem, guard
from holon.controller.journals import decision_entry
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import Pass, PassReport, intent_of
from holon.controller.remembering import remember_ended
from holon.controller.settlement import settle_closures
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope, is_internal
from holon.gateway.restored import rederive
from holon.intent import ActionIntent
from holon.state.journal import Journal
from holon.state.model import Record


def recover(loaded: LoadedState, parts: Parts) -> PassReport:
    """Reconcile intents left inflight: settle, finish, perform or refuse each; and hand back
    the settled runs' events a previous process queued and did not handle."""
    p = Pass(parts, loaded, "recovery", None)
    take_queued(p)
    inflight = loaded.ledger.inflight()
    if not inflight:
        return p.report()
    events = deciding_events(parts.journals.events, {r.data.get("event_id") for r in inflight})
    subjects: list[str] = []
    for record in inflight:
        data = dict(record.data)
        intent, problem = recheck(p, record, events)
        if intent is not None and problem is None:
            attempt(p, intent, data)
        else:
            refuse(p, record, intent, problem or ("unreadable", "unreadable"))
        subjects.append(str(data.get("subject")))
    settle_closures(p, subjects)
    return p.report()


def take_queued(p: Pass) -> None:
    """Settled runs' events left queued (serve stopped after the settlement was saved, before
    the event was handled) become this pass's follow-ups; one the state does not back is
    dropped, and the journal says why."""
    for record in queued(p.state):
        env = settled_event(p.state, record)
        if env is not None:
            p.follow_ups.append(env)
            continue
        p.delete("meta", record.key)
        event_id = record.key.removeprefix(QUEUED)
        p.journal(
            decision_entry(
                entry_id=f"dec:{event_id}:queued",
                event_id=event_id,
                type_=RUN_SETTLED,
                subject="unknown",
                at=p.parts.clock(),
                outcome="refused",
                rationale="queued settled-run event not handled: the state holds no run "
                "settled as it reports",
            )
        )


def deciding_events(journal: Journal, wanted: Iterable[object]) -> dict[str, EventEnvelope]:
    """The journaled envelopes of the events in `wanted` (the latest line of each)."""
    ids = {w for w in wanted if isinstance(w, str)}
    found: dict[str, EventEnvelope] = {}
    for entry in journal.read():
        if entry.get("id") in ids and isinstance(entry.get("envelope"), dict):
            try:
                found[entry["id"]] = EventEnvelope.model_validate(entry["envelope"])
            except ValidationError:
                continue  # an unreadable line proves nothing: the event is then not on record
    return found


def recheck(
    p: Pass, record: Record, events: dict[str, EventEnvelope]
) -> tuple[ActionIntent | None, tuple[str, str] | None]:
    """The recorded intent, and why it may not be performed now (guard, reason) or None."""
    try:
        intent = ActionIntent.model_validate(record.data.get("intent"))
    except ValidationError:
        return None, ("unreadable", "the inflight record holds no readable intent")
    if intent.id != record.key:
        return intent, ("unreadable", "the inflight record's intent is another intent")
    done = p.loaded.executed.get(intent.id)
    spent = done is not None and done.attempt >= p.parts.policy.settings.max_attempts
    if done is not None and (done.status == "succeeded" or spent):
        return intent, None  # settled from the journal: nothing is performed
    env = events.get(intent.event_id)
    if env is None:
        return intent, ("provenance", "the event that decided it is not in the events journal")
    try:
        env = rederive(env, mention=p.parts.mention)
    except InvalidInput as exc:
        return intent, ("provenance", str(exc))
    if is_internal(env) and not settled_as_claimed(p.state, env, intent.target.subject()):
        return intent, ("provenance", "the run its event reports did not settle as it says")
    parts = p.parts
    problem = authority_problem(env, parts.facts, parts.policy)
    if is_refusal_comment(intent, parts.policy):
        problem = None  # it answers an actor who lacks authority: that is why it exists
    _, refused = guard(
        [intent],
        env,
        ledger=p.ledger.without(intent.id),
        facts=parts.facts,
        policy=parts.policy,
        now=parts.clock(),
        budget_left=parts.policy.settings.budget,
        authority=problem,
    )
    return intent, ((refused[0].guard, refused[0].reason) if refused else None)


def refuse(p: Pass, record: Record, intent: ActionIntent | None, why: tuple[str, str]) -> None:
    guard_name, reason = why
    data = {k: v for k, v in record.data.items() if k != "intent"}
    error = {"error": f"refused: {reason}"}
    settled = p.put("intent", record.key, "refused", {**data, "result": error})
    remember_ended(p, settled, "refused")
    p.run_ended(intent_of(record))
    type_ = intent.type if intent is not None else str(data.get("type"))
    p.journal(
        decision_entry(
            entry_id=f"dec:recovery:{record.key}",
            event_id=str(data.get("event_id")),
            type_="recovery",
            subject=str(data.get("subject")),
            at=p.parts.clock(),
            outcome="refused",
            rationale=f"inflight {type_} found at start, re-checked before being performed",
            refused=[{"id": record.key, "type": type_, "guard": guard_name, "reason": reason}],
        )
    )


__all__ = ["deciding_events", "recheck", "recover", "refuse", "take_queued"]
