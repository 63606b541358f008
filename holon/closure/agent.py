"""Agent-level state over several turns and tasks (Result Closure RFC, "Semantics By Layer").

Each unit closes on its own; the agent reports the latest settled posture of its work: active
work still running, continuable, idle, waiting with explicit reasons, or failed needing recovery.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from holon.closure.derive import Closure
from holon.closure.evidence import WaitingReason

AgentState = Literal["active", "failed", "waiting", "continuable", "idle"]


class AgentSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    state: AgentState
    waiting_reasons: list[WaitingReason] = Field(default_factory=list)
    active: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list, description="Units needing recovery.")
    waiting: list[str] = Field(default_factory=list)
    continuable: list[str] = Field(default_factory=list)


def summarize_agent(closures: Iterable[Closure]) -> AgentSummary:
    """Summarize the latest closure of each unit (later entries for a unit replace earlier)."""
    latest: dict[str, Closure] = {}
    for closure in closures:
        latest[closure.unit] = closure
    active = sorted(u for u, c in latest.items() if c.runtime_posture == "active")
    failed = sorted(u for u, c in latest.items() if c.closure_outcome == "failed")
    waiting = sorted(u for u, c in latest.items() if c.closure_outcome == "waiting")
    continuable = sorted(u for u, c in latest.items() if c.closure_outcome == "continuable")
    reasons = sorted({c.waiting_reason for c in latest.values() if c.waiting_reason is not None})
    # Running work is what an operator sees first; then what needs recovery, then what waits.
    state: AgentState
    if active:
        state = "active"
    elif failed:
        state = "failed"
    elif waiting:
        state = "waiting"
    elif continuable:
        state = "continuable"
    else:
        state = "idle"
    return AgentSummary(
        state=state,
        waiting_reasons=reasons,
        active=active,
        failed=failed,
        waiting=waiting,
        continuable=continuable,
    )
