"""Admitting a re-activation: a `workflow_dispatch` that asks to continue a subject's work.

`holon/actions/reactivate.py` dispatches the workflow with inputs `subject` and `generation`
and records, in the subject's `meta` record `reactivation:<subject>`, the generation it sent.
The dispatch comes back as an event; before anything is decided on it, this gate admits it only
when it carries exactly the generation recorded as sent and not yet received, and records it as
received. So a dispatch whose generation is not the next expected one (an old one, a re-run of
the dispatched run, one nobody sent) is ignored, and inputs of any other shape are refused:
each with one journaled line, and nothing decided.
"""

from __future__ import annotations

from typing import Any

from holon.controller.journals import journal_decision
from holon.controller.pass_report import Pass
from holon.gateway.continuation import (
    DISPATCH_TYPE,
    NotAContinuation,
    asks_to_continue,
    continuation,
)
from holon.gateway.envelope import EventEnvelope
from holon.state.model import ServeState

RECORD = "reactivation:"


def record_key(subject: str) -> str:
    return f"{RECORD}{subject}"


def reactivation_data(state: ServeState, subject: str) -> dict[str, Any]:
    """What the state records of `subject`'s re-activations ({} when nothing)."""
    record = state.get("meta", record_key(subject))
    return dict(record.data) if record is not None else {}


def _count(data: dict[str, Any], name: str) -> int:
    value = data.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def sent(data: dict[str, Any]) -> int:
    """The last generation dispatched (0: none)."""
    return _count(data, "generation")


def received(data: dict[str, Any]) -> int:
    """The last generation admitted (0: none)."""
    return _count(data, "received")


def admit(p: Pass, env: EventEnvelope, suffix: str = "") -> bool:
    """Whether the pass may decide `env`. A workflow_dispatch without Holon's inputs is not a
    re-activation and passes; one with them passes only as the next expected generation."""
    if env.type != DISPATCH_TYPE or not asks_to_continue(env.payload):
        return True
    try:
        asked = continuation(env.payload)
    except NotAContinuation as exc:
        journal_decision(p, env, "refused", f"not a re-activation Holon sent: {exc}", suffix=suffix)
        return False
    data = reactivation_data(p.state, asked.subject)
    expected = sent(data)
    if expected == 0 or received(data) >= expected or asked.generation != expected:
        why = (
            f"re-activation generation {asked.generation} of {asked.subject} is not the next "
            f"expected one ({'none pending' if received(data) >= expected else expected})"
        )
        journal_decision(p, env, "ignored", why, suffix=suffix)
        return False
    p.put("meta", record_key(asked.subject), "live", {**data, "received": asked.generation})
    return True


__all__ = ["RECORD", "admit", "reactivation_data", "received", "record_key", "sent"]
