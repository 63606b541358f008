"""The merge guardrail through the controller (docs/policy.md, "Guardrails"): a policy proposes a
merge for every event, and the guard lets it through only when the policy allows merging, the
target is a pull request, and that pull request is known to be approved, freshly, at the sha to
merge, with green required checks. Each refusal is journaled with its reason and reaches no
executor; when everything holds, the merge is performed (dry run) and journaled."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.controller.facts import PullFacts
from holon.controller.loop import Controller
from holon.executor.executor import build_executor
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import ActionIntent
from holon.state.model import Record
from tests.controller.conftest import REPO, actions, decisions, make_controller
from tests.gateway.conftest import example

# The pull request of GitHub's pull_request_review example: its number and head sha.
NUMBER = example("pull_request_review", "submitted")["pull_request"]["number"]
SHA = example("pull_request_review", "submitted")["pull_request"]["head"]["sha"]
OTHER_SHA = "f" * 40
BASE = example("pull_request_review", "submitted")["pull_request"]["base"]["ref"]
GOOD = PullFacts(
    approved=True,
    stale=False,
    head_sha=SHA,
    head_ref="holon/issue-1",
    same_repo=True,
    base_ref=BASE,
)


def _policy(*, allow_merge: bool) -> str:
    # No `setting: allow_merge` condition: the rule proposes a merge either way, so it is the
    # guardrail, not the rule, that must hold back a merge the settings do not allow.
    return (
        f"version: 1\nsettings: {{allow_merge: {str(allow_merge).lower()}}}\nrules:\n"
        f"  - name: merge-everything\n    do: merge\n    args: {{sha: '{SHA}'}}\n"
    )


def _event(event: str, action: str) -> EventEnvelope:
    payload = example(event, action)
    if event == "pull_request_review":
        payload["review"]["state"] = "approved"
    return normalize(event, payload, via="replay", received_at=datetime.now(UTC))


@dataclass(frozen=True)
class Case:
    reason: str
    allow_merge: bool = True
    event: tuple[str, str] = ("pull_request_review", "submitted")
    pull: PullFacts | None = GOOD
    green: dict[str, bool] = field(default_factory=lambda: {SHA: True})


REFUSALS = {
    "policy_does_not_allow_merging": Case("the policy does not allow merging", allow_merge=False),
    "target_is_an_issue": Case("merge needs a pull request target", event=("issues", "opened")),
    "target_is_a_check_suite": Case(
        "merge needs a pull request target", event=("check_suite", "completed")
    ),
    "pull_request_facts_unknown": Case(
        "cannot verify the pull request's approval and checks", pull=None
    ),
    "head_moved": Case(
        f"head moved to {OTHER_SHA[:12]}; not merging {SHA[:12]}",
        pull=replace(GOOD, head_sha=OTHER_SHA),
    ),
    "not_approved": Case("the pull request is not approved", pull=replace(GOOD, approved=False)),
    "approval_stale": Case(
        "the approval predates the current head", pull=replace(GOOD, stale=True)
    ),
    "required_checks_red": Case("required checks are not green on that sha", green={SHA: False}),
    "required_checks_unknown": Case("cannot verify the required checks on that sha", green={}),
    "checks_green_only_on_another_sha": Case(
        "cannot verify the required checks on that sha", green={OTHER_SHA: True}
    ),
}


def _run(tmp_path: Path, case: Case) -> Controller:
    ctl = make_controller(
        tmp_path,
        _policy(allow_merge=case.allow_merge),
        pulls={} if case.pull is None else {(REPO, NUMBER): case.pull},
        green={(REPO, sha): ok for sha, ok in case.green.items()},
    )
    ctl.handle(_event(*case.event))
    return ctl


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_merge_is_refused_with_its_reason_and_never_executed(tmp_path: Path, case: Case) -> None:
    ctl = _run(tmp_path, case)
    (decision,) = decisions(ctl)
    assert (decision["outcome"], decision["rule"]) == ("decided", "merge-everything")
    assert decision["intents"] == []
    assert [(r["type"], r["guard"], r["reason"]) for r in decision["refused"]] == [
        ("merge", "merge", case.reason)
    ]
    # Nothing reached the executor: every attempt it makes is journaled, and none is.
    assert actions(ctl) == []
    assert list(ctl.state.live("intent")) == []


def test_merge_when_every_condition_holds_is_executed_as_a_dry_run(tmp_path: Path) -> None:
    ctl = _run(tmp_path, Case(reason=""))
    (decision,) = decisions(ctl)
    assert decision["refused"] == []
    (intent,) = decision["intents"]
    target = f"pull_request:{NUMBER}"
    assert (intent["type"], intent["target"]) == ("merge", target)
    assert intent["args"] == {"sha": SHA, "method": "squash", "base": BASE}
    (action,) = actions(ctl)
    assert (action["intent_id"], action["type"], action["attempt"]) == (intent["id"], "merge", 1)
    assert (action["status"], action["dry_run"]) == ("succeeded", True)
    assert action["effect"] == {
        "effect": "merge",
        "repo": REPO,
        "target": target,
        "sha": SHA,
        "method": "squash",
        "base": BASE,
    }


def _merging(tmp_path: Path, effect: dict[str, Any] | None) -> Controller:
    """A controller whose merges are answered by a handler: merged (`effect` None) or a wait."""
    ctl = _run_setup(tmp_path)

    def merge(intent: ActionIntent, attempt: int) -> ActionResult:
        if effect is None:
            output = {"number": NUMBER, "sha": "m" * 40}
            return result_of(intent, attempt, ctl.clock(), "succeeded", output=output)
        return result_of(intent, attempt, ctl.clock(), "succeeded", effect=effect)

    ctl.parts.executor = build_executor(
        dry_run=False, clock=ctl.clock, run_skill=None, github={"merge": merge}
    )
    return ctl


def _run_setup(tmp_path: Path) -> Controller:
    case = Case(reason="")
    return make_controller(
        tmp_path,
        _policy(allow_merge=True),
        pulls={(REPO, NUMBER): case.pull},
        green={(REPO, sha): ok for sha, ok in case.green.items()},
    )


def test_a_merge_only_pass_closes_the_pull_request_on_the_merge(tmp_path: Path) -> None:
    ctl = _merging(tmp_path, None)
    subject = f"pull_request:{NUMBER}"
    # An earlier unit on the pull request: a fix run that failed.
    earlier = datetime(2020, 1, 1, tzinfo=UTC)
    failed = {"type": "run_skill", "subject": subject, "skill": "github-pr-fix",
              "decided_at": earlier.isoformat(), "event_id": "evt_fix",
              "result": {"status": "failed", "error": "exit 3"}}  # fmt: skip
    ctl.state.put(Record(kind="intent", key="act_fix", status="failed", updated_at=earlier,
                         writer="test", data=failed))  # fmt: skip
    ctl.ledger.track_intent(ctl.state.get("intent", "act_fix"))  # type: ignore[arg-type]
    report = ctl.handle(_event("pull_request_review", "submitted"))
    closure = report.closures[subject]
    # The merge is the subject's current work, and it merged: completed, not the old failure.
    assert (closure.closure_outcome, closure.exit_code) == ("completed", 0)
    assert closure.deciding_items[0].startswith("merge:")


def test_a_merge_that_must_wait_leaves_the_pull_request_waiting(tmp_path: Path) -> None:
    ctl = _merging(tmp_path, {"effect": "merge", "performed": False, "wait": "checks running"})
    report = ctl.handle(_event("pull_request_review", "submitted"))
    closure = report.closures[f"pull_request:{NUMBER}"]
    assert (closure.closure_outcome, closure.waiting_reason) == (
        "waiting",
        "awaiting_external_change",
    )
    assert closure.detail == "waiting for checks running"


def test_a_dry_run_merge_leaves_the_pull_request_not_finished(tmp_path: Path) -> None:
    ctl = _run(tmp_path, Case(reason=""))
    closure = ctl.state.get("closure", f"pull_request:{NUMBER}")
    assert closure is not None
    # Journaled as the merge it would perform: nothing merged, the work is still to do.
    assert (closure.data["closure_outcome"], closure.data["exit_code"]) == ("continuable", 3)
