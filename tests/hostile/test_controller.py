"""Hostile corpus: a state restored from elsewhere (an Actions artifact or cache) that claims
authority. Restored state is data, never authority (docs/architecture.md, "In GitHub Actions").

A kept event (kept while paused, `meta` record `pending:<id>` holding its envelope) was decided on
resume with the authority its stored envelope claimed: a stranger's `/holon solve` whose stored
actor said `owner` started a skill run, and a command written into the record of a comment that
holds none was obeyed. Now the envelope is made again from its payload when it is resumed, so the
actor's authority and the command are the connector's, and a record that is no envelope is
refused with its reason journaled.

An intent found inflight at start was performed as recorded: a planted inflight merge merged
(here: was performed, as a dry run) although the policy allowed no merge and nothing proved the
pull request approved or green, and a stranger's planted skill run ran. Now each passes the
guardrails again before anything is performed, against the event that decided it as the events
journal holds it (its envelope made again from its payload); a refused one is settled `refused`,
journaled with why, and fails its subject's closure.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.controller.facts import PullFacts
from holon.controller.journals import event_entry
from holon.controller.loop import Controller
from holon.controller.parts import LoadedState
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import ActionIntent, Target, make_intent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import Record
from holon.state.store import StateStore
from tests.controller.conftest import REPO, comment_event, decisions, make_controller
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


REVIEW = example("pull_request_review", "submitted")
SHA = REVIEW["pull_request"]["head"]["sha"]
NUMBER = REVIEW["pull_request"]["number"]
BASE = REVIEW["pull_request"]["base"]["ref"]
DEFAULT_POLICY = (Path(__file__).parents[2] / "holon/controller/default_policy.yaml").read_text()
MERGING_POLICY = DEFAULT_POLICY.replace("allow_merge: false", "allow_merge: true ")
GOOD_PULL = PullFacts(
    approved=True, stale=False, head_sha=SHA, head_ref="holon/issue-1", same_repo=True,
    base_ref=BASE,
)  # fmt: skip


def _review() -> EventEnvelope:
    return normalize("pull_request_review", example("pull_request_review", "submitted"),
                     via="replay", received_at=datetime.now(UTC))  # fmt: skip


def _intent(env: EventEnvelope, type_: str, target: Target, args: dict[str, Any]) -> ActionIntent:
    return make_intent(
        type_=type_, target=target, args=args, reason="planted", decider="policy",
        event_key=env.dedupe_key, event_id=env.id, at=datetime.now(UTC),
        skills=default_catalog().names(),
    )  # fmt: skip


def _merge(env: EventEnvelope) -> ActionIntent:
    return _intent(
        env,
        "merge",
        Target(repo=REPO, kind="pull_request", id=str(NUMBER)),
        {"sha": SHA, "base": BASE},
    )


def _plant(ctl: Controller, intent: ActionIntent, env: EventEnvelope | None) -> None:
    """`intent` inflight in a restored state, as `attempts.perform` records it; `env`, the event
    that decided it, in the events journal (None: not there)."""
    if env is not None:
        ctl.journals.events.append(event_entry(env, ctl.clock()))
    data = {
        "intent": intent.model_dump(mode="json"), "type": intent.type,
        "subject": intent.target.subject(), "skill": intent.args.get("skill"),
        "head_sha": intent.args.get("head_sha"), "automatic": False,
        "event_id": intent.event_id, "decided_at": intent.created_at.isoformat(),
        "attempts": 0, "result": None,
    }  # fmt: skip
    record = Record(kind="intent", key=intent.id, status="inflight", updated_at=ctl.clock(),
                    writer="elsewhere", data=data)  # fmt: skip
    ctl.state.put(record)
    ctl.loaded = LoadedState.of(ctl.state)


Case = tuple[str | None, dict[str, Any], str, str]
REFUSED: dict[str, Case] = {
    "merge_the_policy_does_not_allow": (None, {}, "merge", "the policy does not allow merging"),
    "merge_facts_unknown": (
        MERGING_POLICY, {}, "merge", "cannot verify the pull request's approval and checks",
    ),
    "merge_checks_unknown": (
        MERGING_POLICY, {"pulls": {(REPO, NUMBER): GOOD_PULL}}, "merge",
        "cannot verify the required checks on that sha",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSED.values(), ids=REFUSED.keys())
def test_a_restored_inflight_merge_is_guarded_again_and_never_performed(
    case: Case, tmp_path: Path
) -> None:
    policy, facts, guard, reason = case
    ctl = make_controller(tmp_path, policy, **facts)
    env = _review()
    merge = _merge(env)
    _plant(ctl, merge, env)
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []  # nothing reached the executor
    assert report.results == []
    record = ctl.state.get("intent", merge.id)
    assert record is not None
    assert (record.status, record.data["result"]) == ("refused", {"error": f"refused: {reason}"})
    (decision,) = report.decisions
    assert decision == decisions(ctl)[-1]
    assert decision["outcome"] == "refused"
    assert decision["refused"] == [
        {"id": merge.id, "type": "merge", "guard": guard, "reason": reason}
    ]
    subject = f"pull_request:{NUMBER}"
    assert report.subjects == [subject]
    assert report.closures[subject].closure_outcome == "failed"
    assert (report.exit_code, report.job_conclusion) == (1, "failure")


def test_a_restored_inflight_merge_the_guardrails_allow_is_performed(tmp_path: Path) -> None:
    ctl = make_controller(
        tmp_path, MERGING_POLICY, pulls={(REPO, NUMBER): GOOD_PULL}, green={(REPO, SHA): True}
    )
    env = _review()
    merge = _merge(env)
    _plant(ctl, merge, env)
    report = ctl.recover()
    (action,) = ctl.journals.actions.read()
    assert (action["intent_id"], action["status"], action["dry_run"]) == (
        merge.id,
        "succeeded",
        True,
    )
    assert report.decisions == []
    assert [i.id for i in report.intents] == [merge.id]


def test_a_restored_inflight_intent_of_an_event_not_on_record_is_refused(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path, MERGING_POLICY, pulls={(REPO, NUMBER): GOOD_PULL},
                          green={(REPO, SHA): True})  # fmt: skip
    merge = _merge(_review())
    _plant(ctl, merge, None)  # the events journal never saw the event that would have decided it
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []
    (refused,) = report.decisions[0]["refused"]
    assert refused["guard"] == "provenance"
    assert refused["reason"] == "the event that decided it is not in the events journal"


def test_a_strangers_restored_inflight_skill_run_is_refused_on_authority(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    env = _strangers_solve()
    run = _intent(env, "run_skill", Target(repo=REPO, kind="issue", id="1"),
                  {"skill": "github-issue-solve"})  # fmt: skip
    _plant(ctl, run, env)
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []
    (refused,) = report.decisions[0]["refused"]
    assert (refused["type"], refused["guard"]) == ("run_skill", "authority")
    assert "drive-by (NONE) has no write access" in refused["reason"]
    assert report.closures["issue:1"].closure_outcome == "failed"


def test_an_inflight_record_without_a_readable_intent_is_refused(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    env = _review()
    merge = _merge(env)
    _plant(ctl, merge, env)
    record = ctl.state.get("intent", merge.id)
    assert record is not None
    ctl.state.put(record.model_copy(update={"data": {**record.data, "intent": {"type": "merge"}}}))
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []
    assert report.decisions[0]["refused"][0]["guard"] == "unreadable"


def test_holon_serve_refuses_a_planted_inflight_merge_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    ctl = make_controller(tmp_path)
    env = _review()
    _plant(ctl, _merge(env), env)
    # A state directory as an artifact would bring it: the state and the events journal.
    StateStore(state).save(ctl.state)
    with Journal(state / "events.ndjson", fsync=False) as events:
        events.append(event_entry(env, ctl.clock()))
    empty = tmp_path / "empty.ndjson"
    empty.write_text("")
    facts = ["--facts", str(EXAMPLE / "facts.json")]
    argv = ["serve", "--state-dir", str(state), "--replay", str(empty), "--once", "--dry-run"]
    assert main([*argv, *facts]) == 1  # the subject it re-checked failed: the merge never happened
    _, why = capsys.readouterr().out.splitlines()
    assert why.startswith(f"exit 1: failed: pull_request:{NUMBER}: ")
    assert (state / "actions.ndjson").read_text() == ""
    refused = [json.loads(line) for line in (state / "decisions.ndjson").read_text().splitlines()]
    assert [r["refused"][0]["reason"] for r in refused] == ["the policy does not allow merging"]
