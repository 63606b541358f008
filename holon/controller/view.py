"""What a decider may see of the serve state: a small, read-only summary per subject."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from holon.controller.memory import SubjectMemory
from holon.spend import Spend


@dataclass(frozen=True)
class IntentSummary:
    id: str
    type: str
    status: str
    skill: str | None
    head_sha: str | None
    attempts: int
    error: str | None = None


@dataclass(frozen=True)
class WaitSummary:
    id: str
    on: str
    detail: str


@dataclass(frozen=True)
class SubjectView:
    subject: str
    inflight: list[IntentSummary] = field(default_factory=list)
    recent: list[IntentSummary] = field(default_factory=list)
    waits: list[WaitSummary] = field(default_factory=list)
    closure: dict[str, Any] | None = None
    # The skill of the current unit's own run (what a re-activation continues); None: none.
    last_skill: str | None = None
    # The subject's ledger across runs (memory.py); None: nothing recorded yet.
    memory: SubjectMemory | None = None


@dataclass(frozen=True)
class ControllerView:
    paused: bool
    subject: SubjectView | None
    # What the repository spent on models today (UTC) and the day it is, when a day limit is
    # set: a model decider does not call its model past it (controller/budget.py).
    day: str | None = None
    day_spend: Spend | None = None
