"""`settings.intents_per_pass`: more intents decided for one event are held (not refused), each
journaled with why, for the next pass that continues the subject (the `holon action` input
intents_per_pass sets it; tests/controller/test_held_intents.py has the continuation)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from holon.controller.decide import Decision, Proposal
from holon.controller.policy import Settings, parse_policy
from holon.intent import Target
from tests.controller.conftest import REPO, comment_event, decisions, make_controller


class Greedy:
    name = "greedy"

    def decide(self, envelope: Any, view: Any) -> Decision:
        target = Target(repo=REPO, kind="issue", id="1")
        proposals = [Proposal("label", target, {"label": f"l{i}"}, "many") for i in range(4)]
        return Decision(self.name, "four labels", None, proposals)


def test_intents_beyond_the_limit_are_held_and_journaled(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path, "version: 1\nsettings: {intents_per_pass: 3}\nrules: []\n")
    ctl.parts.decider = Greedy()
    ctl.handle(comment_event("/holon solve"))
    decision, held = decisions(ctl)
    assert [i["args"]["label"] for i in decision["intents"]] == ["l0", "l1", "l2"]
    assert decision["refused"] == []
    assert held["outcome"] == "held"
    assert [i["args"]["label"] for i in held["intents"]] == ["l3"]
    assert "more than 3 intents for one event" in held["rationale"]


def test_the_default_is_five_and_a_policy_without_it_still_loads() -> None:
    assert Settings().intents_per_pass == 5
    policy = parse_policy("version: 1\nsettings: {budget: 3}\nrules: []\n")
    assert policy.settings.intents_per_pass == 5
    with pytest.raises(ValidationError):
        Settings(intents_per_pass=0)
