"""A `/holon fix` whose publish fails after its push landed (tests/faults/pr_story.py): the fix
commit is on the branch, then every reply to the review thread is refused (a 403: the token
lacks `pull-requests: write`); and a `/holon solve` whose branch was pushed, then its pull
request refused. The publish did not complete, so the work is `failed`; but the branch moved,
and the handoff says so: the comment names the commit the branch is at now (its evidence and its
recorded state), and the step's handoff output too, so nobody reads the failure as "nothing
changed"."""

from __future__ import annotations

from pathlib import Path

from tests.faults.pr_faults import TOKEN
from tests.faults.pr_story import BRANCH, check_pr_truth, first_pr_step
from tests.faults.story import BRANCH as SOLVE_BRANCH
from tests.faults.story import assert_exit_clean, first_step, outputs
from tests.support.github_fake.faults import Fault
from tests.support.github_fake.loopback import LoopbackGitHub

REFUSED = Fault("403", operation="pulls/create-reply-for-review-comment", method="POST", times=9)


def test_a_refused_reply_after_the_push_names_the_pushed_commit(tmp_path: Path) -> None:
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_pr_step(tmp_path, server, "fix", REFUSED)
        assert_exit_clean(story.first_done)
        seen = check_pr_truth(story, "fix", final=True)
        tip = story.first.repo.refs[f"heads/{BRANCH}"]
        assert (seen["outcome"], seen["moved"], seen["replies"]) == ("failed", True, 0), seen
        (comment,) = story.comments()
        evidence = comment.partition("**Evidence**")[2].partition("**Artifacts")[0]
        state = comment.partition("**Artifacts / state**")[2].partition("**Handoff**")[0]
        for said in (tip, "pushed", "moved"):
            assert said in evidence, comment
        assert "403" in evidence, comment  # and why it failed still
        assert f"commit {tip}" in state, comment
        assert "none recorded" not in state, comment
        assert tip in outputs(story.first).get("handoff", ""), outputs(story.first)
        # GitHub shows the new head's checks: it carries the failure too, completed.
        assert {c["head_sha"] for c in seen["checks"]} == {story.head, tip}, seen["checks"]
    server.assert_clean()


def test_a_refused_pull_request_after_the_push_names_the_pushed_commit(tmp_path: Path) -> None:
    """A `/holon solve` whose branch was pushed, then opening its pull request was refused (a
    403): failed, and the handoff says the branch moved to the run's commit."""
    refused = Fault("403", operation="pulls/create", method="POST", times=9)
    with LoopbackGitHub(token=TOKEN) as server:
        story = first_step(tmp_path, server, refused)
        assert_exit_clean(story.first_done)
        assert any(f[1] == "pulls/create" for f in server.faults.fired)
        assert not story.pulls()
        tip = story.first.repo.refs[f"heads/{SOLVE_BRANCH}"]
        assert story.outcome() == "failed", story.comments()
        (comment,) = story.comments()
        evidence = comment.partition("**Evidence**")[2].partition("**Artifacts")[0]
        state = comment.partition("**Artifacts / state**")[2].partition("**Handoff**")[0]
        for said in (tip, "pushed", "moved"):
            assert said in evidence, comment
        assert "403" in evidence, comment  # and why it failed still
        assert f"commit {tip}" in state, comment
        assert "none recorded" not in state, comment
        assert tip in outputs(story.first).get("handoff", ""), outputs(story.first)
    server.assert_clean()
