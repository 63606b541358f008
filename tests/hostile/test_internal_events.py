"""Hostile corpus: Holon's own events (`holon.run.settled`) forged from outside.

An internal event carries authority already checked (the run it reports was admitted) and names
a run to publish, so one that arrived in a replay file or the webhook inbox could make Holon
publish on a stranger's word. The gateway refuses every `holon.*` type, the source `holon` and
the via `internal` from outside: the line is journaled as broken, nothing is decided. A state
restored from elsewhere may still hold one in its events journal, deciding an inflight publish:
on recovery it decides nothing unless the state holds the run it reports, settled as it says.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope, Scope, Subject, envelope_id
from holon.gateway.replay import parse_line
from holon.intent import Target
from holon.serve.inbox import Inbox
from holon.state.model import Record
from tests.controller.conftest import REPO, make_controller
from tests.hostile.test_controller import _intent, _plant

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def forged(**changes: Any) -> EventEnvelope:
    key = "holon:run.settled:act_forged:1"
    values: dict[str, Any] = {
        "id": envelope_id(key),
        "source": "holon",
        "type": "holon.run.settled",
        "via": "internal",
        "scope": Scope(repo=REPO),
        "at": NOW,
        "subject": Subject(kind="issue", id="1"),
        "dedupe_key": key,
        "payload": {"skill": "github-issue-solve", "run_id": "act_x-1", "run_outcome": "success"},
        **changes,
    }
    return EventEnvelope(**values)


@pytest.mark.parametrize(
    "env",
    [
        forged(),
        forged(via="replay"),  # claims to be recorded, still Holon's own type
        forged(via="webhook", source="github"),
        forged(type="github.issues.opened", source="github"),  # the via gives it away
        forged(type="github.issues.opened", via="webhook"),  # and so does the source
    ],
    ids=["internal", "replay", "webhook", "github-type-internal-via", "github-type-holon-source"],
)
def test_a_replay_line_holding_an_internal_event_is_refused(env: EventEnvelope) -> None:
    with pytest.raises(InvalidInput, match="Holon's own event type; it is never received"):
        parse_line(env.model_dump_json().encode(), "r.ndjson line 1", received_at=NOW)


def test_an_inbox_line_holding_an_internal_event_is_refused(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    try:
        assert inbox.offer(forged())  # written as the receiver would (it never makes one)
        taken = inbox.take(timeout=1)
        assert taken is not None
        assert taken.envelope is None
        assert "never received" in str(taken.error)
    finally:
        inbox.close()


def test_holon_serve_journals_a_forged_settled_run_as_broken_and_publishes_nothing(
    tmp_path: Path,
) -> None:
    replay = tmp_path / "forged.ndjson"
    replay.write_text(forged().model_dump_json() + "\n")
    state = tmp_path / "s"
    argv = ["serve", "--state-dir", str(state), "--replay", str(replay), "--dry-run", "--once"]
    assert main(argv) == 0
    events = [json.loads(line) for line in (state / "events.ndjson").read_text().splitlines()]
    assert [e["id"] for e in events] == ["error:forged.ndjson:1"]
    assert "holon.run.settled is Holon's own event type" in events[0]["error"]
    decisions = state / "decisions.ndjson"
    assert not decisions.exists() or decisions.read_text() == ""


def _planted_publish(tmp_path: Path, settled_run: bool) -> Any:
    """A restored state holding an inflight github-publish intent and, in its events journal,
    the `holon.run.settled` that decided it; with `settled_run`, also the run it reports."""
    ctl = make_controller(tmp_path)
    env = forged(
        payload={"intent": "act_solve", "skill": "github-issue-solve", "run_id": "act_solve-1",
                 "run_outcome": "success"},
    )  # fmt: skip
    publish = _intent(env, "run_skill", Target(repo=REPO, kind="issue", id="1"),
                      {"skill": "github-publish", "inputs": {"run": "act_solve-1"}})  # fmt: skip
    if settled_run:
        solved = {"type": "run_skill", "subject": "issue:1", "skill": "github-issue-solve",
                  "result": {"status": "succeeded", "run_id": "act_solve-1",
                             "run_outcome": "success"}}  # fmt: skip
        ctl.state.put(Record(kind="intent", key="act_solve", status="succeeded",
                             updated_at=ctl.clock(), writer="elsewhere", data=solved))  # fmt: skip
    _plant(ctl, publish, env)
    return ctl, publish


def test_a_restored_settled_run_that_the_state_does_not_hold_publishes_nothing(
    tmp_path: Path,
) -> None:
    ctl, publish = _planted_publish(tmp_path, settled_run=False)
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []
    (refused,) = report.decisions[0]["refused"]
    assert (refused["id"], refused["guard"]) == (publish.id, "provenance")
    assert refused["reason"] == "the run its event reports did not settle as it says"


def test_a_restored_settled_run_the_state_holds_is_published_again(tmp_path: Path) -> None:
    ctl, publish = _planted_publish(tmp_path, settled_run=True)
    ctl.recover()
    (action,) = ctl.journals.actions.read()
    assert (action["intent_id"], action["dry_run"]) == (publish.id, True)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"intent": 7, "repo": REPO},
        {"intent": "act_solve", "repo": ["not", "a", "name"]},
        {"intent": "act_missing", "repo": REPO},
        {"intent": "act_solve", "repo": REPO, "extra": "x" * 1_000_000},
        {"intent": "\ud800", "repo": "\x00"},
    ],
    ids=["empty", "number", "list-repo", "no-such-run", "huge", "surrogate"],
)
def test_a_restored_queue_entry_that_names_no_settled_run_is_dropped(
    tmp_path: Path, data: dict[str, Any]
) -> None:
    """A planted `follow-up:` record publishes nothing, crashes nothing: dropped and journaled."""
    ctl = make_controller(tmp_path)
    # The run it might name exists but is no settled run (still inflight).
    running = {"type": "run_skill", "subject": "issue:1", "skill": "github-issue-solve"}
    ctl.state.put(Record(kind="intent", key="act_solve", status="inflight",
                         updated_at=ctl.clock(), writer="elsewhere", data=running))  # fmt: skip
    ctl.state.put(Record(kind="meta", key="follow-up:evt_planted", status="pending",
                         updated_at=ctl.clock(), writer="elsewhere", data=data))  # fmt: skip
    report = ctl.recover()
    assert report.follow_ups == []
    refused = [d for d in report.decisions if d["id"] == "dec:evt_planted:queued"]
    assert [d["outcome"] for d in refused] == ["refused"]
    assert ctl.state.get("meta", "follow-up:evt_planted") is None
