"""A skill run handed on (`Deferred`): the decide side leaves it inflight and journals it; the
side that finds it inflight collects exactly that attempt (holon/controller/attempts.py)."""

from __future__ import annotations

from pathlib import Path

from holon.controller.decide import PolicyDecider
from holon.controller.facts import StaticFacts
from holon.controller.journals import Journals
from holon.controller.parts import LoadedState, Parts
from holon.controller.passes import run_pass
from holon.controller.policy import load_policy
from holon.controller.recovery import recover
from holon.executor.deferral import Deferred
from holon.executor.executor import build_executor
from holon.executor.handlers import Handler, result_of
from holon.executor.result import ActionResult
from holon.intent import ActionIntent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.controller.conftest import Clock, comment_event


class Defer:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        self.calls.append(attempt)
        raise Deferred(f"{intent.id}-{attempt}", f"deferred to run job {intent.id}-{attempt}")


class Collect:
    def __init__(self, clock: Clock, status: str) -> None:
        self.clock, self.status = clock, status
        self.calls: list[int] = []

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        self.calls.append(attempt)
        if self.status == "failed":
            return result_of(
                intent, attempt, self.clock(), "failed", error="the run job left no output"
            )
        return result_of(
            intent,
            attempt,
            self.clock(),
            "succeeded",
            run_id=f"{intent.id}-{attempt}",
            run_status="completed",
            run_outcome="success",
        )


def _parts(tmp_path: Path, handler: Handler) -> Parts:
    clock = Clock()
    static = StaticFacts()
    policy = load_policy(None)
    return Parts(
        decider=PolicyDecider(policy, static),
        executor=build_executor(dry_run=False, clock=clock, run_skill=handler),
        facts=static,
        policy=policy,
        catalog=default_catalog(),
        journals=Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in "eda")),
        clock=clock,
        writer="test",
    )


def test_a_deferred_run_stays_inflight_journaled_and_waits_on_its_task(tmp_path: Path) -> None:
    defer = Defer()
    parts, loaded = _parts(tmp_path, defer), LoadedState.of(ServeState())
    report = run_pass(comment_event("/holon solve", number=3), loaded, parts)
    assert defer.calls == [1]  # handed on once: not retried as a failure
    (intent,) = report.deferred
    assert report.results == []
    assert report.intents == []
    assert report.ended_runs == []
    record = loaded.state.get("intent", intent.id)
    assert record is not None
    assert record.status == "inflight"
    assert record.data["deferred"]["attempt"] == 1
    assert record.data["deferred"]["run"] == f"{intent.id}-1"
    assert list(parts.journals.actions.read()) == []  # nothing was performed
    deferred = [d for d in parts.journals.decisions.read() if d["outcome"] == "deferred"]
    assert [d["intents"][0]["id"] for d in deferred] == [intent.id]
    closure = report.closures["issue:3"]
    # Waiting on the run job's result: never success, never re-run by itself.
    assert (closure.closure_outcome, closure.waiting_reason) == ("waiting", "awaiting_task_result")
    assert closure.closure_outcome != "completed"
    # The same skill on the same subject is not decided twice while it is handed on.
    again = run_pass(comment_event("/holon solve", number=3, comment_id=2), loaded, parts)
    assert again.deferred == []
    assert defer.calls == [1]


def _deferred_state(tmp_path: Path) -> tuple[LoadedState, Parts]:
    parts, loaded = _parts(tmp_path, Defer()), LoadedState.of(ServeState())
    run_pass(comment_event("/holon solve", number=3), loaded, parts)
    return loaded, parts


def test_the_collecting_side_settles_exactly_the_deferred_attempt(tmp_path: Path) -> None:
    loaded, decided = _deferred_state(tmp_path)
    collect = Collect(Clock(), "succeeded")
    parts = _parts(tmp_path, collect)
    parts.journals = decided.journals  # the events journal holds the deciding event
    report = recover(LoadedState.of(loaded.state), parts)
    assert collect.calls == [1]
    (result,) = report.results
    assert (result.status, result.attempt) == ("succeeded", 1)
    assert report.closures["issue:3"].closure_outcome == "completed"
    assert [e.type for e in report.follow_ups] == ["holon.run.settled"]


def test_a_failed_collection_is_not_retried_by_a_collector(tmp_path: Path) -> None:
    loaded, decided = _deferred_state(tmp_path)
    collect = Collect(Clock(), "failed")
    parts = _parts(tmp_path, collect)
    parts.journals = decided.journals
    report = recover(LoadedState.of(loaded.state), parts)
    assert collect.calls == [1]  # another attempt would need another run job
    (result,) = report.results
    assert result.error == "the run job left no output"
    assert report.closures["issue:3"].closure_outcome == "failed"


def test_a_restored_deferral_record_only_narrows_what_is_attempted(tmp_path: Path) -> None:
    loaded, decided = _deferred_state(tmp_path)
    (record,) = loaded.ledger.inflight()
    data = dict(record.data)
    data["deferred"] = {"attempt": 99, "run": "x"}  # beyond the policy's attempts: ignored
    loaded.state.put(record.model_copy(update={"data": data}))
    collect = Collect(Clock(), "failed")
    parts = _parts(tmp_path, collect)
    parts.journals = decided.journals
    recover(LoadedState.of(loaded.state), parts)
    assert collect.calls == list(range(1, parts.policy.settings.max_attempts + 1))


def test_a_deferred_run_found_by_a_later_decide_is_handed_on_again(tmp_path: Path) -> None:
    loaded, decided = _deferred_state(tmp_path)
    defer = Defer()
    parts = _parts(tmp_path, defer)
    parts.journals = decided.journals
    report = recover(LoadedState.of(loaded.state), parts)
    assert defer.calls == [1]
    assert len(report.deferred) == 1


class Keep:
    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        raise Deferred(f"{intent.id}-{attempt}", "still elsewhere", keep=True)


def test_a_deferral_that_keeps_leaves_who_took_it_and_when(tmp_path: Path) -> None:
    loaded, decided = _deferred_state(tmp_path)
    (record,) = loaded.ledger.inflight()
    before = dict(record.data["deferred"])
    parts = _parts(tmp_path, Keep())
    parts.journals = decided.journals
    parts.clock.now = parts.clock.now.replace(hour=18)  # type: ignore[attr-defined]
    report = recover(LoadedState.of(loaded.state), parts)
    assert len(report.deferred) == 1
    (after,) = LoadedState.of(loaded.state).ledger.inflight()
    assert after.data["deferred"] == before
