"""SIGKILL at each write point of the Action's `/holon review` story (tests/crash/pr_crash.py):
state saves, journal lines, the controller's points, and every GitHub write before it is sent
and after GitHub answered it (the comment, the check run, the review), then the job run again:
one review on the head, one comment settled `finished`, the check run completed.

A review GitHub may have taken before the kill is found again on the restart by Holon's login,
its marker and the reviewed commit. A kill followed by the composite's cleanup step
(`cleanup:POINT`) leaves what GitHub may have taken undecided: the work waits on the operator.
By default a sample of the ambiguous points; `HOLON_FAULTS_FULL=1` every passing of every point
(the worktree's, `workspace.worktree`, too) and each GitHub write answered, then the cleanup.
"""

from __future__ import annotations

from pathlib import Path

from tests.crash.pr_crash import killed_at_each_point

FAMILIES = {
    "state.save", "journal.events", "journal.decisions", "journal.actions",
    "after_effect_before_journal", "after_journal_before_state", "workspace.worktree",
    "github:POST issues/{n}/comments", "github:PATCH issues/comments/{n}",
    "github:POST check-runs", "github:PATCH check-runs/{n}",
    "github:POST pulls/{n}/reviews",
}  # fmt: skip
SAMPLE = [
    "github:POST pulls/{n}/reviews:after",
    "github:PATCH issues/comments/{n}:before",  # the final settle: names the review's commit
    "cleanup:github:POST pulls/{n}/reviews:after",
]


def test_killed_at_each_write_point_then_run_again(tmp_path: Path) -> None:
    killed_at_each_point(tmp_path, "review", FAMILIES, SAMPLE)
