"""Intents beyond `settings.intents_per_pass` are held as runnable work, not refused: the subject
is `continuable`, and the next pass that continues it (its re-activation, or a timer tick)
performs them, at most the limit per pass, oldest first, each re-checked against today's facts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from holon.controller.decide import Decision, Proposal
from holon.controller.loop import Controller
from holon.controller.reactivation import record_key
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import Target
from holon.state.model import Record
from tests.controller.conftest import REPO, actions, comment_event, decisions, make_controller
from tests.gateway.conftest import example

POLICY = "version: 1\nsettings: {intents_per_pass: 5, budget: 20}\nrules: []\n"
LOGIN = "Codertocat"  # who writes the example comment


class Greedy:
    """Proposes `count` labels on issue 1 for the first event it sees, nothing afterwards."""

    name = "greedy"

    def __init__(self, count: int) -> None:
        self.count = count
        self.decided = 0

    def decide(self, envelope: EventEnvelope, view: Any) -> Decision:
        self.decided += 1
        if envelope.type.startswith("timer") or self.decided > 1:
            return Decision(
                self.name,
                "nothing more",
                None,
                [],
                "recheck" if envelope.type.startswith("timer") else None,
            )
        target = Target(repo=REPO, kind="issue", id="1")
        proposals = [
            Proposal("label", target, {"label": f"l{i}"}, "many") for i in range(self.count)
        ]
        return Decision(self.name, f"{self.count} labels", None, proposals)


def controller(tmp_path: Path, count: int = 7, **facts: Any) -> Controller:
    ctl = make_controller(tmp_path, POLICY, **facts)
    ctl.parts.decider = Greedy(count)
    return ctl


def labels_done(ctl: Controller) -> list[str]:
    return [a["intent_id"] for a in actions(ctl) if a["status"] == "succeeded"]


def held(ctl: Controller) -> list[Record]:
    return [r for r in ctl.state.live("intent") if r.status == "pending" and "held" in r.data]


def dispatch(run_id: str, generation: str = "1") -> EventEnvelope:
    payload = example("workflow_dispatch")
    payload["repository"] = example("issue_comment", "created")["repository"]
    payload["inputs"] = {"subject": "issue:1", "generation": generation}
    return normalize(
        "workflow_dispatch", payload, via="actions", received_at=datetime.now(UTC), run_id=run_id
    )


def tick(run_id: str) -> EventEnvelope:
    payload = {"schedule": "*/15 * * * *"}
    return normalize(
        "schedule", payload, via="actions", received_at=datetime.now(UTC), run_id=run_id
    )


def sent_generation(ctl: Controller, generation: int) -> None:
    """What `holon/actions/reactivate.py` records when it dispatches a re-activation."""
    data = {
        "generation": generation,
        "received": generation - 1,
        "sent_at": ctl.clock().isoformat(),
    }
    ctl.state.put(
        Record(
            kind="meta",
            key=record_key("issue:1"),
            status="live",
            updated_at=ctl.clock(),
            writer="test",
            data=data,
        )
    )


def test_five_are_performed_two_held_and_the_subject_is_continuable(tmp_path: Path) -> None:
    ctl = controller(tmp_path)
    report = ctl.handle(comment_event("/holon solve"))
    assert len(labels_done(ctl)) == 5
    assert len(held(ctl)) == 2
    for record in held(ctl):
        assert "settings.intents_per_pass" in record.data["held"]["reason"]
        assert record.data["held"]["at"]
    decided, holding = decisions(ctl)
    assert decided["outcome"] == "decided"
    assert len(decided["intents"]) == 5
    assert decided["refused"] == []  # held, not refused
    assert holding["outcome"] == "held"
    assert [i["args"]["label"] for i in holding["intents"]] == ["l5", "l6"]
    assert "more than 5 intents for one event" in holding["rationale"]
    closure = report.closures["issue:1"]
    assert closure.closure_outcome == "continuable"
    assert (closure.exit_code, closure.lifecycle_outcome) == (3, None)


def test_the_re_activation_performs_the_held_ones_and_closes_the_subject(tmp_path: Path) -> None:
    ctl = controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    sent_generation(ctl, 1)
    report = ctl.handle(dispatch("501"))
    assert len(labels_done(ctl)) == 7
    assert held(ctl) == []
    assert [i.args["label"] for i in report.intents] == ["l5", "l6"]
    entry = decisions(ctl)[-1]
    assert entry["outcome"] == "continued"
    assert [i["args"]["label"] for i in entry["intents"]] == ["l5", "l6"]
    assert ctl.parts.decider.decided == 1  # type: ignore[attr-defined]  # nothing decided anew
    assert "issue:1" not in report.closures  # nothing left to do: no open work, no closure
    assert ctl.state.get("closure", "issue:1") is None


def test_at_most_the_limit_per_pass_oldest_first(tmp_path: Path) -> None:
    ctl = controller(tmp_path, count=12)
    ctl.handle(comment_event("/holon solve"))
    assert len(held(ctl)) == 7
    sent_generation(ctl, 1)
    report = ctl.handle(dispatch("601"))
    entry = decisions(ctl)[-1]
    assert [i["args"]["label"] for i in entry["intents"]] == ["l5", "l6", "l7", "l8", "l9"]
    assert "2 still held" in entry["rationale"]
    assert report.closures["issue:1"].closure_outcome == "continuable"
    # A timer tick continues the rest too (a lost re-activation strands nothing).
    report = ctl.handle(tick("602"))
    assert held(ctl) == []
    assert len(labels_done(ctl)) == 12


def test_a_held_intent_that_no_longer_passes_is_refused_on_recheck(tmp_path: Path) -> None:
    permissions = {(REPO, LOGIN): "write"}
    ctl = controller(tmp_path, count=6, permissions=permissions)
    ctl.handle(comment_event("/holon solve", association="COLLABORATOR"))
    assert len(labels_done(ctl)) == 5
    (record,) = held(ctl)
    permissions[(REPO, LOGIN)] = "read"  # the facts changed: the actor lost write access
    sent_generation(ctl, 1)
    report = ctl.handle(dispatch("701"))
    assert len(labels_done(ctl)) == 5  # not performed
    settled = ctl.state.get("intent", record.key)
    assert settled is not None
    assert settled.status == "refused"
    assert "Codertocat has read access" in settled.data["result"]["error"]
    entry = decisions(ctl)[-1]
    assert entry["outcome"] == "continued"
    assert entry["intents"] == []
    (refused,) = entry["refused"]
    assert (refused["id"], refused["guard"]) == (record.key, "authority")
    assert report.closures["issue:1"].closure_outcome == "failed"  # what was decided did not happen


def test_recovery_at_start_does_not_perform_held_intents(tmp_path: Path) -> None:
    ctl = controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    before = len(actions(ctl))
    report = ctl.recover()
    assert len(actions(ctl)) == before
    assert report.intents == []
    assert len(held(ctl)) == 2


def test_a_held_intent_is_performed_once_however_many_continuations_arrive(tmp_path: Path) -> None:
    ctl = controller(tmp_path)
    ctl.handle(comment_event("/holon solve"))
    sent_generation(ctl, 1)
    ctl.handle(dispatch("801"))
    # The same dispatch again (another run of it), then a tick: nothing is performed twice.
    ctl.handle(dispatch("802"))
    assert decisions(ctl)[-1]["outcome"] == "ignored"
    ctl.handle(tick("803"))
    done = labels_done(ctl)
    assert len(done) == len(set(done)) == 7
