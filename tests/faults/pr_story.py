"""The pull request stories of the Action under faults and crashes: `/holon fix` on Holon's pull
request #2 (pr-fix: a progress comment, a check run, the fix commit pushed to the pull request's
head branch through the git data API, a reply to the review thread it addressed, the comment and
check run settled, a check run on the new head) and `/holon review` on it (a review with a line
comment, posted once for the head). The agent is a small script (the replay session tells the
solve story only); everything else is the real `holon action` against the loopback GitHub.

`check_pr_truth` is what must hold after any step of either story, faulted or killed: at most
one Holon comment, one review, one reply in the thread, one check run per head; the branch moved
at most once (its tip the head or one commit on it); `finished` only with the effect on GitHub;
and at the end the comment settled (never `working`) and no check run left in progress.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

from tests.faults.story import FAST, Story, assert_state_valid, outputs
from tests.support.actions_env import MAINTAINER, ActionsEnv
from tests.support.github_fake.faults import Fault
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Pull, Repo

Kind = Literal["fix", "review"]
BRANCH = "holon/issue-1"
THREAD = 10  # the review thread pr-fix addresses
COMMAND: dict[Kind, str] = {"fix": "/holon fix add sub() too", "review": "/holon review"}
SKILL: dict[Kind, str] = {"fix": "github-pr-fix", "review": "github-review"}
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
REVIEWER = """
import json, os, pathlib
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "review.json").write_text(json.dumps([{"path": "calc.py", "line": 2,
    "severity": "warn", "message": "Name the operands.", "suggestion": ""}]))
(out / "review.md").write_text("Reads well.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def pull_of(repo: Repo, number: int) -> Pull:
    pull = repo.issue(number).pull
    assert pull is not None
    return pull


def pr_step(root: Path, server: LoopbackGitHub, kind: Kind, name: str = "job") -> ActionsEnv:
    """A job on issue 1's Holon pull request #2 from holon/issue-1 (add() fixed, one review
    thread), its workspace checked out at the head, the agent `kind`'s script, the command
    commented on the pull request by its maintainer."""
    step = ActionsEnv(root, server, name=name)
    repo = step.repo
    # Check runs are by the token's app, as on GitHub (the fake's default is its example's).
    repo.check_app = server.login.removesuffix("[bot]")
    step.add_issue()
    fixed = (step.workspace / "calc.py").read_text().replace("return a - b", "return a + b")
    repo.refs[f"heads/{BRANCH}"] = repo.refs["heads/main"]
    repo.put_file("calc.py", fixed.encode(), branch=BRANCH, message="Fix #1")
    pull = repo.add_pull("Fix #1: add() returns the sum", head=BRANCH, user=MAINTAINER)
    pull_of(repo, pull.number).review_comments.append(
        {"id": THREAD, "body": "add sub() too?", "user": MAINTAINER, "path": "calc.py", "line": 1}
    )
    step.checkout(BRANCH)
    agent = root / name / "agent.py"
    agent.write_text(FIXER if kind == "fix" else REVIEWER)
    step.extra["HOLON_AGENT"] = shlex.join([sys.executable, str(agent)])
    step.comment_event(pull.number, COMMAND[kind])
    return step


def first_pr_step(
    tmp: Path, server: LoopbackGitHub, kind: Kind, *faults: Fault, env: dict[str, str] | None = None
) -> Story:
    step = pr_step(tmp, server, kind, name="attempt-1")
    step.extra.update({**FAST, **(env or {})})
    number = max(step.repo.issues)
    head = pull_of(step.repo, number).head_sha
    for fault in faults:
        server.faults.add(fault)
    done = step.run(timeout=90)
    server.faults.clear()
    return Story(step, done, number=number, head=head)


def holon_checks(repo: Repo) -> list[dict[str, Any]]:
    return [run for run in repo.check_runs.values() if run["name"] == "Holon"]


def fix_commits(repo: Repo, head: str) -> list[str]:
    """Commits made on `head` (the fix, however many times it was made)."""
    return [
        sha
        for sha, obj in repo.objects.items()
        if obj["type"] == "commit" and obj.get("parents") == [head]
    ]


def check_pr_truth(story: Story, kind: Kind, final: bool) -> dict[str, Any]:
    """What GitHub holds after a step of a pull request story, and whether the comment and the
    outputs tell the truth (see the module's docstring); a summary for messages."""
    repo, login = story.first.repo, story.first.server.login
    assert story.head is not None
    pull = pull_of(repo, story.number)
    tip = repo.refs[f"heads/{BRANCH}"]
    comments = story.comments()
    reviews = [r for r in pull.reviews if r.get("user") == login]
    replies = [
        c
        for c in pull.review_comments
        if c.get("in_reply_to_id") == THREAD and c.get("user") == login
    ]
    checks = holon_checks(repo)
    outcome = story.outcome()
    seen = {"outcome": outcome, "comments": len(comments), "reviews": len(reviews),
            "replies": len(replies), "moved": tip != story.head, "checks": checks}  # fmt: skip
    assert len(comments) <= 1, comments
    assert all(f"skill={SKILL[kind]}" in c.splitlines()[0] for c in comments), comments
    assert len(reviews) <= 1, reviews
    assert len(replies) <= 1, replies
    shas = [c["head_sha"] for c in checks]
    assert len(shas) == len(set(shas)), f"two check runs on one head: {checks}"
    # The branch moved once at most: at the head, or at one commit whose parent is the head.
    if tip != story.head:
        assert kind == "fix", "a review moved the branch"
        assert repo.get(tip, "commit")["parents"] == [story.head], "the branch moved twice"
        assert pull.head_sha == tip
    if kind == "review":
        assert not replies
    said = outputs(story.last).get("lifecycle_outcome")
    for claim in (outcome, said):
        if claim == "finished" and kind == "fix":
            assert tip != story.head, f"finished, and no fix was pushed: {seen}"
            assert len(replies) == 1, f"finished, and the thread got no reply: {seen}"
        if claim == "finished" and kind == "review":
            assert len(reviews) == 1, f"finished, and no review was posted: {seen}"
            assert reviews[0]["commit_id"] == story.head
    if final:
        # Handled: the comment settled and saying what stopped it; no check run in progress.
        assert outcome not in (None, "working", "?"), seen
        comment = comments[-1]
        if outcome != "finished":
            assert "**Outcome:**" in comment, comment
            assert len(comment) > 200, comment  # more than the outcome: what happened
        assert all(c["status"] == "completed" for c in checks), f"a check run left open: {seen}"
    assert_state_valid(story.last.state_dir)
    return seen


def dump(story: Story) -> str:
    """The steps' output for a failure's message (short)."""
    parts = []
    for done in (story.first_done, story.again_done):
        if done is not None:
            parts.append(f"exit {done.returncode}: {(done.stdout + done.stderr)[-800:]}")
    return json.dumps(parts)
