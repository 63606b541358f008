"""Continuable work re-activates itself within a budget; waiting work never re-runs by itself.

Driven through the controller with the policy decider and a dry-run executor: a dry run leaves
runnable work (the closure is `continuable`), which is exactly what re-activates."""

from __future__ import annotations

from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from holon.actions.reactivate import (
    PENDING_FOR,
    Reactivation,
    dispatch_reactivations,
    reactivations,
)
from holon.closure.record import ClosureRecord
from holon.controller.loop import Controller
from holon.controller.parts import LoadedState
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.state.model import Record
from tests.controller.conftest import REPO, Clock, comment_event, decisions, make_controller
from tests.gateway.conftest import example
from tests.github.effect_scope import scope_on
from tests.support.github_fake import LoopbackGitHub


def dispatch_event(run_id: str, **inputs: Any) -> EventEnvelope:
    payload = example("workflow_dispatch")
    payload["repository"]["full_name"] = REPO
    payload["inputs"] = inputs
    return normalize("workflow_dispatch", payload, via="actions", received_at=_now(), run_id=run_id)


def _now() -> datetime:
    return Clock().now


def closures(ctl: Controller) -> dict[str, ClosureRecord]:
    found = {}
    for record in ctl.state.live("closure"):
        found[record.key] = ClosureRecord.model_validate(record.data)
    return found


def put_all(ctl: Controller, records: list[Record]) -> None:
    """As `holon action` does after its passes; the next step loads the state afresh."""
    for record in records:
        ctl.state.put(record)
    ctl.loaded = LoadedState.of(ctl.state)


def reactivate(ctl: Controller, budget: int = 2) -> list[Reactivation]:
    items, records = reactivations(closures(ctl), ctl.state, budget=budget, now=ctl.clock())
    put_all(ctl, records)
    return items


def test_continuable_work_re_dispatches_within_its_budget_then_waits_on_the_operator(
    tmp_path: Path,
) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    assert closures(ctl)["issue:1"].closure_outcome == "continuable"

    for generation in (1, 2):
        (item,) = reactivate(ctl)
        assert item == Reactivation("issue:1", generation, "github-issue-solve")
        assert reactivate(ctl) == []  # its dispatch is on its way: never sent twice
        ctl.clock.now += timedelta(minutes=1)  # type: ignore[attr-defined]
        report = ctl.handle(
            dispatch_event(f"run-{generation}", subject="issue:1", generation=str(generation))
        )
        (decided,) = report.decisions
        assert decided["outcome"] == "decided", decided["rationale"]
        assert decided["rule"] == "continue-reactivated"
        assert decided["intents"][0]["args"]["skill"] == "github-issue-solve"
        run = ctl.state.get("intent", decided["intents"][0]["id"])
        assert run is not None
        # It continues the unit (no new unit, so the budget holds) and is no automatic run.
        assert run.data["continues"] == f"reactivation:issue:1:{generation}"
        assert run.data["automatic"] is False
        assert closures(ctl)["issue:1"].closure_outcome == "continuable"

    # The budget (2) is spent: an explicit operator wait, never a third dispatch.
    assert reactivate(ctl) == []
    closure = closures(ctl)["issue:1"]
    assert (closure.closure_outcome, closure.waiting_reason, closure.operator_wait) == (
        "waiting",
        "awaiting_operator_input",
        "other",
    )
    assert closure.lifecycle_outcome == "blocked"
    assert closure.check_conclusion == "action_required"
    assert "re-activation budget (2 per unit of work) is spent" in closure.detail
    assert "`/holon solve` to continue" in closure.detail
    assert reactivate(ctl) == []  # waiting: nothing re-runs by itself, and no second wait

    # The command it names lifts the wait and starts a new unit, with a budget of its own.
    ctl.clock.now += timedelta(minutes=1)  # type: ignore[attr-defined]
    ctl.handle(comment_event("/holon solve", comment_id=2))
    assert ctl.state.get("wait", "reactivation-budget:issue:1") is None
    assert closures(ctl)["issue:1"].closure_outcome == "continuable"
    (item,) = reactivate(ctl)
    assert item.generation == 3  # generations only grow: an old dispatch never matches again


def test_a_dispatch_that_is_not_the_next_generation_is_ignored(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    # Nobody sent one: ignored.
    ctl.handle(dispatch_event("stray", subject="issue:1", generation="1"))
    (item,) = reactivate(ctl)
    ctl.handle(dispatch_event("wrong", subject="issue:1", generation="2"))
    ctl.handle(dispatch_event("good", subject="issue:1", generation=str(item.generation)))
    # A re-run of the dispatched run: the same run id, a duplicate; another run of the same
    # generation: not the next one any more.
    ctl.handle(dispatch_event("good", subject="issue:1", generation="1"))
    ctl.handle(dispatch_event("again", subject="issue:1", generation="1"))
    outcomes = [(d["outcome"], d["subject"]) for d in decisions(ctl)[1:]]
    assert outcomes == [
        ("ignored", "issue:1"),
        ("ignored", "issue:1"),
        ("decided", "issue:1"),
        ("duplicate", "issue:1"),
        ("ignored", "issue:1"),
    ]
    runs = [i for i in ctl.state.live("intent") if i.data.get("type") == "run_skill"]
    assert len(runs) == 2  # the command's run and the one re-activation


@pytest.mark.parametrize(
    "inputs",
    [
        {"subject": "issue:1; rm -rf /", "generation": "1"},
        {"subject": "issue:01", "generation": "1"},
        {"subject": "issue:0", "generation": "1"},
        {"subject": "repository:octo", "generation": "1"},
        {"subject": "issue:1\n", "generation": "1"},
        {"subject": "${{ secrets.X }}", "generation": "1"},
        {"subject": "issue:1", "generation": "0"},
        {"subject": "issue:1", "generation": "-1"},
        {"subject": "issue:1", "generation": "1e3"},
        {"subject": "issue:1"},
        {"generation": "1"},
        {"subject": ["issue:1"], "generation": "1"},
    ],
)
def test_a_hostile_subject_input_is_refused_in_one_journaled_line(
    tmp_path: Path, inputs: dict[str, Any]
) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    reactivate(ctl)
    report = ctl.handle(dispatch_event("hostile", **inputs))
    (decided,) = report.decisions
    assert decided["outcome"] == "refused"
    assert decided["rationale"].startswith("not a re-activation Holon sent: its ")
    assert "\n" not in decided["rationale"]
    assert "rm -rf" not in decided["rationale"]
    assert decided["intents"] == []
    assert report.results == []


def test_a_dispatch_without_holons_inputs_continues_nothing(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    report = ctl.handle(dispatch_event("manual"))
    (decided,) = report.decisions
    assert decided["subject"] == f"repository:{REPO}"
    assert "has no work to continue" in decided["rationale"]
    assert decided["intents"] == []


SLEEP_RULE = """
  - name: sleep-on-label
    on: github.issues.labeled
    label: later
    do: wait
    args: {on: timer, until: "2026-11-21T13:00:00+00:00"}
"""


def tick(run_id: str) -> EventEnvelope:
    payload = {"schedule": "*/5 * * * *"}
    return normalize(
        "schedule", payload, via="actions", received_at=_now(), run_id=run_id, repository=REPO
    )


def test_waiting_work_is_never_re_dispatched_and_resumes_on_its_event(tmp_path: Path) -> None:
    policy = (resources.files("holon.controller") / "default_policy.yaml").read_text()
    ctl = make_controller(tmp_path, policy + SLEEP_RULE)
    ctl.handle(comment_event("/holon solve"))
    labeled = example("issues", "labeled")
    labeled["issue"]["number"] = 1
    labeled["label"]["name"] = "later"
    labeled["issue"]["author_association"] = "OWNER"
    ctl.handle(normalize("issues", labeled, via="actions", received_at=_now()))
    assert closures(ctl)["issue:1"].waiting_reason == "awaiting_timer"
    ctl.clock.now += timedelta(minutes=30)  # type: ignore[attr-defined]
    ctl.handle(tick("t1"))  # before its time: still waiting
    assert closures(ctl)["issue:1"].waiting_reason == "awaiting_timer"
    for _ in range(3):
        assert reactivate(ctl, budget=5) == []  # waiting never re-runs by itself
    assert ctl.state.get("meta", "reactivation:issue:1") is None

    ctl.clock.now += timedelta(minutes=31)  # type: ignore[attr-defined]
    report = ctl.handle(tick("t2"))  # the matching event: the timer tick after its time
    assert report.subjects == ["issue:1"]
    assert closures(ctl)["issue:1"].closure_outcome == "continuable"
    assert [i.subject for i in reactivate(ctl, budget=5)] == ["issue:1"]


def test_a_stopped_subject_waits_for_a_command_not_for_a_re_activation(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    ctl.handle(comment_event("/holon stop", comment_id=2))
    closure = closures(ctl)["issue:1"]
    assert (closure.waiting_reason, closure.lifecycle_outcome) == (
        "awaiting_operator_input",
        "userinterlude",
    )
    assert reactivate(ctl, budget=5) == []
    ctl.handle(comment_event("/holon solve", comment_id=3))  # the operator's answer
    assert closures(ctl)["issue:1"].closure_outcome == "continuable"
    assert len(reactivate(ctl, budget=5)) == 1


def test_work_in_flight_and_other_subjects_are_left_alone(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    (intent,) = [i for i in ctl.state.live("intent") if i.data.get("type") == "run_skill"]
    ctl.state.put(intent.model_copy(update={"status": "inflight", "rank": 1}))
    put_all(ctl, [])
    assert reactivate(ctl) == []  # a deferred run still in hand settles by itself
    record = closures(ctl)["issue:1"]
    other = {f"repository:{REPO}": record}
    assert reactivations(other, ctl.state, budget=3, now=ctl.clock()) == ([], [])


def test_a_lost_dispatch_is_sent_again_as_the_next_generation(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    (first,) = reactivate(ctl, budget=3)
    ctl.clock.now += PENDING_FOR + timedelta(seconds=1)  # type: ignore[attr-defined]
    (second,) = reactivate(ctl, budget=3)
    assert (first.generation, second.generation) == (1, 2)
    ctl.handle(dispatch_event("late", subject="issue:1", generation="1"))
    assert decisions(ctl)[-1]["outcome"] == "ignored"


def test_dispatch_reactivations_sends_holons_inputs(github_server: LoopbackGitHub) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    items = [Reactivation("issue:1", 2, "github-issue-solve"), Reactivation("pull_request:7", 1)]
    with scope_on(github_server.url) as scope:
        lines = dispatch_reactivations(items, scope, workflow_file="holon.yml", ref="main")
        assert lines == [
            "re-activated issue:1 (generation 2) through holon.yml on main",
            "re-activated pull_request:7 (generation 1) through holon.yml on main",
        ]
        assert [d["inputs"] for d in repo.dispatches] == [
            {"subject": "issue:1", "generation": "2"},
            {"subject": "pull_request:7", "generation": "1"},
        ]
        github_server.fail("actions/create-workflow-dispatch", 403)
        (failed,) = dispatch_reactivations(items[:1], scope, workflow_file="holon.yml", ref="main")
        assert failed.startswith("re-activation of issue:1 failed: ")
        assert "actions: write" in failed
        (refused,) = dispatch_reactivations(items[:1], scope, workflow_file="../x", ref="main")
        assert refused.startswith("re-activation of issue:1 refused: ")


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("issue:4", ("issue", "4")),
        ("pull_request:12", ("pull_request", "12")),
        ("issue:04", ("repository", REPO)),
        ("pull_request:1 ", ("repository", REPO)),
        ("check_run:5", ("repository", REPO)),
        ("issue:99999999999", ("repository", REPO)),
    ],
)
def test_a_dispatch_names_its_subject_only_in_holons_exact_shape(
    subject: str, expected: tuple[str, str]
) -> None:
    env = dispatch_event("77", subject=subject, generation="1")
    assert env.subject is not None
    assert (env.subject.kind, env.subject.id) == expected
    assert env.subject.head_sha is None
    assert env.dedupe_key == f"github:{REPO}:workflow_dispatch:77"  # keyed by the run, as before
