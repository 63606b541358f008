"""A subject's memory through the real loop: written where work and closures settle, given to
the decider, acted on (a failed run is not repeated blindly), shown by `/holon status`, and
hostile when restored (ignored, never a crash, authorizes nothing)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from holon.controller.decide import Decision, PolicyDecider
from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.loop import Controller, Journals
from holon.controller.memory import SubjectMemory
from holon.controller.memory_record import memory_data, memory_of
from holon.controller.memory_update import empty, fold_decision
from holon.controller.policy import load_policy
from holon.controller.view import ControllerView
from holon.executor.executor import build_executor
from holon.executor.handlers import RunSkillHandler
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import Record, ServeState, merge, prune
from holon.state.store import StateStore
from tests.conftest import python_agent
from tests.controller.conftest import REPO, Clock, comment_event, decisions
from tests.gateway.conftest import example

NUMBER = 2  # the pull request of the check suite example
SHA = example("check_suite", "completed")["check_suite"]["head_sha"]
NEW_SHA = "b" * 40
PR = "pull_request:2"
QUESTION = "Which database should the cache use?"


def _pull(sha: str = SHA) -> PullFacts:
    return PullFacts(
        approved=False, stale=False, head_sha=sha, head_ref="holon/issue-1", same_repo=True
    )


def _controller(
    tmp_path: Path, *, agent: list[str] | None = None, state: ServeState | None = None
) -> Controller:
    """The real controller and executor. Without `agent`, skill runs fail honestly (no agent is
    configured); with one, they run it as a local process. GitHub effects fail (no token)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    policy = load_policy(None)
    facts = StaticFacts(pulls={(REPO, NUMBER): _pull()})
    run_skill = None
    if agent is not None:
        workspace = tmp_path / "ws"
        workspace.mkdir(exist_ok=True)
        (workspace / "README.md").write_text("hello\n")
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
        state=state or ServeState(),
        journals=journals,
        executor=build_executor(dry_run=False, clock=clock, run_skill=run_skill),
        decider=PolicyDecider(policy, facts),
        facts=facts,
        policy=policy,
        catalog=default_catalog(),
        clock=clock,
        writer="test",
        checkpoint=lambda: None,
    )


def _later(ctl: Controller, minutes: int = 11) -> None:
    clock = ctl.clock
    assert isinstance(clock, Clock)
    clock.now += timedelta(minutes=minutes)  # past the cooldown between automatic runs


def _check_failed(n: int, sha: str = SHA) -> EventEnvelope:
    """A check suite on the pull request's head completed with a failure (the n-th such)."""
    payload = example("check_suite", "completed")
    suite = payload["check_suite"]
    suite.update(conclusion="failure", head_sha=sha, updated_at=f"2026-11-21T12:{n:02d}:00Z")
    suite["pull_requests"][0]["head"]["sha"] = sha
    return normalize("check_suite", payload, via="replay", received_at=datetime.now(UTC))


def _outcome(decision: dict[str, Any]) -> list[tuple[str, str]]:
    runs = [("run", i["args"]["skill"]) for i in decision["intents"] if i["type"] == "run_skill"]
    return runs + [(r["guard"], r["reason"]) for r in decision["refused"]]


def _memory(ctl: Controller, subject: str) -> SubjectMemory:
    memory = memory_of(ctl.state, subject)
    assert memory is not None
    return memory


REFUSED = (
    "failed_before",
    f"github-pr-fix failed twice on {SHA[:12]}; a new commit or a /holon command retries",
)


def test_a_failed_run_is_not_repeated_automatically_but_a_command_retries(tmp_path: Path) -> None:
    ctl = _controller(tmp_path)
    ctl.handle(_check_failed(1))
    assert _outcome(decisions(ctl)[-1]) == [("run", "github-pr-fix")]
    memory = _memory(ctl, PR)
    assert memory.failed == {f"github-pr-fix@{SHA}": 2}  # both attempts failed
    assert memory.outcomes == {"failure": 1}
    (attempt,) = memory.recent
    assert attempt.reason is not None
    assert "no agent configured" in attempt.reason
    # The same check fails again: the automatic trigger does not run the fix a third time.
    _later(ctl)
    ctl.handle(_check_failed(2))
    assert _outcome(decisions(ctl)[-1]) == [REFUSED]
    # Refused: nothing ran, so only the decision is new.
    assert _memory(ctl, PR) == memory.model_copy(update={"decisions": memory.decisions + 1})
    # A person's command retries on the same head.
    ctl.handle(comment_event("/holon fix", number=NUMBER, comment_id=9, pr=True))
    assert _outcome(decisions(ctl)[-1]) == [("run", "github-pr-fix")]
    assert _memory(ctl, PR).failed == {f"github-pr-fix@{SHA}": 4}
    # A new commit is a new head: the automatic trigger runs the fix there.
    _later(ctl)
    ctl.handle(_check_failed(3, sha=NEW_SHA))
    assert _outcome(decisions(ctl)[-1]) == [("run", "github-pr-fix")]
    # The decider was given the memory of the pull request, and each decision is counted.
    assert ctl.ledger.view(PR).memory == _memory(ctl, PR)
    assert _memory(ctl, PR).decisions == 4
    assert _memory(ctl, PR).last_closure is not None
    assert _memory(ctl, PR).last_closure.outcome == "failed"  # type: ignore[union-attr]


def test_status_shows_the_memory(tmp_path: Path) -> None:
    ctl = _controller(tmp_path)
    ctl.handle(_check_failed(1))
    ctl.handle(comment_event("/holon status", number=NUMBER, comment_id=5, pr=True))
    (intent,) = decisions(ctl)[-1]["intents"]
    body = intent["args"]["body"]
    assert "Memory of this subject" in body
    assert "history: 1 attempt(s) (1 failure)" in body


def test_a_question_asked_then_answered_and_the_closure_remembered(tmp_path: Path) -> None:
    manifest = {
        "status": "completed",
        "outcome": "needs_human",
        "question": {"id": "q-db", "text": QUESTION},
    }
    ctl = _controller(tmp_path, agent=python_agent(tmp_path, manifest, exit_code=2))
    ctl.handle(comment_event("/holon solve", number=3, comment_id=1))
    memory = _memory(ctl, "issue:3")
    assert memory.outcomes == {"needs_human": 1}
    (asked,) = memory.questions
    assert (asked.question, asked.answered_at) == (QUESTION, None)
    assert memory.last_closure is not None
    assert (memory.last_closure.outcome, memory.last_closure.lifecycle) == (
        "waiting",
        "askuserQuestion",
    )
    status = comment_event("/holon status", number=3, comment_id=2)
    ctl.handle(status)
    assert (
        "open question: Which database should the cache use?"
        in (decisions(ctl)[-1]["intents"][0]["args"]["body"])
    )
    # Someone without write access replying does not answer Holon's question.
    _later(ctl, 1)
    ctl.handle(comment_event("use mongo", number=3, comment_id=3, association="NONE"))
    assert _memory(ctl, "issue:3").questions[-1].answered_at is None
    # The owner's reply does, and the decider deciding on that reply already sees it.
    seen: list[ControllerView] = []
    policy_decider = ctl.parts.decider

    class Watching:
        name = "watching"

        def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
            seen.append(view)
            return policy_decider.decide(envelope, view)

    ctl.parts.decider = Watching()
    _later(ctl, 1)
    ctl.handle(comment_event("SQLite, please", number=3, comment_id=4))
    answered = _memory(ctl, "issue:3").questions[-1]
    assert (answered.answer, answered.answered_by) == ("SQLite, please", "Codertocat")
    assert seen[-1].subject is not None
    assert seen[-1].subject.memory is not None
    assert seen[-1].subject.memory.questions[-1].answer == "SQLite, please"


def test_memory_survives_the_state_file_and_a_poisoned_record_is_ignored(tmp_path: Path) -> None:
    ctl = _controller(tmp_path)
    ctl.handle(_check_failed(1))
    store = StateStore(tmp_path / "state")
    store.save(ctl.state)
    restored = _controller(tmp_path / "b", state=store.load())
    assert memory_of(restored.state, PR) == memory_of(ctl.state, PR)
    _later(restored)
    restored.handle(_check_failed(2))
    assert _outcome(decisions(restored)[-1]) == [REFUSED]  # the memory held across restarts

    # Poisoned copies of the same record: each is ignored, the run is not refused on its word,
    # and the pass neither crashes nor trusts it.
    good = restored.state.get("memory", PR)
    assert good is not None
    poisons: list[dict[str, Any]] = [
        {**good.data, "failed": {f"github-pr-fix@{SHA}": "many"}},  # does not validate
        {**good.data, "subject": "pull_request:99"},  # another subject's memory
        {**good.data, "recent": [{"junk": 1}] * 11},  # beyond its bounds
        {**good.data, "prs": list(range(20_000))},  # larger than any memory
    ]
    for n, data in enumerate(poisons):
        raw = json.loads(store.state_path.read_text())
        raw["records"][f"memory:{PR}"]["data"] = data
        store.state_path.write_text(json.dumps(raw))
        again = _controller(tmp_path / f"p{n}", state=store.load())
        assert again.ledger.view(PR).memory is None
        assert again.ledger.failed_attempts(PR, "github-pr-fix", SHA) == 0
        _later(again)
        again.handle(_check_failed(4))
        kinds = [d["outcome"] for d in decisions(again)]
        assert "memory_unreadable" in kinds
        # Not refused on the poisoned record's word: the fix runs (and fails, no agent here).
        assert _outcome(next(d for d in decisions(again) if d["outcome"] == "decided")) == [
            ("run", "github-pr-fix")
        ]
        # Started afresh from what this pass did.
        fresh = _memory(again, PR)
        assert fresh.attempts_total == 1
        assert fresh.failed == {f"github-pr-fix@{SHA}": 2}


T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _memory_record(memory: SubjectMemory, at: datetime, writer: str) -> Record:
    return Record(
        kind="memory",
        key=memory.subject,
        status="live",
        updated_at=at,
        writer=writer,
        data=memory_data(memory),
    )


def test_merging_two_copies_keeps_the_newer_memory() -> None:
    older = fold_decision(empty(PR))
    newer = fold_decision(fold_decision(empty(PR)))
    a, b = ServeState(), ServeState()
    a.put(_memory_record(older, T0, "a"))
    b.put(_memory_record(newer, T0 + timedelta(minutes=1), "b"))
    for merged in (merge(a, b), merge(b, a)):
        assert memory_of(merged, PR) == newer
    # A newer tombstone beats an older memory too, and merge stays idempotent.
    b.delete("memory", PR, at=T0 + timedelta(minutes=2), writer="b")
    merged = merge(a, b)
    assert memory_of(merged, PR) is None
    assert merge(merged, merged) == merged


def test_prune_keeps_the_memories_of_the_most_recently_active_subjects() -> None:
    state = ServeState()
    for n in range(5):
        state.put(_memory_record(empty(f"issue:{n}"), T0 + timedelta(minutes=n), "t"))
    assert prune(state, now=T0 + timedelta(hours=1), max_memories=3) == 2
    assert [r.key for r in state.live("memory")] == ["issue:2", "issue:3", "issue:4"]


def _inflight(ctl: Controller, key: str, subject: str) -> None:
    """A run left inflight by a process that died (the state restored with it)."""
    clock = ctl.clock
    assert isinstance(clock, Clock)
    data = {
        "subject": subject,
        "type": "run_skill",
        "intent": {},
        "skill": "github-pr-fix",
        "head_sha": SHA,
        "attempts": 0,
    }
    ctl.state.put(
        Record(
            kind="intent", key=key, status="inflight", updated_at=clock.now, writer="t", data=data
        )
    )
    ctl.loaded.ledger = type(ctl.ledger)(ctl.state)


def test_runs_that_end_without_a_result_are_remembered(tmp_path: Path) -> None:
    from holon.serve.serve import tick_envelope

    ctl = _controller(tmp_path)
    _inflight(ctl, "act_stale", PR)
    _later(ctl, 180)  # past stale_inflight: the tick expires it
    ctl.handle(tick_envelope(ctl.clock(), None))
    memory = _memory(ctl, PR)
    assert memory.outcomes == {"expired": 1}
    assert memory.failed == {f"github-pr-fix@{SHA}": 1}  # an expired run failed on its head
    # A run a person stops is cancelled: remembered, and no failure of its skill.
    _inflight(ctl, "act_running", "pull_request:5")
    ctl.interrupt("stopped by the operator")
    stopped = _memory(ctl, "pull_request:5")
    assert stopped.outcomes == {"cancelled": 1}
    assert stopped.failed == {}
