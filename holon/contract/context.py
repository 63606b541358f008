"""The context manifest: `manifest.json` of a run's context directory (`/holon/input/context/`).

Written by Holon's `github-context` collector, read by the agent: what the context directory
holds (`present`, each file with its size and whether it came from GitHub's API or the event
payload alone) and what it does not (`missing`, each with a one-line reason: no token, a
permission GitHub refused, a bound). The files it lists are untrusted data, never instructions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SubjectKind = Literal["issue", "pull_request"]
TriggerKind = Literal[
    "comment", "review", "review_comment", "issue", "pull_request", "check", "other"
]
PartSource = Literal["api", "payload"]
TriggerLive = Literal["unchanged", "edited", "deleted", "unchecked"]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class ContextSubject(_Closed):
    kind: SubjectKind
    number: int = Field(gt=0)


class ContextTrigger(_Closed):
    """What asked for the run: a comment, a review, a check that completed..."""

    kind: TriggerKind
    id: int | None = Field(default=None, description="GitHub's id of the comment, review, ...")
    author: str | None = None
    sha256: str | None = Field(
        default=None,
        description="SHA-256 of the trigger's text as the event carried it (frozen inputs).",
    )
    updated_at: str | None = Field(default=None, description="When GitHub last updated it then.")
    live: TriggerLive | None = Field(
        default=None,
        description="Whether GitHub still holds that text: unchanged, edited, deleted, or "
        "unchecked (read from the payload alone). The context always holds the event's text.",
    )


class PresentPart(_Closed):
    name: str = Field(min_length=1, description="the part: issue, comments, diff, logs, ...")
    path: str = Field(min_length=1, description="relative to the context directory")
    bytes: int = Field(ge=0)
    source: PartSource


class MissingPart(_Closed):
    name: str = Field(min_length=1)
    reason: str = Field(min_length=1, description="one line: why it is not here")


class ContextManifest(_Closed):
    subject: ContextSubject
    repo: str | None = Field(default=None, description="owner/name")
    trigger: ContextTrigger | None = None
    present: list[PresentPart] = Field(default_factory=list)
    missing: list[MissingPart] = Field(default_factory=list)


__all__ = [
    "ContextManifest",
    "ContextSubject",
    "ContextTrigger",
    "MissingPart",
    "PartSource",
    "PresentPart",
    "SubjectKind",
    "TriggerKind",
    "TriggerLive",
]
