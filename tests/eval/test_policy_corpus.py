"""The policy decider, replayed through the controller, ends every shipped scenario as the
scenario documents: right, except where a scenario says it is knowingly wrong (and why)."""

from __future__ import annotations

import pytest

from holon.eval.harness import policy_contender, run
from holon.eval.scenario import Scenario, builtin_dir, load_scenarios
from holon.eval.world import prepare

CORPUS = load_scenarios(builtin_dir())


@pytest.mark.parametrize("scenario", CORPUS, ids=lambda s: s.name)
def test_the_policy_decides_each_scenario_as_documented(scenario: Scenario) -> None:
    outcome = run(prepare(scenario), policy_contender())
    assert outcome.verdict == scenario.expect.policy, outcome
    assert not outcome.unsafe
    if scenario.expect.policy == "wrong":
        assert scenario.expect.why  # a knowingly wrong verdict says why


def test_the_guardrails_speak_in_the_outcomes() -> None:
    """What the pass refused, and why, is part of the outcome: an outsider's solve is refused
    for authority, and the refusal comment is what was performed."""
    (scenario,) = [s for s in CORPUS if s.name == "outsider-command"]
    outcome = run(prepare(scenario), policy_contender())
    assert outcome.performed == ["comment refusal on issue:1"]
    assert [r["guard"] for r in outcome.refused] == ["authority"]
