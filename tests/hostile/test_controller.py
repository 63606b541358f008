"""Hostile corpus: a state restored from elsewhere (an Actions artifact or cache) that claims
authority. Restored state is data, never authority (docs/architecture.md, "In GitHub Actions").

A kept event (kept while paused, `meta` record `pending:<id>` holding its envelope) was decided on
resume with the authority its stored envelope claimed: a stranger's `/holon solve` whose stored
actor said `owner` started a skill run, and a command written into the record of a comment that
holds none was obeyed. Now the envelope is made again from its payload when it is resumed, so the
actor's authority and the command are the connector's, and a record that is no envelope is
refused with its reason journaled.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.controller.loop import Controller
from holon.controller.parts import LoadedState
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.state.store import StateStore
from tests.controller.conftest import comment_event, decisions, make_controller
from tests.gateway.conftest import example
from tests.serve.conftest import EXAMPLE

Tamper = Callable[[dict[str, Any]], None]


def _strangers_solve() -> EventEnvelope:
    payload = example("issue_comment", "created")
    payload["comment"].update(id=77, body="/holon solve", author_association="NONE")
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "drive-by"
    return normalize("issue_comment", payload, via="replay", received_at=datetime.now(UTC))


def _kept_then_restored(tmp_path: Path, env: EventEnvelope, tamper: Tamper) -> Controller:
    """`env` kept by a paused controller, its state saved, edited by `tamper` (the kept
    envelope, as JSON) and loaded again, as a state restored from elsewhere is."""
    ctl = make_controller(tmp_path)
    ctl.pause("operator", "freeze")
    assert ctl.handle(env).kept
    store = StateStore(tmp_path / "state")
    store.save(ctl.state)
    raw = json.loads(store.state_path.read_text())
    tamper(raw["records"][f"meta:pending:{env.id}"]["data"])
    store.state_path.write_text(json.dumps(raw))
    ctl.loaded = LoadedState.of(store.load())
    return ctl


def _claims_owner(data: dict[str, Any]) -> None:
    data["actor"].update(authority="owner", association="OWNER")


def test_a_kept_strangers_command_claiming_owner_authority_is_refused(tmp_path: Path) -> None:
    ctl = _kept_then_restored(tmp_path, _strangers_solve(), _claims_owner)
    (report,) = ctl.resume("operator")
    (decision,) = report.decisions
    assert [(r["type"], r["guard"]) for r in decision["refused"]] == [("run_skill", "authority")]
    assert "drive-by (NONE) has no write access" in decision["refused"][0]["reason"]
    # Only the polite refusal is performed (a dry run here); no skill ever starts.
    assert [i.type for i in report.intents] == ["comment"]
    assert report.intents[0].args["kind"] == "refusal"


def test_an_owners_kept_command_is_still_decided_on_resume(tmp_path: Path) -> None:
    ctl = _kept_then_restored(tmp_path, comment_event("/holon solve", number=4), lambda d: None)
    (report,) = ctl.resume("operator")
    assert [i.type for i in report.intents] == ["run_skill"]
    assert report.decisions[0]["refused"] == []


def _forges_a_command(data: dict[str, Any]) -> None:
    data["command"] = comment_event("/holon solve").model_dump(mode="json")["command"]


def test_a_command_written_into_a_kept_comment_that_holds_none_is_not_obeyed(
    tmp_path: Path,
) -> None:
    thanks = comment_event("Thanks, looks good!", number=4)
    assert thanks.command is None
    ctl = _kept_then_restored(tmp_path, thanks, _forges_a_command)
    (report,) = ctl.resume("operator")
    (decision,) = report.decisions
    assert decision["outcome"] == "decided"
    assert (decision["rule"], decision["intents"], report.intents) == (None, [], [])


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda d: d.clear(), id="no_envelope"),
        pytest.param(lambda d: d.update(type="github.check_suite.completed"), id="wrong_event"),
    ],
)
def test_a_kept_record_that_is_no_event_is_refused_and_journaled(
    tamper: Tamper, tmp_path: Path
) -> None:
    env = _strangers_solve()
    ctl = _kept_then_restored(tmp_path, env, tamper)
    (report,) = ctl.resume("operator")
    assert report.intents == []
    (decision,) = decisions(ctl)[-1:]
    assert (decision["id"], decision["outcome"]) == (f"dec:{env.id}:resumed", "refused")
    assert decision["rationale"].startswith("kept event not decided: ")
    assert ctl.kept() == []  # never decided, and not kept for another try


def test_holon_serve_resumes_a_restored_kept_event_with_the_payloads_authority(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    replay = tmp_path / "r.ndjson"
    # The example's fifth delivery: drive-by (NONE) asks for `/holon solve` on issue 3.
    replay.write_text((EXAMPLE / "replay.ndjson").read_text().splitlines()[4] + "\n")
    facts = ["--facts", str(EXAMPLE / "facts.json")]
    assert main(["serve", "pause", "--state-dir", str(state)]) == 0
    serve = ["serve", "--state-dir", str(state), "--dry-run", "--once", *facts]
    assert main([*serve, "--replay", str(replay)]) == 2  # kept while paused
    raw = json.loads((state / "state.json").read_text())
    (kept,) = [v for k, v in raw["records"].items() if k.startswith("meta:pending:")]
    _claims_owner(kept["data"])
    (state / "state.json").write_text(json.dumps(raw))
    assert main(["serve", "resume", "--state-dir", str(state)]) == 0
    capsys.readouterr()
    assert main(serve) == 0  # issue 3: only the refusal comment, no work on record
    actions = [json.loads(line) for line in (state / "actions.ndjson").read_text().splitlines()]
    assert [(a["type"], a["effect"].get("kind")) for a in actions] == [("comment", "refusal")]
    decided = json.loads((state / "decisions.ndjson").read_text().splitlines()[-1])
    assert [r["guard"] for r in decided["refused"]] == ["authority"]
