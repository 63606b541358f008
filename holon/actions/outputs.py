"""The step's outputs (design table), every one written even when empty (pure)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from holon.actions.result import StepResult

NAMES = (
    "closure_outcome",
    "waiting_reason",
    "lifecycle_outcome",
    "runs",
    "comment_url",
    "handoff",
)


def outputs_of(result: StepResult) -> dict[str, str]:
    closure = result.closure
    outputs = {
        "closure_outcome": closure.closure_outcome if closure else "",
        "waiting_reason": (closure.waiting_reason or "") if closure else "",
        "lifecycle_outcome": (closure.lifecycle_outcome or "") if closure else "",
        "runs": json.dumps([run.as_dict() for run in result.runs], separators=(",", ":")),
        "comment_url": result.comment_url,
        "handoff": result.handoff.model_dump_json() if result.handoff is not None else "",
    }
    outputs.update(result.extra_outputs)
    return outputs


__all__ = ["NAMES", "outputs_of"]
