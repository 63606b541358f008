"""An attempt journaled by a process killed before it saved the state is settled by the next
start's recovery from the actions journal: what it spent is recorded then, on the attempt's own
day, as the killed process would have (the day's budget and the comment's usage line read it)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.loop import Controller, Journals
from holon.controller.policy import parse_policy
from holon.controller.spending import day_spend
from holon.executor.executor import build_executor
from holon.executor.result import ActionResult
from holon.skills.catalog import default_catalog
from holon.spend import Spend
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.budgets.test_controller_budgets import POLICY, USED, Runs
from tests.controller.conftest import Clock, comment_event


class Killed(Exception):
    """The process killed at a write point (a SIGKILL in the crash suites)."""


def test_a_journaled_attempt_recovery_settles_counts_once_on_its_day(tmp_path: Path) -> None:
    clock = Clock()
    policy = parse_policy(POLICY.format(budgets="{}"))
    journals = Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in ("e", "d", "a")))
    state = ServeState()
    saved: list[ServeState] = []

    def crash(name: str) -> None:
        if name == "after_journal_before_state":
            raise Killed(name)

    def controller(
        state: ServeState, executed: dict[str, ActionResult], killed: bool = False
    ) -> Controller:
        return Controller(
            state=state,
            journals=journals,
            executor=build_executor(dry_run=True, clock=clock, run_skill=Runs(clock)),
            decider=PolicyDecider(policy, StaticFacts()),
            facts=StaticFacts(),
            policy=policy,
            catalog=default_catalog(),
            clock=clock,
            writer="test",
            checkpoint=lambda: saved.append(state.model_copy(deep=True)),
            crashpoint=crash if killed else lambda name: None,
            executed=executed,
        )

    with pytest.raises(Killed):
        controller(state, {}, killed=True).handle(comment_event("/holon solve", number=7))
    # What the killed process saved: the run inflight (before its effect), nothing spent.
    kept = saved[-1]
    assert [r.status for r in kept.live("intent")] == ["inflight"]
    assert day_spend(kept, "2026-11-21") == Spend()

    clock.now += timedelta(days=1)  # the job is run again the next day
    lines = [ActionResult.model_validate(line) for line in journals.actions.read()]
    assert [line.usage for line in lines] == [USED]
    again = controller(kept, {line.intent_id: line for line in lines})
    again.recover()
    assert [r.status for r in kept.live("intent")] == ["succeeded"]
    assert day_spend(kept, "2026-11-21") == USED  # the attempt's day, counted once
    assert day_spend(kept, "2026-11-22") == Spend()
