"""Budgets as closure through the real controller: a skill run past the subject's or the day's
limit is not performed, whoever decided it; the subject waits on the operator with the figure
and how to continue (never a success, never a failure, never silent), and the day's spend is
recorded per attempt so merged copies of the state lose none of it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from holon.closure.mapping import EXIT_HUMAN
from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.loop import Controller, Journals
from holon.controller.memory import Spend, SubjectMemory
from holon.controller.policy import parse_policy
from holon.controller.spending import day_spend
from holon.executor.executor import build_executor
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.intent import ActionIntent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import Record, ServeState, merge
from tests.controller.conftest import Clock, comment_event

POLICY = """\
version: 1
settings:
  budgets: {budgets}
  prices:
    "claude-*": {{input_per_mtok: 3, output_per_mtok: 15}}
rules:
  - name: solve
    on: github.issue_comment.created
    command: solve
    do: run_skill
    skill: github-issue-solve
"""
USED = Spend(input_tokens=1000, output_tokens=200, cost_usd=0.006)


class Runs:
    """The runner, faked: each run succeeds and reports `USED`."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.ran: list[str] = []

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        self.ran.append(intent.target.subject())
        return result_of(
            intent, attempt, self.clock(), "succeeded", run_outcome="success", usage=USED
        )


def controller(
    tmp_path: Path, budgets: str, state: ServeState | None = None, name: str = "j"
) -> tuple[Controller, Runs]:
    clock = Clock()
    runs = Runs(clock)
    policy = parse_policy(POLICY.format(budgets=budgets))
    facts = StaticFacts()
    journals = Journals(
        *(Journal(tmp_path / f"{name}-{n}.ndjson", fsync=False) for n in ("e", "d", "a"))
    )
    ctl = Controller(
        state=state if state is not None else ServeState(),
        journals=journals,
        executor=build_executor(dry_run=True, clock=clock, run_skill=runs),
        decider=PolicyDecider(policy, facts),
        facts=facts,
        policy=policy,
        catalog=default_catalog(),
        clock=clock,
        writer="test",
    )
    return ctl, runs


def memory(subject: str, spend: Spend) -> Record:
    data = SubjectMemory(subject=subject, spend=spend).model_dump(mode="json")
    return Record(kind="memory", key=subject, updated_at=Clock()(), writer="test", data=data)


def refusals(ctl: Controller) -> list[dict[str, Any]]:
    return [r for entry in ctl.journals.decisions.read() for r in entry.get("refused") or []]


def test_a_run_past_the_subjects_limit_waits_on_the_operator_with_the_figure(
    tmp_path: Path,
) -> None:
    state = ServeState()
    spent = Spend(input_tokens=400_000, output_tokens=12_000, cost_usd=3.12)
    state.put(memory("issue:7", spent))
    ctl, runs = controller(tmp_path, "{subject_tokens: 400000, subject_cost_usd: 3}", state)
    report = ctl.handle(comment_event("/holon solve", number=7))
    assert runs.ran == []  # not performed
    assert not [r for r in report.results if r.type == "run_skill"]
    line = (
        "issue:7 spent 412,000 of 400,000 tokens ($3.12 of $3.00): raise "
        "`settings.budgets.subject_tokens` in the policy, then comment `/holon solve` to continue"
    )
    wait = ctl.state.get("wait", "spend-limit:issue:7")
    assert wait is not None
    assert (wait.data["on"], wait.data["reason"], wait.data["until_command"]) == (
        "operator",
        line,
        True,
    )
    closure = report.closures["issue:7"]
    assert (closure.closure_outcome, closure.waiting_reason) == (
        "waiting",
        "awaiting_operator_input",
    )
    assert closure.lifecycle_outcome == "blocked"
    assert closure.closure().detail == f"waiting on an operator decision: {line}"
    assert report.exit_code == EXIT_HUMAN  # waiting on a human: neither success nor failure
    (refused,) = refusals(ctl)
    assert (refused["guard"], refused["reason"]) == ("spend", line)

    # The operator raises the limit and asks again: the wait is lifted and the run starts.
    raised, runs = controller(tmp_path, "{subject_tokens: 1000000}", ctl.state, name="k")
    report = raised.handle(comment_event("/holon solve", number=7, comment_id=2))
    assert runs.ran == ["issue:7"]
    assert raised.state.get("wait", "spend-limit:issue:7") is None
    assert report.closures["issue:7"].closure_outcome == "completed"


def test_asking_again_without_raising_the_limit_waits_again(tmp_path: Path) -> None:
    state = ServeState()
    state.put(memory("issue:7", Spend(input_tokens=500)))
    ctl, runs = controller(tmp_path, "{subject_tokens: 500}", state)
    ctl.handle(comment_event("/holon solve", number=7))
    report = ctl.handle(comment_event("/holon solve", number=7, comment_id=2))
    assert runs.ran == []
    assert ctl.state.get("wait", "spend-limit:issue:7") is not None
    assert report.closures["issue:7"].waiting_reason == "awaiting_operator_input"
    assert len(refusals(ctl)) == 2


def test_the_days_limit_holds_every_subject_until_the_next_utc_day(tmp_path: Path) -> None:
    ctl, runs = controller(tmp_path, "{day_tokens: 2000}")
    ctl.handle(comment_event("/holon solve", number=1))
    ctl.handle(comment_event("/holon solve", number=2, comment_id=2))
    assert runs.ran == ["issue:1", "issue:2"]  # 1,200 then 2,400 tokens spent today
    assert day_spend(ctl.state, "2026-11-21") == USED + USED
    report = ctl.handle(comment_event("/holon solve", number=3, comment_id=3))
    assert runs.ran == ["issue:1", "issue:2"]
    reason = ctl.state.get("wait", "spend-limit:issue:3").data["reason"]  # type: ignore[union-attr]
    assert reason == (
        "the repository spent 2,400 of 2,000 tokens ($0.01) on 2026-11-21 (UTC): wait for "
        "2026-11-22 UTC or raise `settings.budgets.day_tokens` in the policy, then comment "
        "`/holon solve` to continue"
    )
    assert report.closures["issue:3"].waiting_reason == "awaiting_operator_input"
    # The next UTC day starts from nothing: the command runs.
    ctl.parts.clock.now += timedelta(days=1)  # type: ignore[attr-defined]
    ctl.handle(comment_event("/holon solve", number=3, comment_id=4))
    assert runs.ran == ["issue:1", "issue:2", "issue:3"]


def test_no_limit_no_wait(tmp_path: Path) -> None:
    state = ServeState()
    state.put(memory("issue:7", Spend(input_tokens=10**9, cost_usd=10**4)))
    ctl, runs = controller(tmp_path, "{}", state)
    ctl.handle(comment_event("/holon solve", number=7))
    assert runs.ran == ["issue:7"]


def test_two_copies_adding_the_same_day_lose_nothing_when_merged(tmp_path: Path) -> None:
    one, _ = controller(tmp_path, "{}", name="one")
    two, _ = controller(tmp_path, "{}", name="two")
    one.handle(comment_event("/holon solve", number=1))
    two.handle(comment_event("/holon solve", number=2, comment_id=2))
    merged = merge(one.state, two.state)
    assert day_spend(merged, "2026-11-21") == USED + USED
    keys = sorted(r.key for r in merged.live("spend"))
    assert len(keys) == 2
    assert all(k.startswith("2026-11-21/") for k in keys)
    # The design's whole-day record, if a writer keeps one, is counted too.
    merged.put(
        Record(
            kind="spend", key="2026-11-21", updated_at=Clock()(), writer="x", data=USED.model_dump()
        )
    )
    assert day_spend(merged, "2026-11-21").tokens == 3 * USED.tokens
    assert day_spend(merged, "2026-11-22") == Spend()
