"""The structured terminal handoff (Explicit Terminal Stop contract) and its renderings.

Four required parts: Outcome (one lifecycle label), Evidence, Artifacts/state, and Handoff (the
exact next owner or the one required answer). Built from a derived closure and its report, so the
comment, the step summary and the terminal all say what the runtime decided. Untrusted text is
escaped by the templates; softeners are removed from it before rendering and a rendered handoff
that still contains one is refused.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holon import markdown
from holon.closure.derive import Closure
from holon.closure.evidence import Question
from holon.closure.lifecycle import LifecycleOutcome
from holon.closure.mapping import Headline, Report
from holon.closure.softeners import find_softener, strip_softeners
from holon.errors import HolonError
from holon.templating import render

Format = Literal["comment", "summary", "text"]
_MARKER_VALUE = re.compile(r"[^A-Za-z0-9_.:/-]")


class Subject(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1)
    id: str = Field(min_length=1)


class ArtifactLink(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str | None = None
    path: str | None = None


class HandoffContext(BaseModel):
    """What the caller knows beyond the closure: the subject and what was produced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject: Subject = Field(default_factory=lambda: Subject(kind="run", id="local"))
    workflow: str = "holon"
    skill: str | None = None
    title: str | None = Field(default=None, description="Untrusted: e.g. the issue title.")
    evidence: list[str] = Field(default_factory=list, description="Untrusted evidence lines.")
    artifacts: list[ArtifactLink] = Field(default_factory=list)
    state: list[str] = Field(default_factory=list, description="Recorded state, e.g. ids.")
    details: str | None = Field(default=None, description="Untrusted block: a log excerpt.")
    retry_command: str = "/holon solve"
    interrupted_by: str | None = None
    recheck_at: datetime | None = None


class NextStep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    owner: str = Field(description="Who acts next: maintainer, or holon itself.")
    action: str
    question: Question | None = None


class Handoff(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    context: HandoffContext
    outcome: LifecycleOutcome | None = Field(description="None only while continuing.")
    headline: Headline
    closure: Closure
    report: Report
    evidence: list[str] = Field(min_length=1)
    next: NextStep | None

    @model_validator(mode="after")
    def _complete(self) -> Handoff:
        if self.outcome is not None and self.next is None:
            raise ValueError("a terminal handoff names the next owner")
        return self


def _next_step(closure: Closure, report: Report, ctx: HandoffContext) -> NextStep | None:
    retry = f"comment {ctx.retry_command}"
    match report.headline:
        case "finished":
            return NextStep(owner="maintainer", action="Review the result and merge or close it.")
        case "failed":
            return NextStep(
                owner="maintainer",
                action=f"Fix the cause shown in the evidence, then {retry} to run again.",
            )
        case "question":
            assert closure.question is not None
            return NextStep(
                owner="maintainer",
                action=f"Answer the question in a comment, then {retry} to continue.",
                question=closure.question,
            )
        case "interrupted":
            who = f" by {ctx.interrupted_by}" if ctx.interrupted_by else ""
            return NextStep(
                owner="maintainer",
                action=f"Holon was stopped{who}; nothing runs until you {retry} to restart.",
            )
        case "operator_decision":
            return NextStep(owner="maintainer", action=f"Decide: {closure.detail}.")
        case "blocked":
            when = f" at {ctx.recheck_at.isoformat()}" if ctx.recheck_at else ""
            return NextStep(
                owner="holon",
                action=f"Nobody needs to act: Holon re-checks by itself{when} ({closure.detail}).",
            )
        case _:
            return None


def build_handoff(closure: Closure, report: Report, context: HandoffContext) -> Handoff:
    """The handoff for a derived closure; prose from outside has its softeners removed."""
    ctx = context.model_copy(
        update={
            "evidence": [s for s in (strip_softeners(e) for e in context.evidence) if s],
            "details": strip_softeners(context.details) if context.details else None,
            "title": strip_softeners(context.title) if context.title else None,
        }
    )
    evidence = [closure.detail, *ctx.evidence]
    if closure.deciding_items:
        evidence.append("deciding evidence: " + ", ".join(closure.deciding_items))
    if closure.rejected_claims:
        evidence.append(
            "completion claims not accepted (blocking evidence remained): "
            + ", ".join(closure.rejected_claims)
        )
    return Handoff(
        context=ctx,
        outcome=report.lifecycle_outcome,
        headline=report.headline,
        closure=closure,
        report=report,
        evidence=evidence,
        next=_next_step(closure, report, ctx),
    )


def marker(handoff: Handoff) -> markdown.Trusted:
    """The hidden marker (DESIGN.md section 7); values reduced to a safe alphabet."""

    def safe(value: str) -> str:
        return _MARKER_VALUE.sub("_", value) or "_"

    ctx = handoff.context
    return markdown.Trusted(
        f"<!-- holon:v1 subject={safe(ctx.subject.kind)}:{safe(ctx.subject.id)} "
        f"workflow={safe(ctx.workflow)} skill={safe(ctx.skill or 'none')} -->"
    )


_TEMPLATES: dict[Format, tuple[str, Literal["markdown", "text"]]] = {
    "comment": ("handoff_comment.md.j2", "markdown"),
    "summary": ("handoff_summary.md.j2", "markdown"),
    "text": ("handoff_text.txt.j2", "text"),
}


def render_handoff(handoff: Handoff, fmt: Format = "comment") -> str:
    name, kind = _TEMPLATES[fmt]
    label = handoff.outcome or "continuing"
    text = render(
        "holon.closure",
        name,
        kind,
        h=handoff,
        label=markdown.Trusted(label),
        marker=marker(handoff),
    )
    leftover = find_softener(text)
    if leftover is not None:
        raise HolonError(f"refusing to render a handoff with a softener: {leftover!r}")
    return text
