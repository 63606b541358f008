"""The controller's journals and the lines it writes to them.

Every event is journaled before anything is decided about it, every decision (duplicate, kept,
decided, expired, rechecked, refused on recovery) with why, and every attempt at an intent with
its result (`attempts.py`). Entries carry deterministic ids, so replaying an event or merging two
copies of a journal never duplicates a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from holon.controller.decide import Decision, target_of
from holon.controller.guardrails import Refusal
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent
from holon.state.journal import Journal

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
    entry = event_entry(env, at)
    known = journals.payload_text
    if known is not None and known[0] is env:
        journals.events.append_verbatim(entry, ("envelope", "payload"), known[1])
    else:
        journals.events.append(entry)


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
