"""Spend in the serve state: the day's, the subject's, and recording a run's (docs/budgets.md).

The day's spend across the repository is kept as `spend` records of that UTC day: one per
contribution (`YYYY-MM-DD/<result id>`, a skill run's attempt; a decider may add its own), and
the design's whole-day record `YYYY-MM-DD` if one is written, summed when read. One record per
contribution is what makes it lossless: copies of the state merge record by record, the greater
record winning (state/model.py), so two Action runs that each added to one shared total on the
same day would keep only one addition; distinct keys both survive the merge. The cost is a
record per run per day, pruned like tombstones once older than the state's retention.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError

from holon.controller.memory import Spend, SubjectMemory
from holon.controller.pass_report import Pass
from holon.state.model import ServeState

SEPARATOR = "/"


def day_of(at: datetime) -> str:
    """The UTC day of `at`, `YYYY-MM-DD`: the key the day's spend is counted under."""
    return at.astimezone(UTC).date().isoformat()


def _spend(data: object) -> Spend:
    try:
        return Spend.model_validate(data)
    except ValidationError:
        return Spend()  # not Holon's shape: counts as nothing rather than stopping the pass


def day_spend(state: ServeState, day: str) -> Spend:
    """Everything recorded as spent on `day` (UTC), summed over its records."""
    total = Spend()
    prefix = day + SEPARATOR
    # A sum needs no order: the records are read as they are, not sorted as `live` does.
    for record in state.records.values():
        if record.kind != "spend" or record.deleted:
            continue
        if record.key == day or record.key.startswith(prefix):
            total = total + _spend(record.data)
    return total


def subject_spend(state: ServeState, subject: str) -> Spend:
    """The subject's lifetime spend, from its memory record (nothing recorded: none)."""
    record = state.get("memory", subject)
    if record is None:
        return Spend()
    try:
        return SubjectMemory.model_validate(record.data).spend
    except ValidationError:
        return Spend()


def record_spend(p: Pass, source: str, spend: Spend | None, at: datetime | None = None) -> None:
    """Add `spend` (of `source`: a result id, a decision id) to the spend of the day of `at`
    (default: today); recorded once per source, so an attempt settled again (recovery, with
    its own time) is not counted twice."""
    if spend is None or (spend.tokens == 0 and spend.cost_usd == 0):
        return
    day = day_of(at if at is not None else p.parts.clock())
    p.put("spend", f"{day}{SEPARATOR}{source}", "live", spend.model_dump())


__all__ = ["SEPARATOR", "day_of", "day_spend", "record_spend", "subject_spend"]
