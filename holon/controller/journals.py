"""The controller's journals and the lines it writes to them.

Every event is journaled before anything is decided about it, every decision (duplicate, kept,
decided, expired, rechecked, refused on recovery) with why, and every attempt at an intent with
its result (`attempts.py`). Entries carry deterministic ids, so replaying an event or merging two
copies of a journal never duplicates a line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from holon import jsonio
from holon.controller.decide import Decision, target_of
from holon.controller.guardrails import Refusal
from holon.gateway.commands import Command
from holon.gateway.envelope import Actor, EventEnvelope, Scope, Subject
from holon.intent import ActionIntent
from holon.state.journal import Journal
from holon.state.journal import dumps as journal_json

if TYPE_CHECKING:
    from holon.controller.pass_report import Pass


@dataclass
class Journals:
    events: Journal
    decisions: Journal
    actions: Journal
    # One envelope's payload as the JSON text it was read from (serve's replay): journaled as
    # that text, not encoded again (the bulk of an event's line); only for that very envelope.
    payload_text: tuple[EventEnvelope, str] | None = field(default=None, kw_only=True)

    def close(self) -> None:
        for journal in (self.events, self.decisions, self.actions):
            journal.close()


def event_entry(env: EventEnvelope, at: datetime) -> dict[str, Any]:
    # The payload is JSON already (a delivery's, or one Holon built of JSON values): it goes
    # into the line as it is, not copied through the model first (the bulk of an event's line).
    envelope = env.model_dump(mode="json", exclude={"payload"})
    envelope["payload"] = env.payload
    return {
        "id": env.id,
        "at": at.isoformat(),
        "type": env.type,
        "dedupe_key": env.dedupe_key,
        "envelope": envelope,
    }


def journal_event(journals: Journals, env: EventEnvelope, at: datetime) -> None:
    """The event's line, before anything is decided about it."""
    known = journals.payload_text
    text = known[1] if known is not None and known[0] is env else None
    line = event_line(env, at, text)
    if line is not None:
        journals.events.append_line(line)
    elif text is not None:
        journals.events.append_verbatim(event_entry(env, at), ("envelope", "payload"), text)
    else:
        journals.events.append(event_entry(env, at))


def event_line(env: EventEnvelope, at: datetime, payload_text: str | None) -> bytes | None:
    """`event_entry`'s journal line (as `Journal.append` encodes it, or `append_verbatim` with
    the payload as `payload_text`), made from the envelope's validated values rather than a
    dump of the model and a sorted encoding of it: most of an event's cost in the journal.

    None where it cannot be made so (the models have fields this does not know, a value is not
    of its plain type): the caller then encodes `event_entry`."""
    if not _KNOWN_FIELDS or not env.id:
        return None
    if payload_text is not None and "\n" in payload_text:
        return None  # refused by append_verbatim, in its own words
    try:
        envelope = _envelope_text(env)
        scope_on = f',"scope":{_scope(env.scope)},{_tail(env)}'
        # Not JSON (a NaN, a set): refused by the journal's own encoding, in its own words.
        payload = payload_text if payload_text is not None else journal_json(env.payload)
    except (_NotPlain, ValueError, TypeError):
        return None
    head = jsonio.scrub(
        f'{{"at":{_str(at.isoformat())},"dedupe_key":{_str(env.dedupe_key)},"envelope":{envelope}'
    )
    tail = jsonio.scrub(scope_on)
    return f'{head},"payload":{payload}{tail}'.encode()


class _NotPlain(Exception):
    """A value the plain encoding below does not make as `json.dumps` would."""


def _str(value: str | None) -> str:
    if value is None:
        return "null"
    if type(value) is not str:
        raise _NotPlain
    return _encode_str(value)


def _int(value: int) -> str:
    if type(value) is not int:
        raise _NotPlain
    return int.__repr__(value)


def _envelope_text(env: EventEnvelope) -> str:
    # Keys sorted, as the journal's encoding sorts them; the payload and what follows it in
    # `_tail` (scope onwards) are joined by the caller.
    actor, command = env.actor, env.command
    return (
        f'{{"actor":{_actor(actor) if actor is not None else "null"},'
        f'"at":{_str(_json_time(env.at))},'
        f'"command":{_command(command) if command is not None else "null"},'
        f'"dedupe_key":{_str(env.dedupe_key)},"delivery":{_str(env.delivery)},'
        f'"id":{_str(env.id)}'
    )


def _tail(env: EventEnvelope) -> str:
    subject = env.subject
    return (
        f'"source":{_str(env.source)},'
        f'"subject":{_subject(subject) if subject is not None else "null"},'
        f'"type":{_str(env.type)},"via":{_str(env.via)}}},'
        f'"id":{_str(env.id)},"type":{_str(env.type)}}}\n'
    )


def _scope(scope: Scope) -> str:
    return (
        f'{{"repo":{_str(scope.repo)},"session":{_str(scope.session)},'
        f'"tenant":{_str(scope.tenant)}}}'
    )


def _subject(subject: Subject) -> str:
    numbers = ",".join(_int(n) for n in subject.pull_requests)
    return (
        f'{{"head_sha":{_str(subject.head_sha)},"id":{_str(subject.id)},'
        f'"kind":{_str(subject.kind)},"pull_requests":[{numbers}]}}'
    )


def _actor(actor: Actor) -> str:
    if type(actor.is_bot) is not bool:
        raise _NotPlain
    return (
        f'{{"association":{_str(actor.association)},"authority":{_str(actor.authority)},'
        f'"is_bot":{"true" if actor.is_bot else "false"},"login":{_str(actor.login)},'
        f'"type":{_str(actor.type)}}}'
    )


def _command(command: Command) -> str:
    ignored = ",".join(_str(line) for line in command.ignored)
    return (
        f'{{"args":{_str(command.args)},"ignored":[{ignored}],"line":{_int(command.line)},'
        f'"name":{_str(command.name)},"via":{_str(command.via)},"word":{_str(command.word)}}}'
    )


# The fields the plain encoding above writes, per model: if a model gains or loses one, the
# line is made by dumping the model instead (never a line missing a field).
_KNOWN_FIELDS = (
    EventEnvelope.model_fields.keys()
    == {
        "id",
        "source",
        "type",
        "via",
        "scope",
        "at",
        "subject",
        "dedupe_key",
        "delivery",
        "actor",
        "command",
        "payload",
    }
    and Scope.model_fields.keys() == {"tenant", "repo", "session"}
    and Subject.model_fields.keys() == {"kind", "id", "head_sha", "pull_requests"}
    and Actor.model_fields.keys() == {"login", "type", "association", "is_bot", "authority"}
    and Command.model_fields.keys() == {"name", "word", "args", "line", "via", "ignored"}
)
_encode_str = json.encoder.encode_basestring  # what json.dumps uses with ensure_ascii=False
_json_time = to_jsonable_python  # a datetime as the model's JSON dump writes it


def refusal_line(refusal: Refusal) -> dict[str, str]:
    intent = refusal.intent
    return {"id": intent.id, "type": intent.type, "guard": refusal.guard, "reason": refusal.reason}


def decision_entry(
    *,
    entry_id: str,
    event_id: str,
    type_: str,
    subject: str,
    at: datetime,
    outcome: str,
    rationale: str,
    decision: Decision | None = None,
    accepted: Sequence[ActionIntent] = (),
    refused: Sequence[dict[str, str]] = (),
    rejected: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    return {
        "id": entry_id,
        "event_id": event_id,
        "at": at.isoformat(),
        "type": type_,
        "subject": subject,
        "outcome": outcome,
        "decider": decision.decider if decision else "controller",
        "rule": decision.rule if decision else None,
        "rationale": rationale,
        # A model-driven decision's figures (None for the policy decider's own).
        "model": decision.model if decision else None,
        "usage": (decision.usage.model_dump(mode="json") if decision and decision.usage else None),
        "latency_ms": decision.latency_ms if decision else None,
        "fallback": decision.fallback if decision else None,
        "intents": [
            {"id": i.id, "type": i.type, "target": i.target.subject(), "args": i.args}
            for i in accepted
        ],
        "refused": list(refused),
        "rejected": list(rejected),
    }


def journal_decision(
    p: Pass,
    env: EventEnvelope,
    outcome: str,
    rationale: str,
    decision: Decision | None = None,
    accepted: Sequence[ActionIntent] = (),
    refused: Sequence[Refusal] = (),
    rejected: Sequence[dict[str, str]] = (),
    suffix: str = "",
) -> None:
    """What was decided about `env`, and why (`suffix` tells a resumed decision apart)."""
    p.journal(
        decision_entry(
            entry_id=f"dec:{env.id}{suffix}",
            event_id=env.id,
            type_=env.type,
            subject=target_of(env).subject(),
            at=p.parts.clock(),
            outcome=outcome,
            rationale=rationale,
            decision=decision,
            accepted=accepted,
            refused=[refusal_line(r) for r in refused],
            rejected=rejected,
        )
    )


__all__ = [
    "Journals",
    "decision_entry",
    "event_entry",
    "journal_decision",
    "journal_event",
    "refusal_line",
]
