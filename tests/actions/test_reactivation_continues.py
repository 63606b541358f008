"""A re-activation that runs the unit's work for real closes the unit on that run: the dry run
that left the work to do (continuable) is done by it, not a task left open beside it."""

from __future__ import annotations

from pathlib import Path

from tests.actions.test_reactivate import closures, dispatch_event, reactivate
from tests.controller.conftest import comment_event, make_controller
from tests.controller.test_settled_run import FakeRuns


def test_the_continued_run_closes_the_unit_it_continues(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    assert closures(ctl)["issue:1"].closure_outcome == "continuable"
    (item,) = reactivate(ctl)
    runs = FakeRuns(ctl.clock, "success")  # type: ignore[arg-type]
    ctl.parts.executor.handlers["run_skill"] = runs  # from now on the runs run
    ctl.handle(dispatch_event("run-1", subject="issue:1", generation=str(item.generation)))
    assert runs.skills == ["github-issue-solve"]  # (its publishing is a follow-up event)
    closure = closures(ctl)["issue:1"]
    assert (closure.closure_outcome, closure.lifecycle_outcome) == ("completed", "finished")
    assert reactivate(ctl) == []  # finished work is not re-activated


def test_a_dry_run_of_another_skill_still_holds_the_unit(tmp_path: Path) -> None:
    """Only the same skill's later run does a dry run's work: the rule is that narrow."""
    from holon.controller.ledger import _done_later
    from holon.state.model import Record

    def run(key: str, skill: str, at: str, *, dry: bool) -> Record:
        data = {"skill": skill, "decided_at": at, "result": {"dry_run": True} if dry else {}}
        return Record(
            kind="intent", key=key, status="succeeded", updated_at=at, writer="t", data=data
        )

    dry = run("a", "github-issue-solve", "2026-01-01T00:00:00+00:00", dry=True)
    same = run("b", "github-issue-solve", "2026-01-01T00:01:00+00:00", dry=False)
    other = run("c", "github-review", "2026-01-01T00:01:00+00:00", dry=False)
    earlier = run("d", "github-issue-solve", "2025-12-31T00:00:00+00:00", dry=False)
    assert _done_later(dry, [dry, same])
    assert not _done_later(dry, [dry, other])
    assert not _done_later(dry, [dry, earlier])
    assert not _done_later(same, [dry, same])
