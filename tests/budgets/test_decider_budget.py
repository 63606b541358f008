"""The agent decider within the budgets (docs/budgets.md): its decisions' tokens are priced at
the policy's table, counted in the day's spend and the subject's memory; once the day's limit
is reached the model is not asked, and the policy decides (the fallback says why)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon.agent.providers.scripted import ScriptedProvider
from holon.controller.agent_decider import AgentDecider
from holon.controller.decide import PolicyDecider
from holon.controller.loop import Controller
from holon.controller.spending import day_of, day_spend, subject_spend
from tests.budgets.test_controller_budgets import controller
from tests.controller.conftest import comment_event
from tests.controller_agent.conftest import decide

LABEL = {"type": "label", "args": {"label": "triaged"}}


def with_agent(ctl: Controller, turns: int) -> ScriptedProvider:
    model = ScriptedProvider([decide("Triage it.", LABEL) for _ in range(turns)], "claude-test")
    policy, facts = ctl.parts.policy, ctl.parts.facts
    ctl.parts.decider = AgentDecider(model, policy, facts, fallback=PolicyDecider(policy, facts))
    return model


def decisions(ctl: Controller) -> list[dict[str, Any]]:
    return list(ctl.journals.decisions.read())


def test_a_model_decision_is_priced_and_counted_for_the_day_and_the_subject(
    tmp_path: Path,
) -> None:
    ctl, _ = controller(tmp_path, "{day_tokens: 100000}")
    with_agent(ctl, 1)
    ctl.handle(comment_event("Could someone look at this?", number=7))
    (decision,) = decisions(ctl)
    assert decision["decider"] == "agent"
    # 1200 in at $3 and 80 out at $15 per million tokens ("claude-*" in the policy's table)
    assert decision["usage"] == {
        "input_tokens": 1200,
        "output_tokens": 80,
        "cost_usd": 0.0048,
        "unpriced_tokens": 0,
    }
    today = day_spend(ctl.state, day_of(ctl.parts.clock()))
    assert (today.tokens, today.cost_usd) == (1280, 0.0048)
    assert subject_spend(ctl.state, "issue:7").tokens == 1280


def test_past_the_days_limit_the_model_is_not_asked_and_the_policy_decides(
    tmp_path: Path,
) -> None:
    ctl, _ = controller(tmp_path, "{day_tokens: 1000}")
    model = with_agent(ctl, 2)
    ctl.handle(comment_event("Could someone look at this?", number=7))
    ctl.handle(comment_event("And this one?", number=8, comment_id=2))
    first, second = decisions(ctl)
    assert first["decider"] == "agent"
    assert len(model.requests) == 1  # the second event never reached the model
    assert second["decider"] == "policy"
    assert "the model is not asked" in second["fallback"]
    assert "1,280 of 1,000 tokens" in second["fallback"]
