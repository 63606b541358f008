"""One pass as a library call (holon/controller/passes.py): an envelope, the loaded state and the
injected parts in, a PassReport out, answering for this event's subjects only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest

from holon.controller import passes
from holon.controller.decide import Decision, PolicyDecider
from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.journals import Journals
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import Pass, PassReport
from holon.controller.passes import run_pass
from holon.controller.policy import load_policy
from holon.controller.view import ControllerView
from holon.executor.executor import Executor, build_executor
from holon.executor.handlers import InternalHandler
from holon.executor.result import ActionResult, EffectOutput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import ActionIntent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.controller.conftest import REPO, Clock, comment_event
from tests.gateway.conftest import example

SHA = example("check_suite", "completed")["check_suite"]["head_sha"]


def _parts(tmp_path: Path, *, dry_run: bool = True, **facts: object) -> Parts:
    clock = Clock()
    static = StaticFacts(**facts)  # type: ignore[arg-type]
    policy = load_policy(None)
    return Parts(
        decider=PolicyDecider(policy, static),
        executor=build_executor(dry_run=dry_run, clock=clock, run_skill=None),
        facts=static,
        policy=policy,
        catalog=default_catalog(),
        journals=Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in "eda")),
        clock=clock,
        writer="test",
    )


def test_a_pass_reports_its_decision_intents_results_and_closure(tmp_path: Path) -> None:
    parts, loaded = _parts(tmp_path), LoadedState.of(ServeState())
    env = comment_event("/holon solve", number=3)
    report = run_pass(env, loaded, parts)
    assert (report.kind, report.event_id, report.kept) == ("event", env.id, False)
    (decision,) = report.decisions
    assert decision == next(iter(parts.journals.decisions.read()))  # the journaled entry
    (intent,) = report.intents
    assert (intent.type, intent.args["skill"]) == ("run_skill", "github-issue-solve")
    (result,) = report.results
    assert (result.intent_id, result.dry_run) == (intent.id, True)
    assert report.subjects == ["issue:3"]
    # A dry run is work still to do: continuable, exit 3, a successful job.
    assert report.closures["issue:3"].closure_outcome == "continuable"
    assert (report.exit_code, report.job_conclusion) == (3, "success")
    schema = json.loads((Path(__file__).parents[2] / "schemas/pass.schema.json").read_text())
    jsonschema.validate(report.model_dump(mode="json"), schema)
    assert PassReport.model_validate_json(report.model_dump_json()) == report
    stored = loaded.state.get("closure", "issue:3")
    assert stored is not None
    assert stored.data == report.closures["issue:3"].model_dump(mode="json")


def test_an_old_failure_elsewhere_does_not_decide_a_later_pass(tmp_path: Path) -> None:
    # Without --dry-run and the GitHub edge, the comment on issue 5 fails: issue 5 closes failed.
    loaded = LoadedState.of(ServeState())
    failing = run_pass(
        comment_event("/holon help", number=5), loaded, _parts(tmp_path, dry_run=False)
    )
    assert (failing.exit_code, failing.job_conclusion) == (1, "failure")
    later = run_pass(
        comment_event("/holon solve", number=6, comment_id=2), loaded, _parts(tmp_path)
    )
    assert later.subjects == ["issue:6"]
    assert (later.exit_code, later.job_conclusion) == (3, "success")
    closure = loaded.state.get("closure", "issue:5")
    assert closure is not None
    assert closure.data["closure_outcome"] == "failed"


def test_a_duplicate_touches_nothing_and_a_kept_event_waits_on_the_operator(
    tmp_path: Path,
) -> None:
    parts, loaded = _parts(tmp_path), LoadedState.of(ServeState())
    env = comment_event("/holon solve")
    run_pass(env, loaded, parts)
    again = run_pass(env, loaded, parts)
    assert [d["outcome"] for d in again.decisions] == ["duplicate"]
    assert (again.subjects, again.intents, again.results, again.exit_code) == ([], [], [], 0)
    from holon.controller.pause import pause_record

    loaded.state.put(pause_record(paused=True, by="me", reason="", at=parts.clock(), writer="test"))
    kept = run_pass(comment_event("/holon solve", comment_id=2), loaded, parts)
    assert kept.kept
    assert [d["outcome"] for d in kept.decisions] == ["paused"]
    assert (kept.subjects, kept.exit_code, kept.job_conclusion) == ([], 2, "success")


def _failed_check_on_holon_pr() -> EventEnvelope:
    payload = example("check_suite", "completed")
    payload["check_suite"]["conclusion"] = "failure"
    return normalize("check_suite", payload, via="replay", received_at=datetime.now(UTC))


def test_the_subjects_an_events_intents_act_on_are_settled_too(tmp_path: Path) -> None:
    # A failed check suite asks for a fix of its pull request: the pull request's work changed.
    holon_pr = PullFacts(
        approved=False, stale=False, head_sha=SHA, head_ref="holon/issue-1", same_repo=True
    )
    parts = _parts(tmp_path, pulls={(REPO, 2): holon_pr})
    report = run_pass(_failed_check_on_holon_pr(), LoadedState.of(ServeState()), parts)
    (intent,) = report.intents
    assert (intent.type, intent.target.subject()) == ("run_skill", "pull_request:2")
    suite = example("check_suite", "completed")["check_suite"]["id"]
    assert report.subjects == [f"check_suite:{suite}", "pull_request:2"]
    assert list(report.closures) == ["pull_request:2"]  # the suite itself has no work
    assert report.exit_code == 3


class _Commenter:
    """A stand-in for the GitHub edge's comment handler: says what it made."""

    def __init__(self, clock: Clock) -> None:
        self.inner = InternalHandler(clock)

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        made = EffectOutput(
            url="https://github.com/Codertocat/Hello-World/issues/1#c9", comment_id=9
        )
        return self.inner(intent, attempt).model_copy(update={"output": made})


def test_what_an_effect_produced_is_reported_and_kept_with_the_intent(tmp_path: Path) -> None:
    parts, loaded = _parts(tmp_path), LoadedState.of(ServeState())
    assert isinstance(parts.clock, Clock)
    parts.executor = Executor({"comment": _Commenter(parts.clock)}, parts.clock)
    report = run_pass(comment_event("/holon help"), loaded, parts)
    (result,) = report.results
    assert result.output is not None
    assert result.output.comment_id == 9
    (line,) = parts.journals.actions.read()
    assert line["output"]["comment_id"] == 9
    (record,) = loaded.state.live("intent")
    assert record.data["result"]["output"]["url"].endswith("#c9")


def test_an_events_target_is_made_once_and_never_lent_to_another_event() -> None:
    from holon.controller.decide import target_of

    first, second = comment_event("hi", number=7), comment_event("hi", number=8)
    assert target_of(first) is target_of(first)
    assert target_of(second).subject() == "issue:8"
    assert target_of(first).subject() == "issue:7"
    same = first.model_copy()  # equal, but another envelope: its own answer
    assert target_of(same) == target_of(first)


def test_a_decision_proposing_nothing_is_judged_as_the_full_guard_would(tmp_path: Path) -> None:
    from holon.controller.decide import Decision
    from holon.controller.guarding import Verdict, judge
    from holon.controller.pass_report import Pass

    parts, loaded = _parts(tmp_path), LoadedState.of(ServeState())
    for association, authorized in (("OWNER", True), ("NONE", False)):
        env = comment_event("/holon solve", number=4, association=association)
        p = Pass(parts, loaded, "event", env.id)
        verdict = judge(p, env, Decision("policy", "no rule matches"))
        assert verdict == Verdict([], [], [], authorized, None, [], [])
        assert p.decisions == []
        assert loaded.state.records == {}  # nothing put, no refusal comment's cooldown


def test_the_policy_decider_reads_the_view_only_when_a_rule_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subject's view is made for a rule that matched, not for every event; the decisions
    are those of deciding with the view made first."""
    made: list[str] = []
    view_of = passes._view
    monkeypatch.setattr(
        passes, "_view", lambda p, subject: made.append(subject) or view_of(p, subject)
    )
    star = {"action": "created", "starred_at": "s", "repository": {"full_name": REPO}}
    at = datetime(2026, 1, 1, tzinfo=UTC)
    events = [
        comment_event("/holon solve", number=3),
        normalize("star", star, via="replay", received_at=at),
    ]
    eager = _parts(tmp_path / "eager")
    eager.decider = _Eager(eager.decider)  # type: ignore[arg-type]
    lazy = _parts(tmp_path / "lazy")
    for parts in (lazy, eager):
        loaded = LoadedState.of(ServeState())
        for env in events:
            run_pass(env, loaded, parts)
    star_subject = f"repository:{REPO}"
    assert made == ["issue:3", "issue:3", star_subject]  # lazily the one matched, eagerly both
    assert list(lazy.journals.decisions.read()) == list(eager.journals.decisions.read())


class _Eager:
    """The policy decider given a view made beforehand (as any other decider is)."""

    def __init__(self, inner: PolicyDecider) -> None:
        self.inner = inner
        self.name = inner.name

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        return self.inner.decide(envelope, view)


def test_deleting_what_is_not_there_does_not_read_the_clock(tmp_path: Path) -> None:
    """A pass deletes the queued mark of every event, most of which have none: no clock read,
    no tombstone; a live record is tombstoned at the clock's time."""
    parts = _parts(tmp_path)
    reads: list[datetime] = []
    clock = parts.clock

    def counted() -> datetime:
        reads.append(clock())
        return reads[-1]

    parts.clock = counted
    p = Pass(parts, LoadedState.of(ServeState()), "event", "evt_1")
    p.delete("meta", "queued:evt_1")
    assert (reads, dict(p.state.records)) == ([], {})
    p.put("meta", "queued:evt_1", "live", {})
    p.delete("meta", "queued:evt_1")
    assert len(reads) == 2
    tombstone = p.state.records["meta:queued:evt_1"]
    assert tombstone.deleted
    assert tombstone.updated_at == reads[-1]
    p.delete("meta", "queued:evt_1")  # already a tombstone: nothing more
    assert len(reads) == 2
