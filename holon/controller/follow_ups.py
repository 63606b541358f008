"""Holon's own events, made inside a pass and handled by the loop right after it.

A settled `run_skill` intent becomes `holon.run.settled` (source `holon`, via `internal`): the
decider sees what a run produced the way it sees any event, so publishing it is a rule of the
policy (`holon.run.settled`, outcome success -> `github-publish`), not code in the controller.
It is journaled and deduplicated like any event; its key is the intent id and attempt, so a
replay or a recovery that settles the same attempt again makes the same event, seen once.
Read back from the state (kept while paused, or deciding an intent found inflight), it decides
only when it says what the state holds of that run (`settled_as_claimed`).

It carries the deciding event's actor (for the co-author trailer), never a command: the run it
reports was admitted already, so it asks nothing of the actor's authority. It cannot be forged
from outside: the gateway refuses `holon.*` types in replay files and the inbox
(`envelope.from_outside`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from holon.executor.result import ActionResult
from holon.gateway.envelope import Actor, EventEnvelope, Scope, Subject, envelope_id
from holon.intent import ActionIntent
from holon.state.model import ServeState

RUN_SETTLED = "holon.run.settled"


def settled_run(
    intent: ActionIntent, data: dict[str, Any], result: ActionResult, at: datetime
) -> EventEnvelope:
    """The `holon.run.settled` event of `intent`'s last attempt (`result`)."""
    key = f"holon:run.settled:{intent.id}:{result.attempt}"
    target = intent.target
    actor = data.get("actor")
    return EventEnvelope(
        id=envelope_id(key),
        source="holon",
        type=RUN_SETTLED,
        via="internal",
        scope=Scope(repo=target.repo),
        at=at,
        subject=Subject(kind=target.kind, id=target.id, head_sha=intent.args.get("head_sha")),
        dedupe_key=key,
        actor=Actor.model_validate(actor) if isinstance(actor, dict) else None,
        payload={
            "intent": intent.id,
            "attempt": result.attempt,
            "skill": intent.args.get("skill"),
            "status": result.status,
            "dry_run": result.dry_run,
            "run_id": result.run_id,
            "run_output_path": result.run_output_path,
            "run_status": result.run_status,
            "run_outcome": result.run_outcome,
            "head_sha": intent.args.get("head_sha"),
            "actor": actor.get("login") if isinstance(actor, dict) else None,
        },
    )


def settled_as_claimed(state: ServeState, env: EventEnvelope, subject: str) -> bool:
    """Whether Holon's own event `env`, read back from a state that may have been restored
    from elsewhere, reports what the state holds: the intent it names settled on `subject` with
    that run, attempt, skill, outcome, output and actor. Only then may it decide anything."""
    payload = env.payload
    record = state.get("intent", str(payload.get("intent")))
    if record is None or record.data.get("subject") != subject:
        return False
    result = record.data.get("result")
    actor = record.data.get("actor")
    login = actor.get("login") if isinstance(actor, dict) else None
    return (
        isinstance(result, dict)
        and result.get("run_id") is not None
        and result.get("run_id") == payload.get("run_id")
        and result.get("run_outcome") == payload.get("run_outcome")
        and result.get("run_output_path") == payload.get("run_output_path")
        and record.data.get("attempts") == payload.get("attempt")
        and record.data.get("skill") == payload.get("skill")
        and login == payload.get("actor")
    )


__all__ = ["RUN_SETTLED", "settled_as_claimed", "settled_run"]
