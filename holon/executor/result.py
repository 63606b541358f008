"""What one attempt at an intent did (a line of `actions.ndjson`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from holon.closure.evidence import Question


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
    run_id: str | None = None
    run_output_path: str | None = None
    manifest_path: str | None = None
    run_status: str | None = None
    run_outcome: str | None = None
    question: Question | None = Field(
        default=None, description="The one question a run that needs a human recorded."
    )
    error: str | None = None
    at: AwareDatetime
