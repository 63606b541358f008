"""The controller's gate before a write of the work (controller/frozen.py), with a scripted
trigger check: a changed trigger refuses the write and leaves an operator wait; one that
cannot be read fails the attempt without writing; offline the check is skipped and said; a
re-issued command lifts the wait and runs the work again; Holon's own comments are not held."""

from __future__ import annotations

from pathlib import Path

from holon.controller.frozen import SKIPPED, guarded
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import PassReport
from holon.controller.passes import run_pass
from holon.gateway.trigger import TriggerSnapshot, TriggerVerdict
from holon.intent import ActionIntent, Target
from holon.state.model import Record, ServeState
from tests.controller.conftest import Clock, comment_event
from tests.controller.test_settled_run import FakeRuns, _parts


class ScriptedCheck:
    """Answers each check with the next verdict (the last one repeats)."""

    def __init__(self, *verdicts: TriggerVerdict) -> None:
        self.verdicts = list(verdicts)
        self.seen: list[tuple[str | None, TriggerSnapshot]] = []

    def __call__(self, repo: str | None, snapshot: TriggerSnapshot) -> TriggerVerdict:
        self.seen.append((repo, snapshot))
        return self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]


def record_of(loaded: LoadedState, key: str) -> Record:
    found = loaded.state.get("intent", key)
    assert found is not None
    return found


def solve_and_publish(
    tmp_path: Path, check: ScriptedCheck | None
) -> tuple[Parts, LoadedState, PassReport, FakeRuns]:
    runs = FakeRuns(Clock(), "success")
    parts, loaded = _parts(tmp_path, runs), LoadedState.of(ServeState())
    parts.trigger_check = check
    report = run_pass(comment_event("/holon solve", number=3, comment_id=77), loaded, parts)
    (settled,) = report.follow_ups
    return parts, loaded, run_pass(settled, loaded, parts), runs


def test_the_snapshot_travels_from_the_comment_to_publishing(tmp_path: Path) -> None:
    check = ScriptedCheck(TriggerVerdict())
    _, loaded, after, runs = solve_and_publish(tmp_path, check)
    assert runs.skills == ["github-issue-solve", "github-publish"]
    ((repo, snapshot),) = check.seen  # the agent's run is no write: only publishing is checked
    assert repo == "Codertocat/Hello-World"
    assert (snapshot.kind, snapshot.id, snapshot.number) == ("comment", 77, 3)
    assert snapshot.command == "/holon solve"
    (publish,) = after.intents
    assert record_of(loaded, publish.id).data["trigger_check"] == "unchanged"
    assert after.closures["issue:3"].closure_outcome == "completed"


def test_an_edited_trigger_refuses_publishing_and_waits_on_the_operator(tmp_path: Path) -> None:
    check = ScriptedCheck(TriggerVerdict(change="edited", live_updated_at="2026-11-21T12:05:00Z"))
    parts, loaded, after, runs = solve_and_publish(tmp_path, check)
    assert runs.skills == ["github-issue-solve"]  # publishing was never performed
    (publish,) = after.intents
    record = record_of(loaded, publish.id)
    assert record.status == "refused"
    assert "edited after it triggered this run (at 2026-11-21T12:05:00Z)" in record.data["frozen"]
    closure = after.closures["issue:3"]
    assert (closure.closure_outcome, closure.waiting_reason) == (
        "waiting", "awaiting_operator_input",
    )  # fmt: skip
    assert "re-issue the command to continue" in closure.detail
    assert publish in after.ended_runs  # the comment and check run settle with it
    (entry,) = [d for d in after.decisions if d["outcome"] == "refused"]
    assert entry["refused"][0]["guard"] == "frozen_input"
    assert parts.journals.actions.read()
    assert all(a["intent_id"] != publish.id for a in parts.journals.actions.read())

    # The maintainer re-issues the command: the wait is lifted and the work runs again.
    check.verdicts = [TriggerVerdict()]
    again = run_pass(comment_event("/holon solve", number=3, comment_id=78), loaded, parts)
    assert runs.skills == ["github-issue-solve", "github-issue-solve"]
    (settled,) = again.follow_ups
    final = run_pass(settled, loaded, parts)
    assert runs.skills[-1] == "github-publish"
    assert final.closures["issue:3"].closure_outcome == "completed"


def test_a_deleted_trigger_is_refused_the_same_way(tmp_path: Path) -> None:
    _, _, after, runs = solve_and_publish(tmp_path, ScriptedCheck(TriggerVerdict(change="deleted")))
    assert runs.skills == ["github-issue-solve"]
    assert "was deleted after it triggered this run" in after.closures["issue:3"].detail


def test_an_unreadable_trigger_fails_the_attempt_without_writing(tmp_path: Path) -> None:
    check = ScriptedCheck(TriggerVerdict(error="GitHub answered 502"), TriggerVerdict())
    parts, _loaded, after, runs = solve_and_publish(tmp_path, check)
    # The first attempt failed before writing; the second checked again and published.
    assert runs.skills == ["github-issue-solve", "github-publish"]
    (publish,) = after.intents
    attempts = [a for a in parts.journals.actions.read() if a["intent_id"] == publish.id]
    assert [a["status"] for a in attempts] == ["failed", "succeeded"]
    assert "the trigger could not be checked (GitHub answered 502)" in attempts[0]["error"]


def test_offline_the_check_is_skipped_and_said(tmp_path: Path) -> None:
    _, loaded, after, runs = solve_and_publish(tmp_path, None)
    assert runs.skills == ["github-issue-solve", "github-publish"]
    (publish,) = after.intents
    assert record_of(loaded, publish.id).data["trigger_check"] == SKIPPED


def test_which_writes_are_held_to_their_trigger() -> None:
    snap = TriggerSnapshot(kind="issue", id=3, sha256="0" * 64)
    data = {"trigger": snap.model_dump(mode="json")}

    def intent(type_: str, **args: object) -> ActionIntent:
        return ActionIntent(
            id="act_x", type=type_, target=Target(repo="o/r", kind="issue", id="3"),
            args=dict(args), idempotency_key="k", reason="r", decider="policy", event_id="e",
            created_at=Clock()(),
        )  # fmt: skip

    assert guarded(intent("run_skill", skill="github-publish"), data) == snap
    assert guarded(intent("merge", sha="a" * 40), data) == snap
    assert guarded(intent("close_issue"), data) == snap
    assert guarded(intent("comment", body="x", kind="note"), data) == snap
    # The agent's run writes nothing to GitHub; Holon's own comments carry no agent output.
    assert guarded(intent("run_skill", skill="github-issue-solve"), data) is None
    assert guarded(intent("comment", body="x", kind="usage"), data) is None
    assert guarded(intent("label", label="x"), data) is None
    assert guarded(intent("merge", sha="a" * 40), {}) is None  # no trigger recorded
