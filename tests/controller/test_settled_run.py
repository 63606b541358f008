"""A settled skill run becomes Holon's own event (`holon.run.settled`), which the default policy
maps to publishing it (`github-publish`) when the run succeeded: one pass makes the event, the
next decides on it (docs/policy.md, "Holon's own events")."""

from __future__ import annotations

from pathlib import Path

from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.follow_ups import QUEUED, queued, settled_event
from holon.controller.journals import Journals
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import PassReport
from holon.controller.passes import run_pass
from holon.controller.policy import load_policy
from holon.controller.recovery import recover
from holon.executor.executor import build_executor
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.gateway.github import normalize
from holon.intent import ActionIntent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.controller.conftest import Clock, comment_event
from tests.gateway.conftest import example


class FakeRuns:
    """The runner's place: every skill run ends with `outcome`; publishing always succeeds."""

    def __init__(self, clock: Clock, outcome: str) -> None:
        self.clock, self.outcome = clock, outcome
        self.skills: list[str] = []

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        skill = str(intent.args["skill"])
        self.skills.append(skill)
        if skill == "github-publish":
            return result_of(
                intent, attempt, self.clock(), "succeeded", run_status="completed",
                run_outcome="success",
            )  # fmt: skip
        status = "succeeded" if self.outcome != "failure" else "failed"
        return result_of(
            intent, attempt, self.clock(), status, run_id=f"{intent.id}-{attempt}",
            run_output_path=f"/runs/{intent.id}-{attempt}", run_status="completed",
            run_outcome=self.outcome,
        )  # fmt: skip


def _parts(tmp_path: Path, runs: FakeRuns) -> Parts:
    policy, facts = load_policy(None), StaticFacts()
    return Parts(
        decider=PolicyDecider(policy, facts),
        executor=build_executor(dry_run=False, clock=runs.clock, run_skill=runs),
        facts=facts,
        policy=policy,
        catalog=default_catalog(),
        journals=Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in "eda")),
        clock=runs.clock,
        writer="test",
    )


def _solve(tmp_path: Path, outcome: str) -> tuple[Parts, LoadedState, PassReport, FakeRuns]:
    runs = FakeRuns(Clock(), outcome)
    parts, loaded = _parts(tmp_path, runs), LoadedState.of(ServeState())
    report = run_pass(comment_event("/holon solve", number=3), loaded, parts)
    return parts, loaded, report, runs


def test_a_successful_issue_solve_run_is_published(tmp_path: Path) -> None:
    parts, loaded, report, runs = _solve(tmp_path, "success")
    (solve,) = report.intents
    (settled,) = report.follow_ups
    assert (settled.type, settled.source, settled.via) == ("holon.run.settled", "holon", "internal")
    assert settled.subject is not None
    assert settled.subject.key() == "issue:3"
    assert settled.dedupe_key == f"holon:run.settled:{solve.id}:1"
    assert settled.payload["run_id"] == f"{solve.id}-1"
    assert settled.payload["skill"] == "github-issue-solve"
    assert settled.actor is not None
    assert settled.payload["actor"] == settled.actor.login
    after = run_pass(settled, loaded, parts)
    (decision,) = after.decisions
    assert decision["rule"] == "publish-settled-run"
    (publish,) = after.intents
    assert publish.args["skill"] == "github-publish"
    assert publish.args["inputs"] == {
        "issue": "3",
        "run": f"{solve.id}-1",
        "skill": "github-issue-solve",
        "actor": settled.actor.login,
    }
    assert runs.skills == ["github-issue-solve", "github-publish"]
    # Publishing continues the solve's unit of work: the subject closes on both, successfully.
    assert after.closures["issue:3"].exit_code == 0
    assert after.follow_ups == []  # a publish is no run: nothing follows it
    # The same settled event again (a replay) is a duplicate: nothing is published twice.
    again = run_pass(settled, loaded, parts)
    assert again.intents == []
    assert again.decisions[0]["outcome"] == "duplicate"


def test_a_failed_run_is_not_published(tmp_path: Path) -> None:
    parts, loaded, report, runs = _solve(tmp_path, "failure")
    (settled,) = report.follow_ups
    assert settled.payload["run_outcome"] == "failure"
    after = run_pass(settled, loaded, parts)
    assert after.intents == []
    assert after.decisions[0]["rationale"] == "no rule matches holon.run.settled"
    assert runs.skills == ["github-issue-solve", "github-issue-solve"]  # retried, never published


def test_a_run_that_needs_a_human_is_not_published(tmp_path: Path) -> None:
    parts, loaded, report, _ = _solve(tmp_path, "needs_human")
    (settled,) = report.follow_ups
    assert run_pass(settled, loaded, parts).intents == []


def test_a_dry_run_makes_no_settled_event(tmp_path: Path) -> None:
    clock = Clock()
    parts = _parts(tmp_path, FakeRuns(clock, "success"))
    parts.executor = build_executor(dry_run=True, clock=clock, run_skill=None)
    report = run_pass(comment_event("/holon solve"), LoadedState.of(ServeState()), parts)
    assert report.intents
    assert report.follow_ups == []


def test_an_automatic_runs_publish_is_not_held_back_by_the_cooldown(tmp_path: Path) -> None:
    runs = FakeRuns(Clock(), "success")
    parts, loaded = _parts(tmp_path, runs), LoadedState.of(ServeState())
    payload = example("issues", "labeled")  # the owner labels their own issue `holon`
    payload["label"]["name"] = "holon"
    labeled = normalize("issues", payload, via="replay", received_at=runs.clock())
    (settled,) = run_pass(labeled, loaded, parts).follow_ups
    after = run_pass(settled, loaded, parts)
    assert [i.args["skill"] for i in after.intents] == ["github-publish"]
    assert after.decisions[0]["refused"] == []
    # Nor does it count as an automatic run: the cooldown runs from the labelled solve.
    record = loaded.state.get("intent", after.intents[0].id)
    assert record is not None
    assert record.data["automatic"] is False


def test_a_settled_runs_event_is_queued_with_it_until_a_pass_handles_it(tmp_path: Path) -> None:
    parts, loaded, report, _ = _solve(tmp_path, "success")
    (settled,) = report.follow_ups
    (record,) = queued(loaded.state)
    # Saved with the settlement, and made again from it exactly as the pass made it.
    assert settled_event(loaded.state, record) == settled
    # A process that stopped here hands it back at the next start, once.
    again = recover(loaded, parts)
    assert again.follow_ups == [settled]
    run_pass(settled, loaded, parts)
    assert queued(loaded.state) == []
    assert recover(loaded, parts).follow_ups == []


def test_a_queued_event_the_state_does_not_back_is_dropped_not_handled(tmp_path: Path) -> None:
    parts, loaded, report, _ = _solve(tmp_path, "success")
    (record,) = queued(loaded.state)
    (solve,) = report.intents
    # A planted or damaged state: the run it names is not settled with a run any more.
    run = loaded.state.get("intent", solve.id)
    assert run is not None
    loaded.state.put(run.model_copy(update={"status": "inflight", "rank": 1}))
    assert settled_event(loaded.state, record) is None
    forged = record.model_copy(update={"key": f"{QUEUED}evt_forged"})
    loaded.state.put(forged)
    loaded.state.put(run)  # the run is settled, but the forged key names no event of it
    report = recover(LoadedState.of(loaded.state), parts)
    assert [e.id for e in report.follow_ups] == [record.key.removeprefix(QUEUED)]
    (refusal,) = report.decisions
    assert (refusal["id"], refusal["outcome"]) == ("dec:evt_forged:queued", "refused")
    assert [r.key for r in queued(loaded.state)] == [record.key]
