"""Memory outside the model: a compact ledger per subject (RFC-0004 5.4, issue 12 item 3).

One `memory` record per subject in the serve state holds what a decider needs to stay
consistent across many runs: the attempts and their outcomes, the pull requests made, the
questions asked and answered, the last closure and the spend. Every list is bounded, so the
record (and the context a model is given from it) stays the same size however long the history
grows; counters keep the totals. Updating it is `memory_update.py`'s job; this module is only
the shape.
"""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from holon.spend import Spend

MAX_RECENT = 10  # attempts kept in full
MAX_PRS = 20
MAX_QUESTIONS = 5
MAX_FAILED = 20  # (skill, head) pairs whose failures are remembered
MAX_TEXT = 300  # characters of a reason, a question or an answer kept
MAX_OUTCOMES = 16  # distinct outcome names counted (they come from a small fixed set)

# No spend: one frozen value shared by every attempt and memory without one. A dump that leaves
# defaults out asks the factory for the default of each (a memory, each of its recent attempts):
# `Spend` itself would validate a new one every time, several per event in a serve.
NO_SPEND = Spend()


def no_spend() -> Spend:
    return NO_SPEND


class Attempt(BaseModel):
    """One settled piece of work on the subject: a skill run, or another effect that failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: AwareDatetime
    intent_id: str
    type: str
    skill: str | None = None
    head_sha: str | None = None
    # success | failure | needs_human | refused | cancelled | timed_out | ...
    outcome: str
    reason: str | None = Field(default=None, max_length=MAX_TEXT)
    pr: int | None = None
    spend: Spend = Field(default_factory=no_spend)


class QuestionEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    asked_at: AwareDatetime
    question: str = Field(max_length=MAX_TEXT)
    answered_at: AwareDatetime | None = None
    answered_by: str | None = None
    answer: str | None = Field(default=None, max_length=MAX_TEXT)


class LastClosure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: AwareDatetime
    outcome: str
    waiting_reason: str | None = None
    lifecycle: str | None = None


class SubjectMemory(BaseModel):
    """The `memory` record's data for one subject (`owner/repo#kind:id` as the ledger keys it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: str
    attempts_total: int = Field(default=0, ge=0)
    outcomes: dict[str, int] = Field(
        default_factory=dict, max_length=MAX_OUTCOMES, description="attempts by outcome"
    )
    recent: list[Attempt] = Field(default_factory=list, max_length=MAX_RECENT)
    # "skill@head_sha" (head "-" when none) -> failures: a failed attempt is not repeated blindly.
    failed: dict[str, int] = Field(default_factory=dict, max_length=MAX_FAILED)
    prs: list[int] = Field(default_factory=list, max_length=MAX_PRS)
    questions: list[QuestionEntry] = Field(default_factory=list, max_length=MAX_QUESTIONS)
    last_closure: LastClosure | None = None
    decisions: int = Field(default=0, ge=0, description="decisions made on the subject")
    spend: Spend = Field(default_factory=no_spend, description="lifetime spend: runs and decisions")


__all__ = [
    "MAX_FAILED",
    "MAX_OUTCOMES",
    "MAX_PRS",
    "MAX_QUESTIONS",
    "MAX_RECENT",
    "MAX_TEXT",
    "Attempt",
    "LastClosure",
    "QuestionEntry",
    "Spend",
    "SubjectMemory",
]
