"""A `workflow_dispatch` that continues a subject's work: its `subject` and `generation` inputs,
read strictly (pure).

Holon re-activates continuable work by dispatching its own workflow with two inputs, `subject`
(`issue:N` or `pull_request:N`) and `generation` (1, 2, ...: which re-activation this is). Inputs
are untrusted text (anyone who may dispatch the workflow chooses them), so only those exact shapes
are read: anything else is no subject at all, and the controller refuses the dispatch with one
journaled line (`holon/controller/reactivation.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

DISPATCH_TYPE = "github.workflow_dispatch"
INPUTS = ("subject", "generation")
REACTIVATION = "reactivation:"
_SUBJECT = re.compile(r"(issue|pull_request):([1-9][0-9]{0,9})")
_GENERATION = re.compile(r"[1-9][0-9]{0,5}")


class NotAContinuation(ValueError):
    """The inputs name no subject or generation Holon would have sent; the message says which
    (never the value itself: it is untrusted)."""


@dataclass(frozen=True)
class Continuation:
    kind: str  # issue | pull_request
    id: str
    generation: int

    @property
    def subject(self) -> str:
        return f"{self.kind}:{self.id}"


def _inputs(payload: dict[str, Any]) -> dict[str, Any]:
    inputs = payload.get("inputs")
    return inputs if isinstance(inputs, dict) else {}


def asks_to_continue(payload: dict[str, Any]) -> bool:
    """Whether a workflow_dispatch payload carries either input (then it must carry both)."""
    inputs = _inputs(payload)
    return any(name in inputs for name in INPUTS)


def dispatch_subject(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, id) of a valid `subject` input, else None."""
    value = _inputs(payload).get("subject")
    found = _SUBJECT.fullmatch(value) if isinstance(value, str) else None
    return (found.group(1), found.group(2)) if found else None


def continuation(payload: dict[str, Any]) -> Continuation:
    """The continuation a workflow_dispatch payload asks for; NotAContinuation when its inputs
    are not exactly what Holon sends."""
    subject = dispatch_subject(payload)
    if subject is None:
        raise NotAContinuation("its subject input is not issue:N or pull_request:N")
    value = _inputs(payload).get("generation")
    if not isinstance(value, str) or not _GENERATION.fullmatch(value):
        raise NotAContinuation("its generation input is not a whole number from 1")
    return Continuation(subject[0], subject[1], int(value))


def continues(event_type: str, payload: dict[str, Any]) -> str | None:
    """`reactivation:<subject>:<generation>` for a valid continuation dispatch, else None: what
    the intents it decides record as the work they continue (no new unit, no cooldown)."""
    if event_type != DISPATCH_TYPE or not asks_to_continue(payload):
        return None
    try:
        found = continuation(payload)
    except NotAContinuation:
        return None
    return f"{REACTIVATION}{found.subject}:{found.generation}"


def inputs_for(subject: str, generation: int) -> dict[str, str]:
    """The workflow_dispatch inputs that ask to continue `subject` at `generation`."""
    kind, _, ident = subject.partition(":")
    if not _SUBJECT.fullmatch(subject) or generation < 1:
        raise NotAContinuation(f"{subject!r} at generation {generation} is no continuation")
    return {"subject": f"{kind}:{ident}", "generation": str(generation)}


__all__ = [
    "DISPATCH_TYPE",
    "REACTIVATION",
    "Continuation",
    "NotAContinuation",
    "asks_to_continue",
    "continuation",
    "continues",
    "dispatch_subject",
    "inputs_for",
]
