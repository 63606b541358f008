"""The one mapping from a derived closure to everything that reports it (docs/closure.md).

closure -> lifecycle outcome -> process exit code -> job conclusion -> check-run conclusion.
Every surface (the CLI, `holon run`, serve, the Action's outputs, the check run, the comment)
reads its answer from `report_for`, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from holon.closure.derive import Closure
from holon.closure.lifecycle import LifecycleOutcome

JobConclusion = Literal["success", "failure"]
CheckConclusion = Literal["success", "failure", "action_required", "neutral"]
Headline = Literal[
    "finished", "failed", "question", "interrupted", "operator_decision", "blocked", "continuing"
]

EXIT_DONE = 0
EXIT_FAILED = 1
EXIT_HUMAN = 2
EXIT_NOT_FINISHED = 3
# Least to most severe. When several closures answer together (the subjects one pass touched,
# those of one `serve --once` run), the most severe row answers for all of them: one failure
# fails the job, else one question or interruption needs a human, else anything unfinished is
# not finished; all done is done.
SEVERITY = (EXIT_DONE, EXIT_NOT_FINISHED, EXIT_HUMAN, EXIT_FAILED)


class Report(BaseModel):
    """How one closure is reported on every surface."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lifecycle_outcome: LifecycleOutcome | None  # None: continuable is not terminal
    exit_code: int
    job_conclusion: JobConclusion
    check_conclusion: CheckConclusion
    headline: Headline
    terminal: bool


def _row(
    lifecycle: LifecycleOutcome | None, code: int, check: CheckConclusion, headline: Headline
) -> Report:
    return Report(
        lifecycle_outcome=lifecycle,
        exit_code=code,
        job_conclusion="failure" if code == EXIT_FAILED else "success",
        check_conclusion=check,
        headline=headline,
        terminal=lifecycle is not None,
    )


Key = tuple[str, str | None, str | None]
OPERATOR = "awaiting_operator_input"

# (closure outcome, waiting reason, operator wait) -> its row of the table in docs/closure.md.
TABLE: dict[Key, Report] = {
    ("completed", None, None): _row("finished", EXIT_DONE, "success", "finished"),
    ("failed", None, None): _row("failed", EXIT_FAILED, "failure", "failed"),
    ("waiting", OPERATOR, "question"): _row(
        "askuserQuestion", EXIT_HUMAN, "action_required", "question"
    ),
    ("waiting", OPERATOR, "interruption"): _row(
        "userinterlude", EXIT_HUMAN, "neutral", "interrupted"
    ),
    ("waiting", OPERATOR, "other"): _row(
        "blocked", EXIT_HUMAN, "action_required", "operator_decision"
    ),
    ("waiting", "awaiting_external_change", None): _row(
        "blocked", EXIT_NOT_FINISHED, "neutral", "blocked"
    ),
    ("waiting", "awaiting_task_result", None): _row(
        "blocked", EXIT_NOT_FINISHED, "neutral", "blocked"
    ),
    ("waiting", "awaiting_timer", None): _row("blocked", EXIT_NOT_FINISHED, "neutral", "blocked"),
    ("continuable", None, None): _row(None, EXIT_NOT_FINISHED, "neutral", "continuing"),
}


def report_for(closure: Closure, *, fail_on_waiting: bool = False) -> Report:
    """The table row for `closure`. `fail_on_waiting` turns exits 2 and 3 into a failed job."""
    report = TABLE[(closure.closure_outcome, closure.waiting_reason, closure.operator_wait)]
    if fail_on_waiting and report.exit_code in (EXIT_HUMAN, EXIT_NOT_FINISHED):
        return report.model_copy(update={"job_conclusion": "failure"})
    return report


def worst_exit(codes: Iterable[int]) -> int:
    """The exit code of several closures' codes together (SEVERITY); none at all is done."""
    return max(codes, key=SEVERITY.index, default=EXIT_DONE)


def job_conclusion_of(code: int, *, fail_on_waiting: bool = False) -> JobConclusion:
    """The job conclusion of an exit code of the table, as `report_for` gives it for one row."""
    waiting = code in (EXIT_HUMAN, EXIT_NOT_FINISHED)
    return "failure" if code == EXIT_FAILED or (fail_on_waiting and waiting) else "success"
