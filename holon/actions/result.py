"""What one `holon action` step did (`StepResult`): its exit code, the subjects' closures, the
skill runs, the handoff and its comment, and what it decided and refused with why; the outputs
and the step summary are both read from it (`outputs.py`, `summary.py`).

Single mode (`single.py`) and fan-out (`fanout.py`) both end in one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from holon.closure.mapping import SEVERITY, report_for
from holon.closure.record import ClosureRecord
from holon.spend import Spend

if TYPE_CHECKING:
    from holon.closure.handoff import Handoff


@dataclass(frozen=True)
class Line:
    """One thing the step decided or refused, and why (untrusted text: escaped where shown)."""

    what: str
    why: str
    event: str = ""  # the type of the event it was decided on (the diagram's edge)


@dataclass(frozen=True)
class RunRow:
    """One skill run of the step (the `runs` output's item)."""

    intent: str
    skill: str
    subject: str
    status: str  # the intent's status: succeeded, failed, cancelled, refused, inflight...
    outcome: str = ""  # the run's lifecycle outcome when it has one
    output: str = ""  # the run's output directory
    usage: Spend | None = None  # what its attempts spent on the model, when known

    def as_dict(self) -> dict[str, str]:
        return {
            "intent": self.intent,
            "skill": self.skill,
            "subject": self.subject,
            "status": self.status,
            "outcome": self.outcome,
            "output": self.output,
        }


@dataclass
class StepResult:
    exit_code: int
    event: str = ""  # what arrived, e.g. "github.issue_comment.created on issue:1"
    subject: str | None = None  # the event's own subject ("issue:1"), when it has one
    title: str = ""  # the subject's title as the event gave it (untrusted)
    closures: dict[str, ClosureRecord] = field(default_factory=dict)
    runs: list[RunRow] = field(default_factory=list)
    comment_url: str = ""
    handoff: Handoff | None = None
    decided: list[Line] = field(default_factory=list)
    refused: list[Line] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # restored state, reconcile, warnings
    problems: list[str] = field(default_factory=list)  # why the step failed besides closures
    extra_outputs: dict[str, str] = field(default_factory=dict)  # fan-out: matrix, has_runs

    @property
    def closure(self) -> ClosureRecord | None:
        """The event subject's closure, else the most severe one (design: outputs)."""
        if self.subject is not None and self.subject in self.closures:
            return self.closures[self.subject]
        worst: ClosureRecord | None = None
        for record in self.closures.values():
            if worst is None or _severity(record.exit_code) > _severity(worst.exit_code):
                worst = record
        return worst

    @property
    def usage(self) -> Spend | None:
        """What the step's skill runs spent on their model (None: no run reported any)."""
        known = [run.usage for run in self.runs if run.usage is not None]
        return sum(known[1:], known[0]) if known else None

    @property
    def closure_subject(self) -> str | None:
        chosen = self.closure
        for key, record in self.closures.items():
            if record is chosen:
                return key
        return None

    @property
    def outputs(self) -> dict[str, str]:
        """Every output of the step (design table), empty strings where there is none."""
        from holon.actions.outputs import outputs_of

        return outputs_of(self)


def _severity(code: int) -> int:
    return SEVERITY.index(code) if code in SEVERITY else len(SEVERITY)


def step_exit(closure: ClosureRecord | None, *, fail_on_waiting: bool, failed: bool) -> int:
    """The step's exit code: 1 when Holon failed to handle the event, else the closure's job
    conclusion (fail_on_waiting applied): 0 for success, 1 for failure."""
    if failed:
        return 1
    if closure is None:
        return 0
    conclusion = closure.job_conclusion
    if fail_on_waiting:
        conclusion = report_for(closure.closure(), fail_on_waiting=True).job_conclusion
    return 0 if conclusion == "success" else 1


__all__ = ["Line", "RunRow", "StepResult", "step_exit"]
