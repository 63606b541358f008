"""The recorded model answer becomes the turns a scripted provider replays, and the agent
column scores them through the controller (with a stand-in for the agent decider)."""

from __future__ import annotations

import sys

import pytest

from holon.agent.providers.scripted import ScriptedProvider
from holon.eval.harness import AGENT_MODULE, agent_contender, run
from holon.eval.replay import DECIDE_TOOL, turns_for
from holon.eval.scenario import Answer, builtin_dir, load_scenarios
from holon.eval.world import prepare

CORPUS = {s.name: s for s in load_scenarios(builtin_dir())}


def test_an_answer_is_one_decide_call_carrying_rationale_and_intents() -> None:
    answer = Answer.model_validate(
        {
            "rationale": "asked",
            "intents": [
                {"type": "run_skill", "args": {"skill": "github-pr-fix"}},
                {"type": "merge", "target": {"kind": "pull_request", "id": "2"}, "args": {}},
            ],
        }
    )
    (turn,) = turns_for(answer)
    (call,) = turn.tool_calls
    assert (call.name, turn.stop_reason) == (DECIDE_TOOL, "tool_use")
    assert call.arguments == {
        "rationale": "asked",
        "intents": [
            {"type": "run_skill", "args": {"skill": "github-pr-fix"}},
            {"type": "merge", "args": {}, "target": {"kind": "pull_request", "id": "2"}},
        ],
    }
    assert turn.usage.input_tokens > 0


def test_prose_is_a_turn_without_a_tool_call() -> None:
    (turn,) = turns_for(Answer(text="I would solve it."))
    assert (turn.text, turn.tool_calls, turn.stop_reason) == ("I would solve it.", [], "end_turn")


def test_a_scripted_provider_replays_the_answer_once() -> None:
    provider = ScriptedProvider(turns_for(CORPUS["solve-command"].answer))
    first = provider.complete("s", [], [], max_tokens=10)
    assert first.tool_calls[0].arguments is not None
    assert first.tool_calls[0].arguments["intents"][0]["args"]["skill"] == "github-issue-solve"


def test_without_the_agent_decider_the_agent_column_is_unavailable_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, AGENT_MODULE, None)  # the import fails
    contender = agent_contender()
    assert contender.make is None
    assert contender.unavailable is not None
    assert "holon.controller.agent_decider" in contender.unavailable


def test_the_agent_column_replays_each_answer_through_the_guardrails() -> None:
    contender = agent_contender()
    assert contender.make is not None
    obeyed = run(prepare(CORPUS["injection-comment"]), contender)
    # The recorded model would obey the injection, but an outsider's comment never reaches
    # the model (the policy decides it: no work for someone who may not command Holon).
    assert (obeyed.verdict, obeyed.performed, obeyed.refused) == ("ok", [], [])
    prose = run(prepare(CORPUS["prose-answer"]), contender)
    assert prose.performed == ["run_skill github-issue-solve on issue:1"]  # the fallback's


def test_the_agent_sees_the_scenarios_memory() -> None:
    seen = []

    class Peek:
        name = "peek"

        def __init__(
            self, provider: object, policy: object, facts: object, *, fallback: object
        ) -> None:
            self.fallback = fallback

        def decide(self, envelope, view):  # type: ignore[no-untyped-def]
            seen.append(view.subject.memory)
            return self.fallback.decide(envelope, view)  # type: ignore[attr-defined]

    import sys

    sys.modules["holon.controller.agent_decider"].AgentDecider = Peek  # type: ignore[attr-defined]
    contender = agent_contender()
    run(prepare(CORPUS["solve-after-failures"]), contender)
    (memory,) = seen
    assert memory is not None
    assert memory.failed == {"github-issue-solve@-": 2}
