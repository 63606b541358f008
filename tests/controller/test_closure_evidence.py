"""A subject's closure through the real loop: the agent's question, the current unit of work, and
missing data that never becomes success. Skill runs use a real local agent process."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.closure.derive import derive_closure
from holon.closure.record import ClosureRecord
from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.ledger import StateLedger
from holon.controller.loop import Controller, Journals
from holon.controller.policy import load_policy
from holon.executor.executor import build_executor
from holon.executor.handlers import RunSkillHandler
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import Record, ServeState
from tests.conftest import python_agent
from tests.controller.conftest import Clock, comment_event

SUCCESS = {"status": "completed", "outcome": "success"}
QUESTION = "Which database should the cache use? Would you like me to pick SQLite?"


def _controller(tmp_path: Path, agent: list[str]) -> Controller:
    clock = Clock()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("hello\n")
    policy = load_policy(None)
    facts = StaticFacts()
    run_skill = RunSkillHandler(
        workspace=workspace,
        output_root=tmp_path / "runs",
        clock=clock,
        runtime="local",
        agent=agent,
        image=None,
        describe=lambda skill: f"run {skill}",
    )
    journals = Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in "eda"))
    return Controller(
        state=ServeState(),
        journals=journals,
        # Not a dry run: GitHub effects (comments, labels) fail honestly in this build.
        executor=build_executor(dry_run=False, clock=clock, run_skill=run_skill),
        decider=PolicyDecider(policy, facts),
        facts=facts,
        policy=policy,
        catalog=default_catalog(),
        clock=clock,
        writer="test",
        checkpoint=lambda: None,
    )


def _closure(ctl: Controller, subject: str) -> ClosureRecord:
    record = ctl.state.get("closure", subject)
    assert record is not None
    return ClosureRecord.model_validate(record.data)


def _later(ctl: Controller) -> None:
    clock = ctl.clock
    assert isinstance(clock, Clock)
    clock.now += timedelta(minutes=5)


def test_a_runs_question_closes_askuserquestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = {
        "status": "completed",
        "outcome": "needs_human",
        "question": {"id": "q-db", "text": QUESTION},
    }
    ctl = _controller(tmp_path, python_agent(tmp_path, manifest, exit_code=2))
    ctl.handle(comment_event("/holon solve", number=3))
    closure = _closure(ctl, "issue:3")
    assert closure.lifecycle_outcome == "askuserQuestion"
    assert (closure.closure_outcome, closure.waiting_reason) == (
        "waiting",
        "awaiting_operator_input",
    )
    assert closure.operator_wait == "question"
    assert closure.question is not None
    assert (closure.question.id, closure.question.text) == ("q-db", QUESTION)
    assert closure.exit_code == 2
    # The question survived the state: the handoff of that closure, in every format, carries
    # it as the operator's required input (it contains a softener phrase, quoted as data).
    path = tmp_path / "closure.json"
    path.write_text(json.dumps(closure.model_dump(mode="json")))
    for fmt in ("comment", "summary", "text"):
        assert main(["handoff", "render", str(path), "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "askuserQuestion" in out
        assert "q\\-db" in out or "q-db" in out
        assert "pick SQLite" in out


def test_needs_human_without_question_is_an_operator_decision(tmp_path: Path) -> None:
    manifest = {"status": "completed", "outcome": "needs_human"}
    ctl = _controller(tmp_path, python_agent(tmp_path, manifest, exit_code=2))
    ctl.handle(comment_event("/holon solve", number=3))
    closure = _closure(ctl, "issue:3")
    assert (closure.lifecycle_outcome, closure.operator_wait) == ("blocked", "other")
    assert closure.question is None


def test_an_old_side_effect_failure_is_not_evidence_about_later_work(tmp_path: Path) -> None:
    ctl = _controller(tmp_path, python_agent(tmp_path, SUCCESS))
    ctl.handle(comment_event("/holon help", number=4, comment_id=1))
    assert _closure(ctl, "issue:4").closure_outcome == "failed"  # the usage comment failed
    _later(ctl)
    ctl.handle(comment_event("/holon solve", number=4, comment_id=2))
    closure = _closure(ctl, "issue:4")
    assert (closure.closure_outcome, closure.lifecycle_outcome) == ("completed", "finished")
    # The failed intent is still in the state (not pruned): it is just not current.
    assert any(r.status == "failed" for r in ctl.ledger.intent_records("issue:4"))


def test_a_side_effect_failure_within_the_current_unit_still_fails_it(tmp_path: Path) -> None:
    ctl = _controller(tmp_path, python_agent(tmp_path, SUCCESS))
    ctl.handle(comment_event("/holon solve", number=4, comment_id=1))
    assert _closure(ctl, "issue:4").closure_outcome == "completed"
    _later(ctl)
    ctl.handle(comment_event("/holon help", number=4, comment_id=2))
    closure = _closure(ctl, "issue:4")
    assert (closure.closure_outcome, closure.rule) == ("failed", "terminal_failure")
    assert closure.deciding_items[0].startswith("action:")


def test_a_new_run_replaces_the_previous_runs_question(tmp_path: Path) -> None:
    asked = {"status": "completed", "outcome": "needs_human", "question": {"id": "q", "text": "A?"}}
    ctl = _controller(tmp_path, python_agent(tmp_path, asked, exit_code=2))
    ctl.handle(comment_event("/holon solve", number=6, comment_id=1))
    assert _closure(ctl, "issue:6").lifecycle_outcome == "askuserQuestion"
    _later(ctl)
    # The operator answered; the next run completes.
    assert isinstance(ctl.parts.executor.handlers["run_skill"], RunSkillHandler)
    (tmp_path / "second").mkdir()
    ctl.parts.executor.handlers["run_skill"].agent = python_agent(tmp_path / "second", SUCCESS)
    ctl.handle(comment_event("/holon solve use SQLite", number=6, comment_id=2))
    assert _closure(ctl, "issue:6").lifecycle_outcome == "finished"


def test_a_unit_without_evidence_drops_the_previous_units_closure(tmp_path: Path) -> None:
    ctl = _controller(tmp_path, python_agent(tmp_path, SUCCESS))
    ctl.handle(comment_event("/holon help", number=7, comment_id=1))
    assert _closure(ctl, "issue:7").closure_outcome == "failed"
    _later(ctl)
    ctl.parts.executor = build_executor(dry_run=True, clock=ctl.clock, run_skill=None)
    ctl.handle(comment_event("/holon help", number=7, comment_id=2))  # a usage comment, journaled
    assert ctl.state.get("closure", "issue:7") is None


def _run_record(result: dict[str, Any], status: str = "succeeded") -> Record:
    clock = Clock()
    return Record(
        kind="intent",
        key="act_run",
        status=status,
        updated_at=clock.now,
        writer="t",
        data={"subject": "issue:9", "type": "run_skill", "skill": "s", "result": result},
    )


@pytest.mark.parametrize(
    ("status", "result"),
    [
        ("succeeded", {"status": "succeeded"}),  # no run_outcome recorded
        ("succeeded", {"status": "succeeded", "run_outcome": None}),
        ("succeeded", {"status": "succeeded", "run_outcome": "great"}),  # unknown outcome
        ("succeeded", {}),
        ("weird", {"run_outcome": "success"}),  # an intent status this build does not know
        ("failed", {"run_outcome": "success"}),
        ("expired", {}),
    ],
)
def test_missing_or_unknown_run_data_is_never_success(status: str, result: dict[str, Any]) -> None:
    state = ServeState()
    state.put(_run_record(result, status))
    evidence = StateLedger(state).evidence("issue:9")
    assert evidence is not None
    closure = derive_closure(evidence)
    assert closure.closure_outcome == "failed"


def test_an_unreadable_recorded_question_still_needs_a_human() -> None:
    state = ServeState()
    state.put(
        _run_record({"status": "succeeded", "run_outcome": "needs_human", "question": {"id": ""}})
    )
    evidence = StateLedger(state).evidence("issue:9")
    assert evidence is not None
    closure = derive_closure(evidence)
    assert (closure.waiting_reason, closure.operator_wait) == ("awaiting_operator_input", "other")


def test_stop_then_solve_again_starts_a_new_unit(tmp_path: Path) -> None:
    asked = {"status": "completed", "outcome": "needs_human", "question": {"id": "q", "text": "A?"}}
    ctl = _controller(tmp_path, python_agent(tmp_path, asked, exit_code=2))
    ctl.handle(comment_event("/holon solve", number=8, comment_id=1))
    assert _closure(ctl, "issue:8").lifecycle_outcome == "askuserQuestion"
    _later(ctl)
    ctl.handle(comment_event("/holon stop", number=8, comment_id=2))
    # The stop is an interruption within the unit: it outranks the question (both rule 2).
    stopped = _closure(ctl, "issue:8")
    assert stopped.lifecycle_outcome == "userinterlude"
    assert stopped.detail == "stopped by Codertocat (stop_command)"  # who, not just "the user"
    _later(ctl)
    (tmp_path / "second").mkdir()
    handler = ctl.parts.executor.handlers["run_skill"]
    assert isinstance(handler, RunSkillHandler)
    handler.agent = python_agent(tmp_path / "second", SUCCESS)
    ctl.handle(comment_event("/holon solve", number=8, comment_id=3))
    closure = _closure(ctl, "issue:8")
    assert (closure.lifecycle_outcome, closure.question) == ("finished", None)


def test_evidence_of_a_subject_with_only_a_wait_or_nothing() -> None:
    # The shortcut for a subject with no records must not skip one that has only a wait.
    from datetime import UTC, datetime

    from holon.controller.ledger import StateLedger
    from holon.state.model import Record, ServeState

    state = ServeState()
    data = {"subject": "issue:7", "on": "task", "task_id": "t1"}
    at = datetime(2026, 1, 1, tzinfo=UTC)
    state.put(Record(kind="wait", key="w1", status="live", updated_at=at, writer="w", data=data))
    ledger = StateLedger(state)
    evidence = ledger.evidence("issue:7")
    assert evidence is not None
    assert [item.id for item in evidence.items] == ["task:t1:w1", "wait:w1"]
    assert ledger.evidence("issue:8") is None
