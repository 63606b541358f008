"""Performing an intent: recorded inflight first, attempted until it succeeds or the policy's
attempts are spent, each attempt journaled, then settled in the state.

The inflight record comes before the effect and the settlement after its journal line, so a
crash between the two is reconciled on the next start (`recovery.py`) instead of being lost or
repeated: an attempt already in the actions journal is taken from it, never performed again.
A settled skill run that ran becomes a follow-up event (`follow_ups.py`), queued in the state
with its settlement.

A handler may hand its attempt on instead (`Deferred`: fan-out's decide job bundles the run for
a container job). The intent then stays inflight, with the attempt it was handed on as, and the
decisions journal says so; nothing is settled. Whoever later finds it inflight (the serve's
recovery, in fan-out's settle job) collects exactly that attempt: another would need another
run job, which only a later decide can make.
"""

from __future__ import annotations

from typing import Any

from holon.controller import frozen
from holon.controller.effect_waits import follow_effect_wait
from holon.controller.follow_ups import queue_record, settled_run
from holon.controller.journals import decision_entry
from holon.controller.pass_report import Pass
from holon.controller.remembering import remember_result
from holon.controller.spending import record_spend
from holon.executor.deferral import Deferred
from holon.executor.result import ActionResult
from holon.gateway.continuation import continues
from holon.gateway.envelope import EventEnvelope
from holon.gateway.trigger import snapshot_from, snapshot_of_envelope
from holon.intent import ActionIntent

# What a settled intent keeps of its result: what views and closure evidence read. The full
# intent and result are in the journals, and the state must stay small.
KEPT_RESULT = {
    "status",
    "dry_run",
    "output",
    "run_id",
    "run_status",
    "run_outcome",
    "question",
    "error",
    "run_output_path",
}


def perform(p: Pass, intent: ActionIntent, env: EventEnvelope) -> None:
    data = intent_data(intent, env, p.parts.mention)
    if data["trigger"] is None and isinstance(data["continues"], str) and env.via != "internal":
        # A re-activation continues its unit's work: that work's trigger still stands for it.
        data["trigger"] = unit_trigger(p, data["subject"])
    start(p, intent, data)


def unit_trigger(p: Pass, subject: str) -> dict[str, Any] | None:
    """The trigger of the subject's latest work that has one (what a continuation continues)."""
    return p.ledger.latest_trigger(subject)


def intent_data(
    intent: ActionIntent, env: EventEnvelope, mention: str | None = "holon"
) -> dict[str, Any]:
    """What the state records of `intent`, decided from `env` (also for an intent held back
    by the per-pass limit, so it is performed later as if now: held.py)."""
    resumed = continues(env.type, env.payload)
    return {
        "intent": intent.model_dump(mode="json"),
        "type": intent.type,
        "subject": intent.target.subject(),
        "skill": intent.args.get("skill"),
        "head_sha": intent.args.get("head_sha"),
        # A run Holon's own event decided (publishing a settled run) continues the work that
        # run was admitted for: not a new automatic run (cooldown), not a new unit of work.
        # A re-activation continues its unit's work the same way (gateway/continuation.py).
        "automatic": env.command is None and env.via != "internal" and resumed is None,
        "continues": env.payload.get("intent") if env.via == "internal" else resumed,
        # Who asked, for what follows from this intent (the settled run's event).
        "actor": env.actor.model_dump(mode="json") if env.actor is not None else None,
        # Which event decided it, and when: what the subject's current unit of work is
        # measured from (ledger.current_unit).
        "event_id": intent.event_id,
        "decided_at": intent.created_at.isoformat(),
        # The text that asked for this work, frozen at intake: every write of the work first
        # checks it is still on GitHub unedited (frozen.py); Holon's own event (a run settled)
        # carries its run's.
        "trigger": trigger_data(env, mention),
        "attempts": 0,
        "result": None,
    }


def trigger_data(env: EventEnvelope, mention: str | None) -> dict[str, Any] | None:
    """The trigger snapshot of work decided from `env`, as the state records it."""
    if env.via == "internal":
        found = snapshot_from(env.payload.get("trigger"))
    else:
        found = snapshot_of_envelope(env, mention)
    return found.model_dump(mode="json") if found is not None else None


def start(p: Pass, intent: ActionIntent, data: dict[str, Any]) -> None:
    """Record `intent` inflight, then attempt it."""
    if (intent.type == "run_skill" and not data["continues"]) or intent.type == "merge":
        # New work starts a new unit: a wait only new work ends (a spent re-activation budget,
        # actions/reactivate.py) no longer holds the subject.
        for wait in p.ledger.wait_records(intent.target.subject()):
            if wait.data.get("until_command"):
                p.delete("wait", wait.key)
    record = p.put("intent", intent.id, "inflight", data)
    p.ledger.track_intent(record)
    if intent.type == "run_skill" and not p.parts.idempotent_runs:
        p.parts.checkpoint()  # the inflight record must be durable before the effect starts
    attempt(p, intent, data)


def attempt(p: Pass, intent: ActionIntent, data: dict[str, Any]) -> None:
    """Attempt `intent` until it succeeds or the policy's attempts are spent; an attempt
    already journaled is taken from the journal instead of being performed again."""
    parts, executed = p.parts, p.loaded.executed
    result = executed.get(intent.id)
    first = 1 if result is None else result.attempt + 1
    last = parts.policy.settings.max_attempts
    if result is not None:
        # Journaled by a process that stopped before it saved the state: what the attempt
        # spent is recorded as that process would have, on the attempt's day (once per
        # attempt, so never twice).
        record_spend(p, result.id, result.usage, at=result.at)
    handed = deferred_attempt(data, last)
    if handed is not None:
        # The attempt a run job performed is collected once; journaled already, it is settled.
        last = handed
        first = handed if result is None or result.attempt < handed else handed + 1
    if result is None or result.status == "failed":
        for number in range(first, last + 1):
            checked = frozen.check(p, intent, data, number)
            if isinstance(checked, str):
                frozen.refuse(p, intent, data, checked)  # edited or deleted: nothing written
                return
            try:
                result = checked or parts.executor.execute(intent, number)
            except Deferred as signal:
                defer(p, intent, data, number, signal)
                return
            parts.crashpoint("after_effect_before_journal")
            parts.journals.actions.append(result.model_dump(mode="json"))
            executed[intent.id] = result
            p.results.append(result)
            record_spend(p, result.id, result.usage)  # the day's spend (spending.py)
            parts.crashpoint("after_journal_before_state")
            if result.status == "succeeded":
                break
    assert result is not None
    settle(p, intent, data, result)


def deferred_attempt(data: dict[str, Any], most: int) -> int | None:
    """The attempt the intent was handed on as, when its record says one this policy allows;
    a restored record's word only narrows what is attempted, so a bad one is ignored."""
    deferred = data.get("deferred")
    number = deferred.get("attempt") if isinstance(deferred, dict) else None
    if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= most:
        return number
    return None


def defer(
    p: Pass, intent: ActionIntent, data: dict[str, Any], number: int, signal: Deferred
) -> None:
    """Leave `intent` inflight, handed on as attempt `number` (`signal.run`), and say so."""
    at = p.parts.clock()
    if not (signal.keep and deferred_attempt(data, number) == number):
        data["deferred"] = {
            "attempt": number,
            "run": signal.run,
            "at": at.isoformat(),
            "by": signal.by,
        }
    record = p.put("intent", intent.id, "inflight", data)
    p.ledger.track_intent(record)
    p.deferred.append(intent)
    p.journal(
        decision_entry(
            entry_id=f"dec:{intent.id}:deferred:{number}",
            event_id=intent.event_id,
            type_=intent.type,
            subject=intent.target.subject(),
            at=at,
            outcome="deferred",
            rationale=signal.why,
            accepted=[intent],
        )
    )


def settle(p: Pass, intent: ActionIntent, data: dict[str, Any], result: ActionResult) -> None:
    kept = {k: v for k, v in data.items() if k != "intent"}
    summary = result.model_dump(mode="json", include=KEPT_RESULT, exclude_defaults=True)
    data = {**kept, "attempts": result.attempt, "result": summary}
    record = p.put("intent", intent.id, result.status, data)
    remember_result(p, data, result)
    p.intents.append(intent)
    p.run_ended(intent)
    if intent.type == "run_skill" and result.run_id is not None:
        # A run that ran (not a dry run, not one refused before it started) is an event,
        # queued in the state with the settlement so a checkpoint never saves one without
        # the other.
        env = settled_run(intent.id, intent.target.repo, data, record.updated_at)
        p.follow_ups.append(env)
        key, queued = queue_record(env, intent.id)
        p.put("meta", key, "pending", queued)
    if intent.type == "wait" and result.status == "succeeded":
        wait = p.put("wait", intent.id, "live", {**dict(intent.args), "subject": data["subject"]})
        p.ledger.track_wait(wait)
    follow_effect_wait(p, intent, data["subject"], result)


__all__ = [
    "KEPT_RESULT",
    "attempt",
    "defer",
    "deferred_attempt",
    "intent_data",
    "perform",
    "settle",
    "start",
]
