"""Continuable work re-activates itself within its budget; waiting work never re-runs by itself.

Each step is `python -m holon action` in its own simulated job, the state carried between them
as the saved artifact restores it. Where the continuable work comes from: in single mode a run
always settles (the runner's verdict is completed, failed or needs_human; an agent whose
manifest still says `running` failed), so a step's own run never leaves its unit continuable.
The closure rules make a unit continuable when runnable work remains (docs/closure.md, rule 6),
which a dry run without an agent records (`holon serve --dry-run`: the work is still to do).
That state, restored by the next step, is the continuable subject here, seeded by that real
command on the step's state directory.

- a scheduled tick re-activates it: one `workflow_dispatch` of Holon's workflow with inputs
  `subject` and `generation` 1, and the subject's comment says the work continues; a second
  tick sends nothing (the dispatch is on its way);
- the dispatched run (a `workflow_dispatch` event with those inputs) continues the subject's
  skill for real: the replayed agent's fix, a pull request, the same comment `finished`;
- with a budget of 1 and the dispatch lost (no run came within the hour), the next tick finds
  the budget spent: an explicit operator wait (`blocked`) whose handoff says which command
  continues, and no dispatch, then or at any later tick.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e_actions.conftest import (
    Steps,
    assert_all_outputs,
    assert_no_secret,
    pull_of,
    pulls,
)
from tests.e2e_actions.test_reconcile_story import schedule_event
from tests.support.actions_env import MAINTAINER, REPO, ActionsEnv, octokit_example
from tests.support.github_fake.loopback import LoopbackGitHub

MARKER = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
DISPATCH = "actions/create-workflow-dispatch"
HOLON = "github-actions[bot]"


def seed_continuable(step: ActionsEnv, tmp_path: Path) -> None:
    """`/holon solve` on issue 1, handled by a dry run of `holon serve` without an agent on the
    step's state directory: the unit's run is work still to do (continuable)."""
    payload = step.comment_event(1, "/holon solve")
    replay = tmp_path / "seed.ndjson"
    replay.write_text(json.dumps({"event": "issue_comment", "delivery": "d-1", "payload": payload}))
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"permissions": {REPO: {MAINTAINER: "admin"}}}))
    env = {k: v for k, v in step.env().items() if not k.startswith(("GITHUB_", "HOLON_"))}
    argv = [sys.executable, "-m", "holon", "serve", "--once", "--dry-run", "--repo", REPO]
    argv += ["--state-dir", str(step.state_dir), "--replay", str(replay), "--facts", str(facts)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stdout + done.stderr  # not finished: continuable
    closure = _records(step)["closure:issue:1"]["data"]
    assert closure["closure_outcome"] == "continuable"


def _records(step: ActionsEnv) -> dict[str, Any]:
    records: dict[str, Any] = json.loads((step.state_dir / "state.json").read_text())["records"]
    return records


def _next(steps: Steps, name: str, run_id: str, before: ActionsEnv, **extra: str) -> ActionsEnv:
    step = steps(name, run_id=run_id)
    before.state_between_runs(step)
    step.extra.update(extra)
    schedule_event(step)
    return step


def _dispatches(server: LoopbackGitHub) -> list[dict[str, Any]]:
    return [json.loads(c.body) for c in server.calls if c.operation == DISPATCH]


def dispatch_event(step: ActionsEnv, subject: str, generation: str) -> None:
    """The `workflow_dispatch` Holon's re-activation starts: its inputs, by Holon's token."""
    payload = step._targeted(octokit_example("workflow_dispatch", None), HOLON)
    payload.update(
        inputs={"subject": subject, "generation": generation},
        ref="refs/heads/main",
        workflow=".github/workflows/holon.yml",
    )
    step.write_event("workflow_dispatch", payload)


def test_continuable_work_is_re_dispatched_once_and_the_dispatch_continues_it(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    first = steps("tick-1", run_id="3001")
    issue = first.add_issue()
    seed_continuable(first, tmp_path)
    schedule_event(first)
    done = first.run()
    assert done.returncode == 0, done.stdout + done.stderr  # continuing is no failed job
    (sent,) = _dispatches(github_server)
    assert sent == {"ref": "refs/heads/main", "inputs": {"subject": "issue:1", "generation": "1"}}
    call = next(c for c in github_server.calls if c.operation == DISPATCH)
    assert call.path.endswith("/actions/workflows/holon.yml/dispatches")
    outputs = first.outputs()
    assert_all_outputs(outputs)
    assert (outputs["closure_outcome"], outputs["lifecycle_outcome"]) == ("continuable", "")
    (comment,) = first.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "Continuing: Holon resumes this work by itself" in comment, comment
    assert "activation 1 dispatched" in comment  # recorded state (escaped: re\\-activation)
    summary = first.summary()  # Markdown-escaped: re\-activated issue\:1 \(generation 1\)
    assert "activated issue" in summary
    assert "generation 1" in summary
    assert_no_secret(first, done.stdout, done.stderr)

    # Another tick before the dispatched run arrived: nothing is sent twice.
    second = _next(steps, "tick-2", "3002", first)
    done = second.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_dispatches(github_server)) == 1

    # The dispatched run: it continues the subject's skill, for real, in the same comment.
    run = steps("dispatched", run_id="3003")
    second.state_between_runs(run)
    dispatch_event(run, "issue:1", "1")
    done = run.run()
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = run.outputs()
    assert outputs["closure_outcome"] == "completed", outputs
    assert "github-issue-solve" in [r["skill"] for r in json.loads(outputs["runs"])]
    (comment,) = run.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "**Outcome:** `finished`" in comment
    (pull,) = pulls(run.repo)
    assert pull_of(pull).head == "holon/issue-1"
    assert len(_dispatches(github_server)) == 1  # finished work is not re-activated
    assert github_server.count("issues/create-comment") == 1

    # The same dispatch again (a re-run of that run): nothing continues twice.
    again = steps("rerun", run_id="3003")
    again.attempt = 2
    run.state_between_runs(again)
    dispatch_event(again, "issue:1", "1")
    writes = github_server.count("pulls/create") + github_server.count("issues/update-comment")
    done = again.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(again.outputs()["runs"]) == []
    assert github_server.count("pulls/create") + github_server.count("issues/update-comment") == (
        writes
    )


def test_a_spent_budget_is_an_operator_wait_that_is_never_re_dispatched(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    budget = {"HOLON_REACTIVATION_BUDGET": "1"}
    first = steps("tick-1", run_id="4001")
    first.extra.update(budget)
    issue = first.add_issue()
    seed_continuable(first, tmp_path)
    schedule_event(first)
    assert first.run().returncode == 0
    assert len(_dispatches(github_server)) == 1

    # No run came of it within the hour: the dispatch is taken as lost (the record's time is
    # moved back by an hour and a minute, as if that time had passed between the ticks).
    path = first.state_dir / "state.json"
    state = json.loads(path.read_text())
    record = state["records"]["meta:reactivation:issue:1"]
    sent_at = datetime.fromisoformat(record["data"]["sent_at"])
    record["data"]["sent_at"] = (sent_at - timedelta(hours=1, minutes=1)).isoformat()
    path.write_text(json.dumps(state))

    second = _next(steps, "tick-2", "4002", first, **budget)
    done = second.run()
    assert done.returncode == 0, done.stdout + done.stderr  # waiting is no failed job
    assert len(_dispatches(github_server)) == 1  # the budget (1) is spent: none sent
    outputs = second.outputs()
    assert_all_outputs(outputs)
    assert (outputs["closure_outcome"], outputs["waiting_reason"]) == (
        "waiting",
        "awaiting_operator_input",
    )
    assert outputs["lifecycle_outcome"] == "blocked"
    handoff = json.loads(outputs["handoff"])
    assert handoff["outcome"] == "blocked"
    (comment,) = second.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "**Outcome:** `blocked`" in comment, comment
    plain = comment.replace("\\", "")  # the reason is Markdown-escaped in the comment
    assert "re-activation budget (1 per unit of work) is spent on issue:1" in plain, comment
    assert "comment `/holon solve` to continue the work" in plain

    # Waiting: no later tick re-dispatches it, or writes anything.
    writes = [github_server.count(op) for op in ("issues/create-comment", "issues/update-comment")]
    third = _next(steps, "tick-3", "4003", second, **budget)
    done = third.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(_dispatches(github_server)) == 1
    after = [github_server.count(op) for op in ("issues/create-comment", "issues/update-comment")]
    assert after == writes
    closure = _records(third)["closure:issue:1"]["data"]
    assert closure["lifecycle_outcome"] == "blocked"
    assert datetime.now(UTC) > sent_at  # the clock was never moved, only the record
