"""Work beyond `intents_per_pass` is held, not lost: it re-activates its subject and continues.

A policy (the workspace's, HOLON_POLICY) whose `/holon solve` rule decides two intents on the
issue: the solve run, and a label. With HOLON_INTENTS_PER_PASS=1:

- the `/holon solve` step performs the run (the replayed agent's fix, a pull request) and holds
  the label: the subject is `continuable`, and exactly one `workflow_dispatch` re-activates it;
- the dispatched run (a `workflow_dispatch` with that subject and generation) performs the held
  label, re-checked, decides nothing anew (no second solve), and the subject closes `completed`;
- the same dispatch again (a re-run) performs nothing twice.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from tests.e2e_actions.conftest import Steps, assert_all_outputs, assert_no_secret, pulls
from tests.e2e_actions.test_reactivation_story import DISPATCH, MARKER, dispatch_event
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

LABEL = "holon-solving"


def policy_text() -> str:
    """The built-in policy, its solve rule also labelling the issue."""
    text = resources.files("holon.controller").joinpath("default_policy.yaml").read_text()
    rule = "  - name: solve-issue-command\n"
    head, tail = text.split(rule)
    also = f"    also: [{{do: label, args: {{label: {LABEL}}}}}]\n"
    return head + rule + also + tail


def with_policy(step: ActionsEnv) -> ActionsEnv:
    step.workspace.mkdir(parents=True, exist_ok=True)
    (step.workspace / "holon-policy.yaml").write_text(policy_text())
    step.extra.update(HOLON_POLICY="holon-policy.yaml", HOLON_INTENTS_PER_PASS="1")
    return step


def _dispatches(server: LoopbackGitHub) -> list[dict[str, object]]:
    return [json.loads(c.body) for c in server.calls if c.operation == DISPATCH]


def test_work_beyond_the_limit_is_held_re_activated_and_continued(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    first = with_policy(steps("solve", run_id="5001"))
    issue = first.add_issue()
    first.comment_event(issue.number, "/holon solve")
    done = first.run()
    assert done.returncode == 0, done.stdout + done.stderr  # continuing is no failed job
    outputs = first.outputs()
    assert_all_outputs(outputs)
    assert outputs["closure_outcome"] == "continuable", outputs
    assert outputs["lifecycle_outcome"] == ""
    assert "github-issue-solve" in [r["skill"] for r in json.loads(outputs["runs"])]
    assert len(pulls(first.repo)) == 1  # the run was performed
    assert LABEL not in first.repo.issue(issue.number).labels  # the label is held
    assert github_server.count("issues/add-labels") == 0
    (sent,) = _dispatches(github_server)
    assert sent == {"ref": "refs/heads/main", "inputs": {"subject": "issue:1", "generation": "1"}}
    (comment,) = first.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "Continuing: Holon resumes this work by itself" in comment, comment
    summary = first.summary()
    assert "held for the next pass" in summary, summary
    assert_no_secret(first, done.stdout, done.stderr)

    # The dispatched run performs the held label, and nothing is decided anew.
    run = with_policy(steps("dispatched", run_id="5002"))
    first.state_between_runs(run)
    dispatch_event(run, "issue:1", "1")
    done = run.run()
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = run.outputs()
    assert outputs["closure_outcome"] == "completed", outputs
    assert json.loads(outputs["runs"]) == []  # no second solve
    assert LABEL in run.repo.issue(issue.number).labels
    assert github_server.count("issues/add-labels") == 1
    (comment,) = run.holon_comments(issue.number)
    assert "**Outcome:** `finished`" in comment, comment
    assert "pull/2)" in comment, comment  # what the unit published, still shown
    assert len(pulls(run.repo)) == 1
    assert len(_dispatches(github_server)) == 1  # closed work is not re-activated

    # The same dispatch again (a re-run of that run): nothing is performed twice.
    again = with_policy(steps("rerun", run_id="5002"))
    again.attempt = 2
    run.state_between_runs(again)
    dispatch_event(again, "issue:1", "1")
    done = again.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert github_server.count("issues/add-labels") == 1
    assert len(_dispatches(github_server)) == 1
