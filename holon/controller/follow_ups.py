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

It is durable: the pass that settles the run also queues its event in the state (a `meta`
record `follow-up:<event id>`), so the checkpoint that saves the settlement saves the event to
handle too, and the pass that handles the event removes it (`handled`). A serve killed between
the two finds it queued on the next start (`recovery.py`) and handles it then, once: its dedupe
key makes a second handling a duplicate. The queued record names only the run's intent and
repository; the event is made again from the run's settled intent record (`settled_event`), so a
planted record cannot make a run the state does not hold settled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from holon.gateway.envelope import Actor, EventEnvelope, Scope, Subject, envelope_id
from holon.state.model import Record, ServeState, rank_of

RUN_SETTLED = "holon.run.settled"
QUEUED = "follow-up:"


def settled_run(
    intent_id: str,
    repo: str | None,
    data: dict[str, Any],
    at: datetime,
) -> EventEnvelope:
    """The `holon.run.settled` event of a settled run_skill intent, from what its record keeps
    (`data`: subject, skill, head sha, actor, attempts and the result's summary)."""
    result: dict[str, Any] = data["result"]
    attempt = int(data["attempts"])
    key = f"holon:run.settled:{intent_id}:{attempt}"
    kind, _, ident = str(data["subject"]).partition(":")
    actor = data.get("actor")
    head_sha = data.get("head_sha")
    return EventEnvelope(
        id=envelope_id(key),
        source="holon",
        type=RUN_SETTLED,
        via="internal",
        scope=Scope(repo=repo),
        at=at,
        subject=Subject(kind=kind, id=ident, head_sha=head_sha),
        dedupe_key=key,
        actor=Actor.model_validate(actor) if isinstance(actor, dict) else None,
        payload={
            "intent": intent_id,
            "attempt": attempt,
            "skill": data.get("skill"),
            "status": result.get("status"),
            "dry_run": bool(result.get("dry_run", False)),
            "run_id": result.get("run_id"),
            "run_output_path": result.get("run_output_path"),
            "run_status": result.get("run_status"),
            "run_outcome": result.get("run_outcome"),
            "head_sha": head_sha,
            "actor": actor.get("login") if isinstance(actor, dict) else None,
            # What asked for the run, frozen at intake: its publishing checks it first.
            "trigger": data.get("trigger"),
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
        and record.data.get("trigger") == payload.get("trigger")
    )


def queue_record(env: EventEnvelope, intent_id: str) -> tuple[str, dict[str, Any]]:
    """The key and data of the `meta` record that keeps `env` until a pass handles it."""
    return f"{QUEUED}{env.id}", {"intent": intent_id, "repo": env.scope.repo}


def queued(state: ServeState) -> list[Record]:
    """Settled runs' events not handled yet, oldest first."""
    return [r for r in state.live("meta") if r.key.startswith(QUEUED)]


def settled_event(state: ServeState, record: Record) -> EventEnvelope | None:
    """The event a queued record stands for, made again from the run's settled intent record;
    None when the state holds no such run, settled and reported under that event."""
    intent_id, repo = record.data.get("intent"), record.data.get("repo")
    if not isinstance(intent_id, str) or not (repo is None or isinstance(repo, str)):
        return None
    run = state.get("intent", intent_id)
    if run is None or run.data.get("type") != "run_skill" or rank_of(run.status) < 2:
        return None
    result = run.data.get("result")
    if not isinstance(result, dict) or result.get("run_id") is None:
        return None
    try:
        env = settled_run(intent_id, repo, run.data, run.updated_at)
    except (KeyError, TypeError, ValueError, ValidationError):
        return None  # a record this build cannot read settles nothing
    return env if record.key == f"{QUEUED}{env.id}" else None


__all__ = [
    "QUEUED",
    "RUN_SETTLED",
    "queue_record",
    "queued",
    "settled_as_claimed",
    "settled_event",
    "settled_run",
]
