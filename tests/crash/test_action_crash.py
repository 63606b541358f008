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

from tests.crash.story import (
    STORY,
    assert_consistent,
    crash_at,
    occurrences,
    rerun,
    run,
    solve_step,
    trace,
)
from tests.support.github_fake.loopback import LoopbackGitHub

# The crash cases: every GitHub write answered (the ambiguous ones) and the pull request's before
# it is sent, the controller's points of both effects, a state save and a line of each journal.
CASES = [
    "github:POST issues/{n}/comments:after",
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
    assert "**Outcome:** `finished`" in comment
    if point in AGAIN:
        # The job run once more changes nothing: the event was handled.
        calls = len(github_server.calls)
        rerun(step)
        assert not [c for c in github_server.calls[calls:] if c.method != "GET"]


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
