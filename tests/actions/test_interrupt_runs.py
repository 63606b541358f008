"""`Controller.interrupt` (stops.interrupt_runs): a cancelled workflow run is the user's
interruption of the skill runs it left unfinished, as `/holon stop` is."""

from __future__ import annotations

from pathlib import Path

from holon.controller.loop import Controller
from holon.executor.result import ActionResult
from holon.intent import Target, make_intent
from holon.skills.catalog import default_catalog
from holon.state.model import Record
from tests.controller.conftest import REPO, comment_event, decisions, make_controller


def _inflight(ctl: Controller, status: str = "inflight") -> str:
    now = ctl.clock()
    intent = make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="issue", id="1"),
        args={"skill": "github-issue-solve", "inputs": {}},
        reason="solve",
        decider="policy",
        event_key="k",
        event_id="evt_1",
        at=now,
        skills=default_catalog().names(),
    )
    data = {
        "intent": intent.model_dump(mode="json"),
        "type": "run_skill",
        "subject": "issue:1",
        "skill": "github-issue-solve",
        "event_id": "evt_1",
        "decided_at": now.isoformat(),
        "attempts": 0,
        "result": None,
    }
    record = Record(
        kind="intent", key=intent.id, status=status, updated_at=now, writer="t", data=data
    )
    ctl.state.put(record)
    ctl.ledger.track_intent(record)
    return intent.id


def test_a_cancelled_job_closes_its_runs_as_the_users_interruption(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    key = _inflight(ctl)
    report = ctl.interrupt("the workflow run was cancelled", actor="octocat")
    closure = report.closures["issue:1"]
    assert (closure.closure_outcome, closure.waiting_reason) == (
        "waiting",
        "awaiting_operator_input",
    )
    assert closure.lifecycle_outcome == "userinterlude"
    assert [i.id for i in report.ended_runs] == [key]
    record = ctl.state.get("intent", key)
    assert record is not None
    assert record.status == "cancelled"
    wait = ctl.state.get("wait", f"interrupted:{key}")
    assert wait is not None
    assert wait.data["interruption"] == "cancelled_workflow"
    (entry,) = decisions(ctl)
    assert (entry["outcome"], entry["rationale"]) == ("cancelled", "the workflow run was cancelled")
    # Nothing left to interrupt: a second cleanup changes nothing.
    assert ctl.interrupt("again").closures == {}
    # A later work command lifts the interruption, as it lifts a stop.
    ctl.handle(comment_event("/holon solve"))
    assert ctl.state.get("wait", f"interrupted:{key}") is None


def test_a_run_the_journal_already_settles_is_left_to_recovery(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    key = _inflight(ctl)
    ctl.loaded.executed[key] = ActionResult(
        id=f"{key}:1",
        intent_id=key,
        type="run_skill",
        subject="issue:1",
        attempt=1,
        status="succeeded",
        at=ctl.clock(),
    )
    assert ctl.interrupt("cancelled").closures == {}
    record = ctl.state.get("intent", key)
    assert record is not None
    assert record.status == "inflight"


def test_an_interruption_of_some_runs_leaves_the_others_as_they_are(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    key = _inflight(ctl)
    report = ctl.interrupt("the workflow run was cancelled", actor="octocat", only=["other"])
    assert report.ended_runs == []
    record = ctl.state.get("intent", key)
    assert record is not None
    assert record.status == "inflight"
    report = ctl.interrupt("the workflow run was cancelled", actor="octocat", only=[key])
    assert [i.id for i in report.ended_runs] == [key]
