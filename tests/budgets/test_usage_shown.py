"""Usage and cost where people look: the `usage` output (JSON per run and in total), a line and
a column in the step summary, a line in the handoff comment; and a run a spend limit held back
is answered in the handoff with the figure and how to continue."""

from __future__ import annotations

import json
from pathlib import Path

from holon.actions.result import RunRow, StepResult
from holon.actions.step_report import offline_handoff
from holon.actions.summary import render_summary
from holon.closure.handoff import render_handoff
from holon.serve.github_hooks import handoff_for, spend_limited
from holon.spend import Spend
from tests.budgets.test_controller_budgets import controller, memory
from tests.controller.conftest import comment_event

SOLVE = Spend(input_tokens=3000, output_tokens=600, cost_usd=0.018)
FIX = Spend(input_tokens=500, output_tokens=100, unpriced_tokens=600)


def step() -> StepResult:
    return StepResult(
        exit_code=0,
        subject="issue:1",
        runs=[
            RunRow("act_1", "github-issue-solve", "issue:1", "succeeded", "success", usage=SOLVE),
            RunRow("act_2", "github-pr-fix", "pull_request:2", "succeeded", "success", usage=FIX),
            RunRow("act_3", "github-publish", "issue:1", "succeeded"),
        ],
    )


def test_the_usage_output_has_the_total_and_each_run() -> None:
    usage = json.loads(step().outputs["usage"])
    assert {k: usage[k] for k in ("tokens", "cost_usd", "unpriced_tokens")} == {
        "tokens": 4200,
        "cost_usd": 0.018,
        "unpriced_tokens": 600,
    }
    assert [(r["intent"], r["tokens"], r["cost_usd"]) for r in usage["runs"]] == [
        ("act_1", 3600, 0.018),
        ("act_2", 600, 0.0),
    ]
    assert usage["runs"][1]["unpriced_tokens"] == 600
    assert StepResult(exit_code=0).outputs["usage"] == ""


def test_the_summary_shows_the_usage() -> None:
    text = render_summary(step())
    # Markdown-escaped as every value in the summary is.
    assert "Model usage: 4,200 tokens \\($0\\.02, 600 tokens unpriced\\)" in text
    assert "| skill | subject | status | outcome | usage | output |" in text
    assert "| success | 3,600 tokens \\($0\\.02\\) |" in text


def test_the_handoff_comment_shows_the_usage(tmp_path: Path) -> None:
    ctl, _ = controller(tmp_path, "{}")
    report = ctl.handle(comment_event("/holon solve", number=1))
    (intent,) = [i for i in report.intents if i.type == "run_skill"]
    handoff = handoff_for(intent, report.closures["issue:1"], None, "holon", SOLVE)
    assert "model usage: 3,600 tokens ($0.02)" in handoff.recorded
    assert "model usage\\: 3,600 tokens \\($0\\.02\\)" in render_handoff(handoff)
    assert "model usage: 3,600 tokens ($0.02)" in render_handoff(handoff, "text")


def test_a_run_held_back_by_a_limit_is_answered_with_the_figure(tmp_path: Path) -> None:
    ctl, _ = controller(tmp_path, "{subject_tokens: 10}", None)
    ctl.state.put(memory("issue:4", Spend(input_tokens=11)))
    report = ctl.handle(comment_event("/holon solve", number=4))
    assert spend_limited(report) == ["issue:4"]
    result = StepResult(exit_code=0, subject="issue:4", closures=dict(report.closures))
    handoff = offline_handoff([report], "issue:4", result, workflow="holon")
    assert handoff is not None
    assert handoff.headline == "operator_decision"
    assert handoff.next is not None
    assert "issue:4 spent 11 of 10 tokens ($0.00)" in handoff.next.action
    assert "`settings.budgets.subject_tokens`" in render_handoff(handoff, "text")
