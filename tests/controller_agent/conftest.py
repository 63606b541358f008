"""Driving the agent decider through the real controller pass, with a scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon.agent.conversation import ModelTurn, ToolCall, Usage
from holon.agent.providers.scripted import ScriptedProvider
from holon.controller.agent_decider import AgentDecider
from holon.controller.decide import PolicyDecider
from holon.controller.loop import Controller
from tests.controller.conftest import make_controller


def decide(rationale: str, *intents: dict[str, Any], call_id: str = "c1") -> ModelTurn:
    """A turn calling the `decide` tool."""
    return ModelTurn(
        tool_calls=[
            ToolCall(
                id=call_id,
                name="decide",
                arguments={"rationale": rationale, "intents": list(intents)},
            )
        ],
        stop_reason="tool_use",
        usage=Usage(input_tokens=1200, output_tokens=80),
        model="claude-test",
    )


def prose(text: str = "I think Holon should probably solve this issue.") -> ModelTurn:
    return ModelTurn(text=text, usage=Usage(input_tokens=1000, output_tokens=20))


def agent_controller(
    tmp_path: Path, turns: list[ModelTurn], policy_text: str | None = None, **facts: Any
) -> tuple[Controller, ScriptedProvider]:
    """The controller of tests/controller with the agent decider, its fallback the policy."""
    ctl = make_controller(tmp_path, policy_text, **facts)
    provider = ScriptedProvider(turns, model="claude-test")
    policy, known = ctl.parts.policy, ctl.parts.facts
    ctl.parts.decider = AgentDecider(provider, policy, known, fallback=PolicyDecider(policy, known))
    return ctl, provider
