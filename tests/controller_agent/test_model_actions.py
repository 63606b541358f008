"""`settings.decider_actions`: what a model decider may do at all. Closing issues and dispatching
workflows are left out by default (text the model reads could otherwise close the issue or start
a workflow through it); a policy may list them, and the model is offered only what is listed."""

from __future__ import annotations

from pathlib import Path

from tests.controller.conftest import comment_event, decisions
from tests.controller_agent.conftest import agent_controller, decide

CLOSE = {"type": "close_issue", "args": {"reason": "completed"}}
LABEL = {"type": "label", "args": {"label": "triaged"}}
ALLOWING = """\
version: 1
settings:
  decider_actions: [close_issue, label]
rules: []
"""


def actions_offered(system: str) -> list[str]:
    """The action names the system prompt lists under its actions heading."""
    section = system.split("# The actions you may propose", 1)[1].split("\n# ", 1)[0]
    return [line[2:].split(":", 1)[0] for line in section.splitlines() if line.startswith("- ")]


def test_by_default_a_model_cannot_close_an_issue_but_its_other_intents_stand(
    tmp_path: Path,
) -> None:
    ctl, model = agent_controller(tmp_path, [decide("The issue says it is done.", CLOSE, LABEL)])
    report = ctl.handle(comment_event("This is done now, close it."))
    assert [i.type for i in report.intents] == ["label"]
    (decision,) = decisions(ctl)
    assert [(r["type"], r["guard"]) for r in decision["refused"]] == [
        ("close_issue", "model_actions")
    ]
    assert "settings.decider_actions" in decision["refused"][0]["reason"]
    ((system, _),) = model.requests
    offered = actions_offered(system)
    assert "close_issue" not in offered
    assert "dispatch" not in offered
    assert "run_skill" in offered


def test_a_policy_that_lists_it_lets_the_model_close_and_offers_only_what_it_lists(
    tmp_path: Path,
) -> None:
    ctl, model = agent_controller(tmp_path, [decide("Done.", CLOSE, LABEL)], policy_text=ALLOWING)
    report = ctl.handle(comment_event("This is done now, close it."))
    assert sorted(i.type for i in report.intents) == ["close_issue", "label"]
    ((system, _),) = model.requests
    assert sorted(actions_offered(system)) == ["close_issue", "label"]
