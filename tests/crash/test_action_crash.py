"""SIGKILL at each write point of the Action's solve story (state saves, journal lines, the
controller's effect/journal/state points, every GitHub write before it is sent and after GitHub
answered it), then the job run again on the state the crash left: the event is handled once, no
comment, branch or pull request is doubled, state and journals are valid, and the subject's
work ends completed or waiting on the operator with a reason, never inflight.

A write GitHub may have accepted (killed after it answered, before Holon recorded it) is found
again on the restart: the progress comment by its marker, the branch and pull request by the
branch's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.closure.derive import CUT_SHORT
from tests.crash.pr_crash import unescaped
from tests.crash.story import (
    BRANCH,
    STORY,
    assert_consistent,
    assert_names_what_was_made,
    crash_at,
    occurrences,
    rerun,
    run,
    solve_step,
    trace,
)
from tests.support.github_fake.faults import Fault
from tests.support.github_fake.loopback import LoopbackGitHub

# The crash cases: every GitHub write answered (the ambiguous ones) and the pull request's and the
# final settle's before they are sent, the controller's points of both effects, a state save and a
# line of each journal.
CASES = [
    "github:POST issues/{n}/comments:after",
    "github:PATCH issues/comments/{n}:before",
    "github:PATCH issues/comments/{n}:after",
    "github:POST git/trees:after",
    "github:POST git/commits:after",
    "github:POST git/refs:after",
    "github:POST pulls:before",
    "github:POST pulls:after",
    "after_effect_before_journal",
    "after_journal_before_state",
    "after_effect_before_journal#2",
    "after_journal_before_state#2",
    "state.save:after#3",
    "journal.events:after",
    "journal.decisions:after",
    "journal.actions:after#2",
]


def family(point: str) -> str:
    """A write point without its side and count: `github:POST pulls`, `state.save`."""
    return point.partition("#")[0].removesuffix(":before").removesuffix(":after")


# The cases run a third time (each run costs seconds): the ambiguous writes of each kind.
AGAIN = {
    "github:POST issues/{n}/comments:after",
    "github:POST pulls:after",
    "after_effect_before_journal#2",
}


def test_the_story_passes_every_listed_write_point(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    step = solve_step(tmp_path, github_server)
    traced = trace(step, tmp_path / "trace")
    (comment,) = step.holon_comments(1)
    assert_names_what_was_made(step, comment)
    # A retried agent attempt (a slow machine) passes the controller's points once more.
    assert set(traced) == set(STORY), traced
    assert set(CASES) <= set(occurrences(STORY))
    assert set(CASES) <= set(occurrences(traced))
    # Each write point has a crash case, before or after it.
    assert {family(name) for name in CASES} == {family(name) for name in STORY}


@pytest.mark.parametrize("point", CASES)
def test_killed_at_a_write_point_then_run_again(
    github_server: LoopbackGitHub, tmp_path: Path, point: str
) -> None:
    step = solve_step(tmp_path, github_server)
    crash_at(step, point)
    rerun(step)
    closure = assert_consistent(step, github_server)
    # The direct restart finishes the work: recovery reconciles what was inflight.
    assert closure["closure_outcome"] == "completed", closure
    assert len([i for i in step.repo.issues.values() if i.pull is not None]) == 1
    assert f"{'heads/holon/issue-1'}" in step.repo.refs
    (comment,) = step.holon_comments(1)
    # What the work made is named as an uninterrupted run names it, whatever the crash lost.
    assert_names_what_was_made(step, comment)
    if point in AGAIN:
        # The job run once more changes nothing: the event was handled.
        calls = len(github_server.calls)
        rerun(step)
        assert not [c for c in github_server.calls[calls:] if c.method != "GET"]


@pytest.mark.parametrize(
    "point", ["github:PATCH issues/comments/{n}:before", "github:PATCH issues/comments/{n}:after"]
)
def test_killed_at_the_final_settle_then_cleanup_phase_then_run_again(
    github_server: LoopbackGitHub, tmp_path: Path, point: str
) -> None:
    """Killed while writing the finished comment, after the pull request was opened and
    journaled: the cleanup and the run again settle it finished, naming the pull request, the
    commit and the model usage as an uninterrupted run does."""
    step = solve_step(tmp_path, github_server)
    crash_at(step, point)
    cleaned = run(step, HOLON_PHASE="cleanup")
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    (comment,) = step.holon_comments(1)
    assert_names_what_was_made(step, comment)
    rerun(step)
    closure = assert_consistent(step, github_server)
    assert closure["closure_outcome"] == "completed", closure
    (comment,) = step.holon_comments(1)
    assert_names_what_was_made(step, comment)


@pytest.mark.parametrize(
    "point",
    [
        "github:POST git/refs:after",
        "github:POST pulls:after",
        "after_effect_before_journal#2",
    ],
)
def test_killed_while_publishing_then_cleanup_phase_then_run_again(
    github_server: LoopbackGitHub, tmp_path: Path, point: str
) -> None:
    """The composite's cleanup step runs after the killed one: the publish GitHub may have
    taken is not repeated blindly; the work waits on the operator, saying why."""
    step = solve_step(tmp_path, github_server)
    crash_at(step, point)
    cleaned = run(step, HOLON_PHASE="cleanup")
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    rerun(step)
    closure = assert_consistent(step, github_server)
    assert closure["closure_outcome"] == "waiting", closure
    assert closure["waiting_reason"] == "awaiting_operator_input"
    (comment,) = step.holon_comments(1)
    assert "cancelled or timed out" in comment or "operator" in comment, comment
    # The closure stored in the state says what the comment says: cut short, not stopped.
    assert closure["detail"] == CUT_SHORT, closure
    assert "stopped by" not in comment, comment
    assert "cut short" in comment, comment
    # What GitHub holds of the publish it cut short is looked up and named (read-only): the
    # branch at the run's commit, the pull request if it was opened; nothing sent again.
    tip = step.repo.refs[BRANCH]
    pulls = [i for i in step.repo.issues.values() if i.pull is not None]
    evidence = unescaped(comment.partition("**Evidence**")[2].partition("**Handoff**")[0])
    assert f"the fix commit {tip} was pushed" in evidence, comment
    assert "none recorded" not in evidence, comment
    if point == "github:POST git/refs:after":
        assert not pulls
        assert "no pull request was opened" in evidence, comment
    else:
        (pull,) = pulls
        assert f"pull request #{pull.number} was opened" in evidence, comment
        assert f"/pull/{pull.number}" in evidence, comment


def test_a_cleanup_whose_comment_failed_is_settled_cut_short_by_the_next_run(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    """The cleanup's comment write fails (the settle is kept unsettled in the state); the job
    run again writes the handoff the comment lacks, with the same wording: cut short."""
    step = solve_step(tmp_path, github_server)
    crash_at(step, "github:POST git/refs:after")
    github_server.faults.add(Fault("403", operation="issues/update-comment", times=99))
    cleaned = run(step, HOLON_PHASE="cleanup")
    github_server.faults.clear()
    assert cleaned.returncode in (0, 1), cleaned.stdout + cleaned.stderr
    assert any(f[1] == "issues/update-comment" for f in github_server.faults.fired)
    (comment,) = step.holon_comments(1)
    assert "`working`" in comment, comment  # the cleanup's write was refused
    rerun(step)
    closure = assert_consistent(step, github_server)
    assert closure["detail"] == CUT_SHORT, closure
    (comment,) = step.holon_comments(1)
    assert "`userinterlude`" in comment, comment
    assert "stopped" not in comment, comment
    assert "cut short" in comment, comment
