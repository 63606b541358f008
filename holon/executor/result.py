"""What one attempt at an intent did (a line of `actions.ndjson`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from holon.closure.evidence import Question
from holon.spend import Spend


class EffectOutput(BaseModel):
    """What an effect produced outside Holon, so later work can find it again (the comment to
    edit, the pull request opened, the check run to complete). Every field is optional: an
    effect fills in what it made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = Field(default=None, description="The made or changed item's web address.")
    number: int | None = Field(default=None, description="An issue or pull request number.")
    comment_id: int | None = None
    check_run_id: int | None = None
    sha: str | None = Field(default=None, description="A commit the effect made (a merge).")


class ActionResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="<intent id>:<attempt>, deterministic")
    intent_id: str
    type: str
    subject: str
    attempt: int
    status: Literal["succeeded", "failed"]
    dry_run: bool = False
    effect: dict[str, Any] | None = Field(default=None, description="What was (or would be) done.")
    output: EffectOutput | None = Field(
        default=None, description="What the effect produced, when it produced something."
    )
    run_id: str | None = None
    run_output_path: str | None = None
    manifest_path: str | None = None
    run_status: str | None = None
    run_outcome: str | None = None
    question: Question | None = Field(
        default=None, description="The one question a run that needs a human recorded."
    )
    usage: Spend | None = Field(
        default=None, description="What a skill run spent on its model, when it is known."
    )
    usage_source: Literal["host", "agent"] | None = Field(
        default=None,
        description="Who measured `usage`: host (the runner's record) or agent (self-reported).",
    )
    error: str | None = None
    at: AwareDatetime
