"""Dispatch a workflow (`workflow_dispatch`) or a repository event (`repository_dispatch`) in
the event's repository: 1 call each.

A dispatch leaves nothing to read back (GitHub answers 204 and the run it starts is not tied
to the request), so unlike the other effects it cannot look before it writes: it is sent once,
and a 5xx is a `ServerError` ("GitHub may or may not have done it") that the caller journals
rather than sends again. What GitHub would refuse is refused first, in one line: a workflow that
is neither a file name nor an id, a ref git would not take, more inputs or payload properties
than GitHub allows, a payload that is not JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holon.github.effects import EffectRefused, Scope
from holon.github.outcome import EffectOutcome

EFFECT = "dispatch"
MAX_INPUTS = 25  # GitHub's limit on a workflow_dispatch's inputs
MAX_PAYLOAD_KEYS = 10  # and on a repository_dispatch's client_payload top-level properties
EVENT_TYPE_LIMIT = 100
_WORKFLOW = re.compile(r"[0-9]{1,20}|[A-Za-z0-9_.-]{1,250}\.ya?ml")
_REF = re.compile(r"(?!.*\.\.)(?!/)(?!.*//)[A-Za-z0-9._/@+-]{1,250}(?<![/.])")
_INPUT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}")
_EVENT_TYPE = re.compile(r"[^\x00-\x1f\x7f]{1,100}")


@dataclass(frozen=True)
class WorkflowDispatch:
    """Run workflow `workflow` (a file name such as `holon.yml`, or its id) on `ref`."""

    workflow: str
    ref: str
    inputs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RepositoryDispatch:
    """Send a `repository_dispatch` event of `event_type` with `payload` as its
    `client_payload`."""

    event_type: str
    payload: Mapping[str, Any] = field(default_factory=dict)


def _check_workflow(request: WorkflowDispatch) -> None:
    if not _WORKFLOW.fullmatch(request.workflow):
        raise EffectRefused(EFFECT, "the workflow is a file name (holon.yml) or an id")
    if not _REF.fullmatch(request.ref):
        raise EffectRefused(EFFECT, "the ref is not a branch or tag name git would take")
    if len(request.inputs) > MAX_INPUTS:
        raise EffectRefused(EFFECT, f"a workflow takes at most {MAX_INPUTS} inputs")
    for name, value in request.inputs.items():
        if not isinstance(name, str) or not _INPUT.fullmatch(name):
            raise EffectRefused(EFFECT, "an input name is letters, digits, _ and -")
        if not isinstance(value, str):
            raise EffectRefused(EFFECT, f"input {name} is not a string")


def _check_event(request: RepositoryDispatch) -> None:
    if not _EVENT_TYPE.fullmatch(request.event_type) or not request.event_type.strip():
        raise EffectRefused(
            EFFECT, f"the event type is 1 to {EVENT_TYPE_LIMIT} characters on one line"
        )
    if len(request.payload) > MAX_PAYLOAD_KEYS:
        raise EffectRefused(EFFECT, f"a client payload has at most {MAX_PAYLOAD_KEYS} properties")
    try:
        json.dumps(dict(request.payload), allow_nan=False)
    except (TypeError, ValueError):
        raise EffectRefused(EFFECT, "the client payload is not JSON") from None


def dispatch(
    scope: Scope, target_repo: str | None, request: WorkflowDispatch | RepositoryDispatch
) -> EffectOutcome:
    """Send `request` to `target_repo`, which must be the event's repository."""
    scope.check(EFFECT, target_repo)
    if isinstance(request, WorkflowDispatch):
        _check_workflow(request)
        scope.repo.workflow_dispatch(request.workflow, request.ref, request.inputs)
        output = {"event": "workflow_dispatch", "workflow": request.workflow, "ref": request.ref}
    else:
        _check_event(request)
        scope.repo.repository_dispatch(request.event_type, request.payload)
        output = {"event": "repository_dispatch", "event_type": request.event_type}
    return EffectOutcome(EFFECT, True, output)
