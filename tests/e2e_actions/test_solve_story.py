"""The Action's whole story in single mode, each step `python -m holon action` in a simulated
Actions step against the loopback GitHub: `/holon solve` on an issue gets a progress comment
linking the run, the replayed agent fixes the demo project for real, a pull request is opened on
`holon/issue-1`, and the same comment becomes the handoff `finished`; a maintainer's change
request on that Holon pull request runs pr-fix, whose commit is pushed to the pull request's own
branch."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e_actions.conftest import (
    HOLON,
    RUN_URL,
    Steps,
    agent_script,
    assert_all_outputs,
    assert_no_secret,
    holon_checks,
    pull_of,
    pulls,
    sent_bodies,
)
from tests.support.actions_env import REPO, ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

MARKER = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"
BRANCH = "holon/issue-1"
THREAD = 10  # the review thread the fix addresses
FIXER = f"""
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
calc = ws / "calc.py"
calc.write_text(calc.read_text() + "\\n\\ndef sub(a, b):\\n    return a - b\\n")
(out / "summary.md").write_text("Added sub(), as the review asked.")
(out / "pr-fix.json").write_text(json.dumps(
    {{"review_replies": [{{"comment_id": {THREAD}, "status": "fixed",
                          "message": "Added sub()."}}],
     "checks": [], "verification": [{{"command": "python -m unittest", "exit_code": 0}}]}}
))
(out / "manifest.json").write_text(json.dumps({{"status": "completed", "outcome": "success"}}))
"""


def test_solve_on_an_issue_opens_a_pr_and_settles_its_comment_finished(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    step = steps()
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon solve")
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr
    repo = step.repo

    # A progress comment first, linking the run; the same comment is then the handoff.
    created = sent_bodies(github_server, "issues/create-comment")
    assert len(created) == 1, created
    assert created[0].startswith(MARKER)
    assert "`working`" in created[0]
    assert RUN_URL in created[0]
    (comment,) = step.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "**Outcome:** `finished`" in comment
    assert "working" not in comment

    # The pull request, on holon/issue-1, with the replayed agent's real fix.
    (pull,) = pulls(repo)
    assert (pull_of(pull).head, pull_of(pull).base) == (BRANCH, "main")
    assert pull.user == HOLON
    head = repo.refs[f"heads/{BRANCH}"]
    fixed = repo.objects[repo.files(head)["calc.py"]["sha"]]["data"]
    assert b"return a + b" in fixed
    assert f"pull request \\#{pull.number}" in comment

    # Outputs: every one written; the subject's closure, the run, the comment, the handoff.
    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert outputs["closure_outcome"] == "completed"
    assert outputs["lifecycle_outcome"] == "finished"
    assert outputs["waiting_reason"] == ""
    runs = json.loads(outputs["runs"])
    solve = [r for r in runs if r["skill"] == "github-issue-solve"]
    assert len(solve) == 1, runs
    assert solve[0]["subject"] == "issue:1"
    assert solve[0]["outcome"] == "success"
    assert {"intent", "status", "output"} <= set(solve[0])
    (holon_comment,) = [c for c in repo.comments.values() if c.user == HOLON]
    assert outputs["comment_url"] == (
        f"https://github.com/{REPO}/issues/1#issuecomment-{holon_comment.id}"
    )
    handoff = json.loads(outputs["handoff"])
    assert handoff["outcome"] == "finished"
    assert handoff["closure"]["closure_outcome"] == "completed"
    assert handoff["context"]["subject"] == {"kind": "issue", "id": "1"}

    # The step summary: the outcome table and the subject's path as a Mermaid diagram.
    summary = step.summary()
    assert "```mermaid" in summary
    mermaid = summary.split("```mermaid", 1)[1].split("```", 1)[0]
    assert "flowchart" in mermaid or "graph" in mermaid
    assert "github-issue-solve" in mermaid
    table = [line for line in summary.splitlines() if line.startswith("|")]
    assert table, summary
    assert any("completed" in line for line in table), table
    assert any("finished" in line for line in table), table
    assert_no_secret(step, done.stdout, done.stderr, comment)


def _holon_pr(step: ActionsEnv) -> tuple[int, str]:
    """Issue 1 solved: Holon's pull request from holon/issue-1 (with the solve's fix and one
    review thread), the workspace checked out at its head, as the review's job checks it out."""
    repo = step.repo
    step.add_issue()
    fixed = (step.workspace / "calc.py").read_text().replace("return a - b", "return a + b")
    repo.refs[f"heads/{BRANCH}"] = repo.refs["heads/main"]
    repo.put_file("calc.py", fixed.encode(), branch=BRANCH, message="Fix #1")
    pull = repo.add_pull("Fix #1: add() returns the sum", head=BRANCH, user=HOLON)
    pull_of(pull).review_comments.append(
        {"id": THREAD, "body": "add sub() too?", "user": "octocat", "path": "calc.py", "line": 1}
    )
    head = step.checkout(BRANCH)
    assert pull_of(pull).head_sha == head
    return pull.number, head


def test_a_change_request_on_the_holon_pr_pushes_pr_fix_to_its_branch(
    github_server: LoopbackGitHub, steps: Steps, tmp_path: Path
) -> None:
    step = steps()
    number, head = _holon_pr(step)
    repo = step.repo
    step.extra["HOLON_AGENT"] = agent_script(tmp_path, FIXER)
    step.review_event(number, "changes_requested", "Please add sub() as well.")
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr

    # pr-fix's commit is on the pull request's own branch, on the head the run started from.
    fix = repo.refs[f"heads/{BRANCH}"]
    assert fix != head
    assert repo.get(fix, "commit")["parents"] == [head]
    data = repo.objects[repo.files(fix)["calc.py"]["sha"]]["data"]
    assert b"def sub(a, b):" in data
    assert b"return a + b" in data
    assert pull_of(repo.issue(number)).head_sha == fix
    assert len(pulls(repo)) == 1  # no second pull request
    # The thread the fix addressed got its reply.
    replies = [c for c in pull_of(repo.issue(number)).review_comments if c.get("in_reply_to_id")]
    assert [r["in_reply_to_id"] for r in replies] == [THREAD]

    # Holon's check run: completed with the closure's conclusion.
    checks = holon_checks(repo)
    assert checks, "no Holon check run"
    assert all(c["status"] == "completed" for c in checks), checks
    assert {c["conclusion"] for c in checks} == {"success"}
    assert head in {c["head_sha"] for c in checks}

    outputs = step.outputs()
    assert_all_outputs(outputs)
    assert (outputs["closure_outcome"], outputs["lifecycle_outcome"]) == ("completed", "finished")
    assert [r["skill"] for r in json.loads(outputs["runs"]) if r["skill"] != "github-publish"] == [
        "github-pr-fix"
    ]
    (comment,) = step.holon_comments(number)
    assert "skill=github-pr-fix" in comment.splitlines()[0]
    assert "**Outcome:** `finished`" in comment
    assert_no_secret(step, done.stdout, done.stderr)


def test_a_stop_after_the_solve_keeps_its_pull_request_linked(
    github_server: LoopbackGitHub, steps: Steps
) -> None:
    # A later `/holon stop` rewrites the solve's comment (userinterlude: who stopped it, how to
    # restart); what the stopped work published stays linked from that one comment.
    step = steps()
    issue = step.add_issue()
    step.comment_event(issue.number, "/holon solve")
    assert step.run().returncode == 0
    (pull,) = pulls(step.repo)
    step.new_step()
    step.comment_event(issue.number, "/holon stop", comment_id=2002)
    done = step.run()
    assert done.returncode == 0, done.stdout + done.stderr
    (comment,) = step.holon_comments(issue.number)
    assert comment.startswith(MARKER)
    assert "**Outcome:** `userinterlude`" in comment, comment
    assert f"pull request \\#{pull.number}" in comment, comment
    assert step.outputs()["lifecycle_outcome"] == "userinterlude"
