"""`ActionIntent` (Proactive Agent Runtime RFC section 7.1): a bounded, validated vocabulary.

Deciders, whether a policy file or a model, only ever propose intents; the executor only ever
performs validated ones. An intent outside the vocabulary or with bad arguments is rejected with a
reason that is journaled, never executed. The idempotency key is deterministic from the event and
the intent, so replaying an event can never perform the same effect twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

IntentType = Literal[
    "run_skill",
    "comment",
    "label",
    "unlabel",
    "request_review",
    "merge",
    "close_issue",
    "dispatch",
    "wait",
    "noop",
]
INTENT_TYPES: tuple[str, ...] = get_args(IntentType)
Priority = Literal["low", "normal", "high"]


class _Args(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class RunSkillArgs(_Args):
    skill: str = Field(min_length=1)
    inputs: dict[str, str] = Field(default_factory=dict)
    head_sha: str | None = None
    # Where the pull request's head lives: this repository ("same") or a fork, whose head Holon
    # never checks out (executor/workspace.py). None: not a pull request, or unknown.
    head_repo: Literal["same", "fork"] | None = None


class CommentArgs(_Args):
    body: str = Field(min_length=1, max_length=65536)  # GitHub's limit for a comment body
    kind: str = Field(default="note", description="usage, status, refusal, progress, ...")


class LabelArgs(_Args):
    label: str = Field(min_length=1, max_length=50)


class ReviewArgs(_Args):
    reviewers: list[str] = Field(min_length=1)


class MergeArgs(_Args):
    method: Literal["merge", "squash", "rebase"] = "squash"
    sha: str = Field(pattern=r"^[0-9a-f]{40}$")
    # The base branch it was decided for: a pull request retargeted since is not merged.
    base: str | None = Field(default=None, min_length=1, max_length=255)


class CloseArgs(_Args):
    reason: Literal["completed", "not_planned"] = "completed"


class DispatchArgs(_Args):
    reason: str = Field(min_length=1)
    after_seconds: float = Field(default=0, ge=0)


class WaitArgs(_Args):
    on: Literal["timer", "external", "operator", "task"]
    until: AwareDatetime | None = None
    condition: str | None = None
    question: dict[str, str] | None = None
    reason: str | None = None
    task_id: str | None = None
    interruption: Literal["pause", "stop_command", "cancelled_workflow"] | None = None
    actor: str | None = None  # who interrupted, for the closure and its handoff


class NoopArgs(_Args):
    pass


ARGS: dict[str, type[_Args]] = {
    "run_skill": RunSkillArgs,
    "comment": CommentArgs,
    "label": LabelArgs,
    "unlabel": LabelArgs,
    "request_review": ReviewArgs,
    "merge": MergeArgs,
    "close_issue": CloseArgs,
    "dispatch": DispatchArgs,
    "wait": WaitArgs,
    "noop": NoopArgs,
}


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: str | None
    kind: str = Field(min_length=1)
    id: str = Field(min_length=1)

    def subject(self) -> str:
        return f"{self.kind}:{self.id}"


class ActionIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    type: IntentType
    target: Target
    args: dict[str, Any] = Field(default_factory=dict)
    priority: Priority = "normal"
    idempotency_key: str
    reason: str = Field(min_length=1)
    decider: str
    event_id: str
    created_at: AwareDatetime


class IntentRejected(ValueError):
    """A proposed intent is outside the vocabulary or has bad arguments."""


def idempotency_key(event_key: str, type_: str, target: Target, args: dict[str, Any]) -> str:
    canonical = json.dumps(
        [event_key, type_, target.model_dump(), args], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def make_intent(
    *,
    type_: str,
    target: Target,
    args: dict[str, Any],
    reason: str,
    decider: str,
    event_key: str,
    event_id: str,
    at: datetime,
    skills: Container[str],
    priority: str = "normal",
) -> ActionIntent:
    """Validate a proposal strictly and build the intent; raise IntentRejected with why."""
    if type_ not in ARGS:
        raise IntentRejected(f"unknown intent type {type_!r}: not in the action vocabulary")
    try:
        parsed = ARGS[type_].model_validate(args)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "args"
        raise IntentRejected(f"{type_}: {where}: {first['msg']}") from None
    if isinstance(parsed, RunSkillArgs) and parsed.skill not in skills:
        raise IntentRejected(f"run_skill: unknown skill {parsed.skill!r}")
    clean = parsed.model_dump(mode="json", exclude_defaults=False)
    key = idempotency_key(event_key, type_, target, clean)
    try:
        return ActionIntent(
            id="act_" + key[:24],
            type=type_,
            target=target,
            args=clean,
            priority=priority,
            idempotency_key=key,
            reason=reason,
            decider=decider,
            event_id=event_id,
            created_at=at,
        )
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        raise IntentRejected(f"{type_}: {first['loc'][0]}: {first['msg']}") from None
