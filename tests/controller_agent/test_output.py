"""Reading a model's answer strictly (decider_output.py): every shape that is not one decision
says what is wrong, in one bounded line the repair request repeats."""

from __future__ import annotations

import pytest

from holon.agent.conversation import ModelTurn, ToolCall
from holon.controller.decider_output import Invalid, Proposals, read_decision
from holon.controller.facts import StaticFacts
from holon.secrets import Redactor
from tests.controller.conftest import comment_event
from tests.controller_agent.conftest import decide

ENV = comment_event("please")
LABEL = {"type": "label", "args": {"label": "x"}}


def _call(name: str, arguments: dict[str, object] | None, call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments="{oops")


@pytest.mark.parametrize(
    ("turn", "problem"),
    [
        (ModelTurn(text=""), "the answer was empty"),
        (ModelTurn(text="Sure! I'll label it."), "the answer was prose"),
        (ModelTurn(text='{"rationale": "x", "intents": ['), "the answer was malformed JSON"),
        (ModelTurn(text="[1, 2]"), "JSON but not an object"),
        (ModelTurn(text='{"rationale": "x"}', stop_reason="max_tokens"), "cut off"),
        (ModelTurn(tool_calls=[_call("shell", {"cmd": "id"})]), "unknown tool shell"),
        (ModelTurn(tool_calls=[_call("decide", None)]), "not a JSON object"),
        (
            ModelTurn(tool_calls=[_call("decide", {}, "a"), _call("decide", {}, "b")]),
            "called 2 times",
        ),
        (ModelTurn(text='{"intents": []}'), "rationale: Field required"),
        (ModelTurn(text='{"rationale": "x", "intents": [], "also": 1}'), "also: Extra inputs"),
        (
            decide("x", *([LABEL] * 21)),
            "intents: List should have at most 20 items",
        ),
        (decide("x", {"type": "merge", "args": {"sha": "nope"}}), "merge args: sha"),
        (
            decide("x", {"type": "run_skill", "args": {"skill": "github-deploy"}}),
            "unknown skill 'github-deploy'",
        ),
        (
            decide("x", {**LABEL, "target": {"kind": "issue", "id": "1; rm -rf /"}}),
            "intents.0.target.id",
        ),
    ],
)
def test_what_is_not_a_decision_says_why(turn: ModelTurn, problem: str) -> None:
    read = read_decision(turn, ENV, StaticFacts(), Redactor(), {"github-issue-solve"})
    assert isinstance(read, Invalid)
    assert problem in read.problem
    assert len(read.problem) <= 300


def test_a_run_gets_the_events_subject_and_head_not_the_models() -> None:
    run = {
        "type": "run_skill",
        "args": {"skill": "github-issue-solve", "head_sha": "b" * 40, "inputs": {"issue": "99"}},
    }
    read = read_decision(decide("x", run), ENV, StaticFacts(), Redactor(), None)
    assert isinstance(read, Proposals)
    (proposal,) = read.proposals
    assert proposal.target.subject() == "issue:1"
    assert proposal.args == {"skill": "github-issue-solve", "inputs": {"issue": "1"}}
    assert proposal.reason == "agent: x"
