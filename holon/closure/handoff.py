"""The structured terminal handoff (Explicit Terminal Stop contract) and its renderings.

Four required parts: Outcome (one lifecycle label), Evidence, Artifacts/state, and Handoff (the
exact next owner or the one required answer). Built from a derived closure and its report, so the
comment, the step summary and the terminal all say what the runtime decided, and carry the same
facts: the three templates render one list of evidence lines, one list of artifacts and recorded
state, and one next step.

Untrusted text is escaped by the templates. Prose from outside (titles, evidence lines, logs, the
reasons inside a closure's detail) has its softener sentences removed. The operator's question is
different: it is the one required answer, quoted as data exactly as the agent asked it, so it is
never edited, even when it reads like an offer ("Would you like me to use SQLite?"). The final
check that refuses a softener therefore reads Holon's own prose only: it renders the same template
with every piece of outside text replaced by a placeholder.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from holon import markdown
from holon.closure.derive import CUT_SHORT, Closure
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
    retry_command: str | None = Field(
        default=None, description="The command that runs the work again (None: the skill's own)."
    )
    interrupted_by: str | None = None
    cut_short: str | None = Field(
        default=None,
        description="Why the step ended before it finished (cancelled, timed out, killed): "
        "an interruption's handoff says this, not that a user stopped the work.",
    )
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
    recorded: list[str] = Field(
        default_factory=list,
        description="Recorded state every format lists beside the artifacts (ids, question id).",
    )
    next: NextStep | None

    @model_validator(mode="after")
    def _complete(self) -> Handoff:
        if self.outcome is not None and self.next is None:
            raise ValueError("a terminal handoff names the next owner")
        return self


# The command a maintainer comments to run each skill again (a pr-fix is never restarted by
# `/holon solve`, which would open a second pull request).
RETRY_BY_SKILL = {
    "github-issue-solve": "/holon solve",
    "github-pr-fix": "/holon fix",
    "github-review": "/holon review",
}


def retry_command_of(ctx: HandoffContext) -> str:
    return ctx.retry_command or RETRY_BY_SKILL.get(ctx.skill or "", "/holon solve")


def _next_step(closure: Closure, report: Report, ctx: HandoffContext) -> NextStep | None:
    retry = f"comment {retry_command_of(ctx)}"
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
        case "interrupted" if ctx.cut_short:
            return NextStep(
                owner="maintainer",
                action=f"Holon's step was cut short; nothing runs until you {retry} to restart. "
                "Check first what GitHub holds of the work (the evidence above).",
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
    """The handoff for a derived closure; prose from outside has its softeners removed, the
    operator's question is kept exactly."""
    cut_short = context.cut_short
    if cut_short is None and report.headline == "interrupted" and closure.detail == CUT_SHORT:
        # The closure says the step was cut short (a cancelled workflow run), whoever settles
        # its comment: a later pass writing the handoff the cleanup failed to write says so too.
        cut_short = CUT_SHORT
    ctx = context.model_copy(
        update={
            "evidence": [s for s in (strip_softeners(e) for e in context.evidence) if s],
            "details": strip_softeners(context.details) if context.details else None,
            "title": strip_softeners(context.title) if context.title else None,
            "cut_short": cut_short,
        }
    )
    question = closure.question
    # A question closure's detail quotes the question: data, kept. Any other detail carries
    # reasons recorded from outside (a run's error, a wait's reason): prose, cleaned.
    detail = closure.detail if question is not None else strip_softeners(closure.detail)
    if ctx.cut_short and report.headline == "interrupted":
        detail = ctx.cut_short  # no user stopped it: the step was cut short
    closure = closure.model_copy(update={"detail": detail or closure.rule})
    evidence = [closure.detail, *ctx.evidence]
    if closure.deciding_items:
        evidence.append("deciding evidence: " + ", ".join(closure.deciding_items))
    if closure.rejected_claims:
        evidence.append(
            "completion claims not accepted (blocking evidence remained): "
            + ", ".join(closure.rejected_claims)
        )
    recorded = list(ctx.state)
    if question is not None:
        recorded.append(f"question id {question.id}")
    return Handoff(
        context=ctx,
        outcome=report.lifecycle_outcome,
        headline=report.headline,
        closure=closure,
        report=report,
        evidence=evidence,
        recorded=recorded,
        next=_next_step(closure, report, ctx),
    )


_DATA = "(data)"


def _placeholders(closure: Closure, ctx: HandoffContext) -> tuple[Closure, HandoffContext]:
    """The same closure and context with every piece of outside text replaced by a placeholder,
    so that what is left is Holon's own prose."""
    question = closure.question
    closure = closure.model_copy(
        update={
            "detail": _DATA,
            "question": Question(id=_DATA, text=_DATA) if question is not None else None,
            "deciding_items": [_DATA for _ in closure.deciding_items],
            "rejected_claims": [_DATA for _ in closure.rejected_claims],
        }
    )
    artifacts = [
        ArtifactLink(
            name=_DATA,
            url="https://example.invalid/data" if a.url else None,
            path=_DATA if a.path else None,
        )
        for a in ctx.artifacts
    ]
    ctx = ctx.model_copy(
        update={
            "subject": Subject(kind=_DATA, id=_DATA),
            "workflow": _DATA,
            "skill": _DATA if ctx.skill else None,
            "title": _DATA if ctx.title else None,
            "evidence": [_DATA for _ in ctx.evidence],
            "artifacts": artifacts,
            "state": [_DATA for _ in ctx.state],
            "details": _DATA if ctx.details else None,
            "retry_command": _DATA,
            "interrupted_by": _DATA if ctx.interrupted_by else None,
            "cut_short": _DATA if ctx.cut_short else None,
        }
    )
    return closure, ctx


def marker(handoff: Handoff) -> markdown.Trusted:
    """The hidden marker that lets Holon find its own comment again (docs/closure.md);
    values reduced to a safe alphabet."""

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


def _render(handoff: Handoff, fmt: Format) -> str:
    name, kind = _TEMPLATES[fmt]
    label = handoff.outcome or "continuing"
    return render(
        "holon.closure",
        name,
        kind,
        h=handoff,
        label=markdown.Trusted(label),
        marker=marker(handoff),
    )


def render_handoff(handoff: Handoff, fmt: Format = "comment") -> str:
    """The handoff in one format. Holon's own prose must not offer a follow-up: a template or
    a next step that does is a bug (exit 70), never something input can cause."""
    closure, context = _placeholders(handoff.closure, handoff.context)
    own = build_handoff(closure, handoff.report, context)
    leftover = find_softener(_render(own, fmt))
    if leftover is not None:
        raise HolonError(f"refusing to render a handoff with a softener: {leftover!r}")
    return _render(handoff, fmt)
