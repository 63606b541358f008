"""A workflow run cancelled mid-step (`holon action`'s cleanup, fan-out's settle after a
cancelled decide job) is an interruption `cancelled_workflow`: the closure stored in the state
says the step was cut short, as the handoff does, not that a user stopped it; and any handoff
built from that closure alone (a later pass writing the comment the cleanup failed to write)
says so too."""

from __future__ import annotations

import json

from holon.closure.derive import CUT_SHORT, derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.handoff import HandoffContext, Subject, build_handoff, render_handoff
from holon.closure.mapping import report_for

AT = "2026-11-21T10:00:00Z"


def _evidence(by: str, actor: str | None = "octocat") -> bytes:
    """What the state holds after an interruption: the run it cancelled and the operator wait
    naming the interruption, both at the same moment (the run's id sorts first)."""
    items = [
        {"id": "run:act_1", "kind": "run", "source": "controller", "at": AT, "state": "cancelled"},
        {
            "id": "wait:interrupted:act_1",
            "kind": "interruption",
            "source": "controller",
            "at": AT,
            "by": by,
            "actor": actor,
        },
    ]
    return json.dumps({"unit": {"kind": "turn", "id": "t"}, "items": items}).encode()


def test_a_cancelled_workflow_run_closes_as_cut_short_not_stopped_by_a_user() -> None:
    closure = derive_closure(parse_evidence(_evidence("cancelled_workflow")))
    assert (closure.closure_outcome, closure.operator_wait) == ("waiting", "interruption")
    assert closure.detail == CUT_SHORT
    assert "stopped by" not in closure.detail


def test_a_stop_command_still_names_who_stopped_the_work() -> None:
    closure = derive_closure(parse_evidence(_evidence("stop_command", "maintainer-bob")))
    assert closure.detail == "stopped by maintainer-bob (stop_command)"


def test_a_handoff_from_the_cut_short_closure_alone_says_cut_short() -> None:
    closure = derive_closure(parse_evidence(_evidence("cancelled_workflow")))
    context = HandoffContext(subject=Subject(kind="issue", id="1"), skill="github-issue-solve")
    handoff = build_handoff(closure, report_for(closure), context)
    assert handoff.context.cut_short == CUT_SHORT
    assert handoff.next is not None
    assert "cut short" in handoff.next.action
    assert "stopped" not in handoff.next.action
    comment = render_handoff(handoff, "comment")
    assert "cut short" in comment
    assert "stopped by" not in comment
