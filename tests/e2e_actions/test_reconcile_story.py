"""Nothing is lost to Actions' own limits: a `/holon solve` whose run never came (a concurrency
group cancelled the pending run, or GitHub dropped it) is found by the next scheduled tick, which
reconciles against its cursor and handles the command exactly once (progress comment, pull
request, handoff); a later tick finds nothing new. Each tick is `python -m holon action` in its
own simulated job, the state carried between them as the saved artifact restores it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from tests.e2e_actions.conftest import (
    Steps,
    assert_all_outputs,
    assert_no_secret,
    pull_of,
    pulls,
    sent_bodies,
)
from tests.support.actions_env import MAINTAINER, ActionsEnv, octokit_example
from tests.support.github_fake.loopback import LoopbackGitHub

MARKER = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
WORKFLOW = ".github/workflows/holon.yml"
CRON = "*/15 * * * *"
WRITES = ("issues/create-comment", "issues/update-comment", "pulls/create", "git/create-ref")


def schedule_event(step: ActionsEnv) -> dict[str, Any]:
    """GitHub's `schedule` payload: the cron that fired, the repository and the workflow.
    The octokit fixtures have no example of it (GitHub sends no webhook for a schedule; only a
    run's event file has one), so it is built from its documented fields, with the repository
    of a real example aimed at the fake."""
    example = octokit_example("issue_comment", "created")
    repository = step._targeted(example, MAINTAINER)["repository"]
    payload = {"schedule": CRON, "repository": repository, "workflow": WORKFLOW}
    step.write_event("schedule", payload)
    return payload


def _tick(steps: Steps, name: str, run_id: str, before: ActionsEnv | None) -> ActionsEnv:
    step = steps(name, run_id=run_id)
    if before is not None:
        before.state_between_runs(step)
    schedule_event(step)
    return step


def _writes(server: LoopbackGitHub) -> dict[str, int]:
    return {operation: server.count(operation) for operation in WRITES}


def test_a_tick_handles_a_command_no_run_handled_exactly_once(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    # The first tick: no cursor yet, so it starts at now (no backfill) and reads nothing.
    first = _tick(steps, "tick-1", "2001", None)
    issue = first.add_issue()
    done = first.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert_all_outputs(first.outputs())
    assert first.outputs()["closure_outcome"] == ""
    state = json.loads((first.state_dir / "state.json").read_text())
    assert "reconcile_cursor" in json.dumps(state)
    assert not first.holon_comments(issue.number)

    # The maintainer comments `/holon solve`; the run it started never came: the comment is
    # on GitHub, and no event reached any step.
    command = first.repo.add_comment(issue.number, "/holon solve", MAINTAINER)
    command.created_at = command.updated_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    # The next tick finds it since the cursor and handles it as the live event would be.
    second = _tick(steps, "tick-2", "2002", first)
    done = second.run()
    assert done.returncode == 0, done.stdout + done.stderr
    created = sent_bodies(github_server, "issues/create-comment")
    assert len(created) == 1, created
    assert created[0].startswith(MARKER), created
    assert "`working`" in created[0]  # the progress comment first
    (comment,) = second.holon_comments(issue.number)
    assert "**Outcome:** `finished`" in comment
    (pull,) = pulls(second.repo)
    assert pull_of(pull).head == "holon/issue-1"
    outputs = second.outputs()
    assert_all_outputs(outputs)
    runs = json.loads(outputs["runs"])
    assert [(r["skill"], r["subject"]) for r in runs] == [
        ("github-issue-solve", "issue:1"),
        ("github-publish", "issue:1"),
    ]
    assert outputs["closure_outcome"] == "completed"
    assert "reconciled 1 event" in second.summary()
    assert_no_secret(second, done.stdout, done.stderr)

    # A later tick: nothing new since the cursor, and the command is not answered again.
    writes = _writes(github_server)
    third = _tick(steps, "tick-3", "2003", second)
    done = third.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert _writes(github_server) == writes
    assert json.loads(third.outputs()["runs"]) == []
    assert "reconciled" not in third.summary()
    assert len(third.holon_comments(issue.number)) == 1
    assert len(pulls(third.repo)) == 1
