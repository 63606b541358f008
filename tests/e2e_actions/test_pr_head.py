"""pr-fix works on the pull request's head, not on what the job checked out: an `issue_comment`
(`/holon fix`) or a `pull_request_review` job checks out the default branch, here main with
`add()` still broken, while the pull request's head has it fixed. The head is not in the
workspace: Holon fetches exactly that commit from the workspace's `origin` (a real repository on
disk), runs the agent in a worktree at it, and publishes a commit whose parent is the head and
whose patch applied to it; the workspace stays at main."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e_actions.conftest import (
    Steps,
    agent_script,
    assert_all_outputs,
    assert_no_secret,
    holon_checks,
    pull_of,
    pulls,
)
from tests.e2e_actions.test_solve_story import BRANCH, FIXER, THREAD
from tests.support.actions_env import ActionsEnv, git
from tests.support.github_fake.loopback import LoopbackGitHub

HOLON = "github-actions[bot]"


def _pr_not_checked_out(step: ActionsEnv, tmp_path: Path) -> tuple[int, str, str]:
    """Holon's pull request from holon/issue-1 (add() fixed) on the fake and in `origin`, the
    workspace at main (add() broken) without the head; the PR's number, its head, main."""
    repo = step.repo
    step.add_issue()
    main = repo.refs["heads/main"]
    fixed = (step.workspace / "calc.py").read_text().replace("return a - b", "return a + b")
    repo.refs[f"heads/{BRANCH}"] = main
    repo.put_file("calc.py", fixed.encode(), branch=BRANCH, message="Fix #1")
    pull = repo.add_pull("Fix #1: add() returns the sum", head=BRANCH, user=HOLON)
    pull_of(pull).review_comments.append(
        {"id": THREAD, "body": "add sub() too?", "user": "octocat", "path": "calc.py", "line": 1}
    )
    # `origin`: what GitHub holds, as a repository on disk the workspace fetches from.
    head = step.checkout(BRANCH, into=tmp_path / "origin-src")
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "origin-src"), "origin.git")
    git(step.workspace, "remote", "add", "origin", str(tmp_path / "origin.git"))
    assert pull_of(pull).head_sha == head
    assert git(step.workspace, "rev-parse", "HEAD").strip() == main
    assert "return a - b" in (step.workspace / "calc.py").read_text()
    return pull.number, head, main


@pytest.mark.parametrize("event", ["issue_comment", "pull_request_review"])
def test_pr_fix_runs_on_the_pull_requests_head_when_the_job_checked_out_main(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path, event: str
) -> None:
    step = steps()
    number, head, main = _pr_not_checked_out(step, tmp_path)
    repo = step.repo
    step.extra["HOLON_AGENT"] = agent_script(tmp_path, FIXER)
    if event == "issue_comment":
        step.comment_event(number, "/holon fix please add sub() too")
    else:
        step.review_event(number, "changes_requested", "Please add sub() as well.")
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr

    # The fix is one commit on the head, with the head's add() and the agent's sub().
    fix = repo.refs[f"heads/{BRANCH}"]
    assert fix != head
    assert repo.get(fix, "commit")["parents"] == [head]
    data = repo.objects[repo.files(fix)["calc.py"]["sha"]]["data"]
    assert b"return a + b" in data
    assert data.count(b"return a - b") == 1  # sub()'s own, not main's broken add()
    assert b"def sub(a, b):" in data
    assert len(pulls(repo)) == 1

    # The check run is on the head the run worked on (the comment's head came from the API).
    checks = holon_checks(repo)
    assert head in {c["head_sha"] for c in checks}, checks
    assert {c["conclusion"] for c in checks} == {"success"}

    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert (outputs["closure_outcome"], outputs["lifecycle_outcome"]) == ("completed", "finished")

    # The workspace is still the job's checkout; the head was fetched into it, no worktree
    # and no token left behind.
    assert git(step.workspace, "rev-parse", "HEAD").strip() == main
    assert "def sub" not in (step.workspace / "calc.py").read_text()
    git(step.workspace, "cat-file", "-e", f"{head}^{{commit}}")
    assert git(step.workspace, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert "extraheader" not in (step.workspace / ".git" / "config").read_text()
    assert_no_secret(step, done.stdout, done.stderr)


def test_a_head_nobody_can_fetch_fails_the_run_with_one_line_of_evidence(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    step = steps()
    number, head, main = _pr_not_checked_out(step, tmp_path)
    git(step.workspace, "remote", "remove", "origin")
    step.extra["HOLON_AGENT"] = agent_script(tmp_path, FIXER)
    step.comment_event(number, "/holon fix")
    done = step.run()
    assert done.returncode == 1, done.stdout + done.stderr

    assert step.repo.refs[f"heads/{BRANCH}"] == head  # nothing pushed
    outputs = step.outputs()
    assert (outputs["closure_outcome"], outputs["lifecycle_outcome"]) == ("failed", "failed")
    (comment,) = step.holon_comments(number)
    assert f"the pull request's head {head} is not in the workspace" in comment
    assert git(step.workspace, "rev-parse", "HEAD").strip() == main
