"""SIGKILL at each write point of the Action's `/holon fix` story (tests/crash/pr_crash.py):
state saves, journal lines, the controller's points, and every GitHub write before it is sent
and after GitHub answered it (the comment, the check runs, the tree, the commit, the ref update
that pushes the fix, the thread's reply), then the job run again: the fix is pushed once (the
branch one commit past the head), the thread replied to once, one comment settled `finished`.

A write GitHub may have taken before the kill is found again on the restart: the branch by its
tip (this run's commit on the head), the reply by its marker and commit line, the comment by its
marker, the check run by its head and marker. A kill followed by the composite's cleanup step
(`cleanup:POINT`) leaves what GitHub may have taken undecided: the work waits on the operator.
By default a sample of the ambiguous points; `HOLON_FAULTS_FULL=1` every passing of every point
(the worktree's, `workspace.worktree`, too) and each GitHub write answered, then the cleanup.
"""

from __future__ import annotations

from pathlib import Path

from tests.crash.pr_crash import killed_at_each_point

# Every write point the clean story passes (a new one must be added here).
FAMILIES = {
    "state.save", "journal.events", "journal.decisions", "journal.actions",
    "after_effect_before_journal", "after_journal_before_state", "workspace.worktree",
    "github:POST issues/{n}/comments", "github:PATCH issues/comments/{n}",
    "github:POST check-runs", "github:PATCH check-runs/{n}",
    "github:POST git/trees", "github:POST git/commits", "github:PATCH git/refs/{ref}",
    "github:POST pulls/{n}/comments/{n}/replies",
}  # fmt: skip
SAMPLE = [
    "github:PATCH git/refs/{ref}:after",
    "github:PATCH issues/comments/{n}:before",  # the final settle: names the fix commit
    "cleanup:github:PATCH git/refs/{ref}:after",
    "cleanup:github:POST pulls/{n}/comments/{n}/replies:after",
]


def test_killed_at_each_write_point_then_run_again(tmp_path: Path) -> None:
    killed_at_each_point(tmp_path, "fix", FAMILIES, SAMPLE)
