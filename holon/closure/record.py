"""A closure with its report, flat: what `holon closure derive` prints and the renderer reads."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, ValidationError, model_validator

from holon.closure.derive import Closure
from holon.closure.lifecycle import LifecycleOutcome
from holon.closure.mapping import CheckConclusion, JobConclusion, Report, report_for
from holon.errors import InvalidInput
from holon.validation import describe_validation_error


class ClosureRecord(Closure):
    """Closure fields plus the row of the mapping table that reports them."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    lifecycle_outcome: LifecycleOutcome | None
    exit_code: int
    job_conclusion: JobConclusion
    check_conclusion: CheckConclusion

    @model_validator(mode="after")
    def _agrees_with_table(self) -> ClosureRecord:
        row = report_for(self.closure())
        if (self.lifecycle_outcome, self.exit_code, self.check_conclusion) != (
            row.lifecycle_outcome,
            row.exit_code,
            row.check_conclusion,
        ):
            raise ValueError(
                f"lifecycle {self.lifecycle_outcome}, exit {self.exit_code} and check "
                f"{self.check_conclusion} do not match closure {self.closure_outcome}"
                f"{'/' + self.waiting_reason if self.waiting_reason else ''}"
            )
        return self

    def closure(self) -> Closure:
        return Closure.model_validate({name: getattr(self, name) for name in Closure.model_fields})

    def report(self) -> Report:
        return report_for(self.closure()).model_copy(update={"job_conclusion": self.job_conclusion})

    @classmethod
    def of(cls, closure: Closure, *, fail_on_waiting: bool = False) -> ClosureRecord:
        report = report_for(closure, fail_on_waiting=fail_on_waiting)
        return cls.model_validate(
            {
                **closure.model_dump(),
                "lifecycle_outcome": report.lifecycle_outcome,
                "exit_code": report.exit_code,
                "job_conclusion": report.job_conclusion,
                "check_conclusion": report.check_conclusion,
            }
        )


def parse_closure_record(data: Any, source: str) -> ClosureRecord:
    try:
        return ClosureRecord.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None
