"""`EventEnvelope` (Proactive Agent Runtime RFC section 6.2): the one shape the controller sees.

Connectors turn source-specific inputs (GitHub webhooks, Actions runs, timer ticks, recorded
files) into envelopes; the controller never reads GitHub's raw shapes. The id derives from the
dedupe key, so the same fact reaching Holon twice, or by two paths, is one event.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from holon.errors import InvalidInput
from holon.gateway.commands import Command

Authority = Literal["owner", "none", "unknown"]
Via = Literal["actions", "webhook", "replay", "timer", "internal"]
# Holon's own events (a skill run settled): made inside the controller's pass, never received.
INTERNAL_PREFIX = "holon."


# One set per combination of the fields a model was given (few: the connector gives the same ones).
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scope(_Frozen):
    tenant: str = "default"
    repo: str | None = Field(default=None, description="owner/name; org-level events have none.")
    session: str | None = None


class Subject(_Frozen):
    kind: str = Field(description="issue, pull_request, check_suite, check_run, ...")
    id: str
    head_sha: str | None = None
    pull_requests: list[int] = Field(default_factory=list)

    def key(self) -> str:
        return f"{self.kind}:{self.id}"


class Actor(_Frozen):
    login: str
    type: str = Field(description="GitHub's account type: User, Bot, Organization.")
    association: str | None = Field(
        default=None, description="author_association as GitHub sent it, when it is the actor's."
    )
    is_bot: bool
    authority: Authority


class EventEnvelope(_Frozen):
    id: str
    source: str = Field(description="github, timer, webhook, ...")
    type: str = Field(description="github.<event>.<action>, github.<event>, timer.tick, ...")
    via: Via
    scope: Scope
    at: AwareDatetime
    subject: Subject | None
    dedupe_key: str
    delivery: str | None = None
    actor: Actor | None = None
    command: Command | None = None
    payload: dict[str, Any] = Field(description="The original payload, verbatim.")

    @model_validator(mode="after")
    def _shared_fields_set(self) -> EventEnvelope:
        # As state Records do: pydantic gives every instance its own set of the fields given,
        # one more object per envelope for the collector to walk and ~200 bytes; a
        # frozen model never changes it (model_copy copies it), so equal sets are shared.
        given = self.__pydantic_fields_set__
        object.__setattr__(
            self, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(given), given)
        )
        return self


def is_internal(env: EventEnvelope) -> bool:
    return env.via == "internal" or env.source == "holon" or env.type.startswith(INTERNAL_PREFIX)


def from_outside(env: EventEnvelope, where: str) -> EventEnvelope:
    """`env` as received from outside (a replay line, the inbox); InvalidInput for one that
    claims to be Holon's own: an internal event carries authority already checked (the run it
    reports was admitted), so one arriving from outside would be a forgery."""
    if is_internal(env):
        raise InvalidInput(f"{where}: {env.type} is Holon's own event type; it is never received")
    return env


def envelope_id(dedupe_key: str) -> str:
    return "evt_" + hashlib.sha256(dedupe_key.encode("utf-8")).hexdigest()[:24]
