"""A run's own budgets: the spec's token and cost limits stop the builtin engine, and the run
ends needs_human (the operator decides), its question naming the figure and how to continue;
never a failure, never a success. Driven through the agent's main with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from holon.agent.conversation import ModelTurn, ToolCall, Usage
from holon.agent.engines import registry
from holon.agent.engines.builtin import BuiltinEngine
from holon.agent.main import Options, run_agent
from holon.agent.providers.scripted import ScriptedProvider
from tests.agent.fakes import KEY, SPEC, make_layout

CONSTRAINTS = """\
  max_tokens: {tokens}
  max_cost_usd: {cost}
  prices:
    "claude-*": {{input_per_mtok: 3, output_per_mtok: 15}}
"""


def shell_turn(number: int, input_tokens: int, output_tokens: int = 0) -> ModelTurn:
    call = ToolCall(id=f"c{number}", name="shell", arguments={"command": "true"})
    return ModelTurn(
        tool_calls=[call],
        stop_reason="tool_use",
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
    )


def run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, turns: list[ModelTurn], tokens: Any, cost: Any
) -> tuple[int, dict[str, Any], ScriptedProvider]:
    provider = ScriptedProvider(turns, model="claude-test-1")

    def factory(env: Mapping[str, str], model: str | None) -> BuiltinEngine:
        return BuiltinEngine(provider, "fake")

    monkeypatch.setitem(registry.FACTORIES, "fake", factory)
    spec = SPEC.format(skills="") + CONSTRAINTS.format(tokens=tokens, cost=cost)
    layout = make_layout(tmp_path, spec=spec)
    code = run_agent(Options(engine="fake"), layout.env(ANTHROPIC_API_KEY=KEY), harden=False)
    manifest = json.loads((layout.output / "manifest.json").read_text())
    return code, manifest, provider


def test_the_run_token_budget_ends_the_run_asking_the_operator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [shell_turn(n, 600) for n in range(5)]
    code, manifest, provider = run(tmp_path, monkeypatch, turns, 1000, "null")
    assert len(provider.requests) == 2  # 600, then 1,200 of 1,000: no third request
    assert code == 2
    assert (manifest["status"], manifest["outcome"]) == ("completed", "needs_human")
    assert manifest["metadata"]["stop"] == "token_budget"
    question = manifest["question"]
    assert question["id"] == "budget"
    assert "the run spent 1,200 of 1,000 tokens ($0.00)" in question["text"]
    assert "`settings.budgets.run_tokens`" in question["text"]
    assert "`/holon solve`" in question["text"]
    assert "error" not in manifest


def test_the_run_cost_budget_stops_before_the_request_that_would_pass_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # $0.60 a request (200,000 input tokens at $3 per million): a second would pass $1.00.
    turns = [shell_turn(n, 200_000) for n in range(5)]
    code, manifest, provider = run(tmp_path, monkeypatch, turns, "null", 1.0)
    assert len(provider.requests) == 1
    assert code == 2
    assert manifest["outcome"] == "needs_human"
    assert manifest["metadata"]["stop"] == "cost_budget"
    text = manifest["question"]["text"]
    assert "the run spent $0.60 of $1.00 (200,000 tokens); its next request would pass it" in text
    assert "`settings.budgets.run_cost_usd`" in text


def test_output_tokens_count_at_their_own_price(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1,000 in + 70,000 out = $1.053 spent: past $1.00 whatever comes next.
    turns = [shell_turn(0, 1_000, 70_000), shell_turn(1, 10)]
    _, manifest, provider = run(tmp_path, monkeypatch, turns, "null", 1.0)
    assert len(provider.requests) == 1
    assert manifest["metadata"]["stop"] == "cost_budget"
    assert "the run spent $1.05 of $1.00 (71,000 tokens)." in manifest["question"]["text"]


def test_an_unpriced_model_is_held_to_its_token_budget_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = [shell_turn(n, 200_000) for n in range(3)]
    provider = ScriptedProvider(turns, model="llama-unpriced")

    def factory(env: Mapping[str, str], model: str | None) -> BuiltinEngine:
        return BuiltinEngine(provider, "fake")

    monkeypatch.setitem(registry.FACTORIES, "fake", factory)
    spec = SPEC.format(skills="") + CONSTRAINTS.format(tokens=450_000, cost=0.01)
    layout = make_layout(tmp_path, spec=spec)
    run_agent(Options(engine="fake"), layout.env(ANTHROPIC_API_KEY=KEY), harden=False)
    manifest = json.loads((layout.output / "manifest.json").read_text())
    assert len(provider.requests) == 3
    assert manifest["metadata"]["stop"] == "token_budget"
    assert manifest["outcome"] == "needs_human"
