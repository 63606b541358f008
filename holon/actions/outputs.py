"""The step's outputs (design table), every one written even when empty (pure)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holon.actions.result import StepResult
    from holon.spend import Spend

NAMES = (
    "closure_outcome",
    "waiting_reason",
    "lifecycle_outcome",
    "runs",
    "comment_url",
    "handoff",
    "usage",
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
        "usage": usage_json(result),
    }
    outputs.update(result.extra_outputs)
    return outputs


def _spent(spend: Spend) -> dict[str, Any]:
    return {
        "tokens": spend.tokens,
        "input_tokens": spend.input_tokens,
        "output_tokens": spend.output_tokens,
        "cost_usd": spend.cost_usd,
        "unpriced_tokens": spend.unpriced_tokens,
    }


def usage_json(result: StepResult) -> str:
    """The `usage` output: the step's model spend in total and per run (docs/budgets.md);
    empty when no run reported any. `cost_usd` counts priced tokens only."""
    total = result.usage
    if total is None:
        return ""
    runs = [
        {"intent": run.intent, "skill": run.skill, "subject": run.subject, **_spent(run.usage)}
        for run in result.runs
        if run.usage is not None
    ]
    return json.dumps({**_spent(total), "runs": runs}, separators=(",", ":"))


__all__ = ["NAMES", "outputs_of", "usage_json"]
