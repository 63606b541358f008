"""Exporting the state bundle: scrubbed, trimmed, atomic; and a state exported by one run and
restored by the next still recovers, without restored state authorizing anything: an intent
found inflight in it passes recovery's re-checks (a genuine merge is finished, a stranger's
skill run whose journaled envelope was edited to claim owner authority is refused)."""

from __future__ import annotations

import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.actions import state_sync
from holon.actions.state_sync import (
    ARTIFACT_RETENTION_DAYS,
    export,
    export_state,
    horizon_days,
    restore,
)
from holon.controller.decide import PolicyDecider
from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.journals import event_entry
from holon.controller.loop import Controller, Journals
from holon.controller.policy import load_policy, parse_policy
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import ActionIntent, Target, make_intent
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import Record
from holon.state.store import StateStore
from tests.actions.state_support import (
    NOW,
    Settings,
    client_of,
    entry,
    journal_lines,
    record,
    settings,
    sync_settings,
    zip_of,
)
from tests.gateway.conftest import example
from tests.support.github_fake import LoopbackGitHub

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_" + "Zy9x8W7v" * 5


def _live(s: Settings, *records: Record, **journals: list[dict[str, Any]]) -> None:
    store = StateStore(s.state_dir)
    with store:
        state = store.load()
        for r in records:
            state.put(r)
        store.save(state)
        for name, entries in journals.items():
            with store.journal(name) as journal:
                journal.append_many(entries)


def _files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir())}


def test_export_scrubs_a_token_planted_in_a_journal_and_in_the_state(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = f"/holon solve, and here is my token {TOKEN}"
    env = normalize("issue_comment", payload, via="actions", received_at=NOW)
    _live(
        s,
        record("int_1", "failed", kind="intent", result={"error": f"push refused for {TOKEN}"}),
        events=[event_entry(env, NOW)],
        decisions=[entry("dec:1", rationale=f"Bearer {TOKEN}")],
    )
    assert TOKEN in (s.state_dir / "events.ndjson").read_text()  # the live journal is complete
    written = export_state(s, now=NOW)
    assert written == s.upload_dir
    files = _files(written)
    assert sorted(files) == ["decisions.ndjson", "events.ndjson", "state.json"]
    assert not any(TOKEN in text for text in files.values())
    assert not any(TOKEN[4:20] in text for text in files.values())
    (event,) = journal_lines(written / "events.ndjson")
    assert event["envelope"]["payload"]["comment"]["body"].endswith("my token ***")
    # Trimmed: the repository object is reduced, the envelope still validates.
    assert "api.github.com" not in files["events.ndjson"]
    assert EventEnvelope.model_validate(event["envelope"]).id == env.id
    state = StateStore(written).load()
    assert state.records["intent:int_1"].data["result"] == {"error": "push refused for ***"}


def test_export_keeps_the_retention_horizon_of_the_journals(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    old = (NOW - timedelta(days=31)).isoformat()
    _live(s, events=[entry("recent"), entry("old", at=old), {"id": "no-time"}])
    written = export(sync_settings(s), now=NOW)
    assert written is not None
    assert [e["id"] for e in journal_lines(written / "events.ndjson")] == ["recent", "no-time"]


def test_export_bounds_the_journals_by_size_dropping_the_oldest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(state_sync, "MAX_EXPORT_JOURNAL_BYTES", 200)
    s = settings(tmp_path, 1)
    at = [(NOW - timedelta(minutes=m)).isoformat() for m in range(6)]
    _live(s, events=[entry(f"e{m}", at=at[m], pad="x" * 40) for m in range(6)])
    written = export(sync_settings(s), now=NOW)
    assert written is not None
    kept = [e["id"] for e in journal_lines(written / "events.ndjson")]
    assert kept == ["e0", "e1"]


def test_export_is_atomic_no_half_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = settings(tmp_path, 1)
    _live(s, record("first"), events=[entry("e1")], actions=[entry("a1")])
    assert export(sync_settings(s), now=NOW) is not None
    assert s.upload_dir is not None
    before = _files(s.upload_dir)
    _live(s, record("second"), events=[entry("e2")], actions=[entry("a2")])
    real = Journal.append_many
    calls: list[Path] = []

    def failing(self: Journal, entries: Any) -> None:
        calls.append(self.path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(self, entries)

    monkeypatch.setattr(Journal, "append_many", failing)
    with pytest.raises(OSError, match="No space left"):
        export(sync_settings(s), now=NOW)
    assert _files(s.upload_dir) == before  # the previous bundle, whole
    assert sorted(p.name for p in s.upload_dir.parent.iterdir()) == ["cache", "state", "upload"]
    monkeypatch.setattr(Journal, "append_many", real)
    assert export(sync_settings(s), now=NOW) == s.upload_dir
    assert "dedupe:second" in (s.upload_dir / "state.json").read_text()
    assert sorted(p.name for p in s.upload_dir.parent.iterdir()) == ["cache", "state", "upload"]


@pytest.mark.parametrize("default_branch", [True, False])
def test_the_cache_gets_the_bundle_only_on_default_branch_runs(
    tmp_path: Path, default_branch: bool
) -> None:
    s = settings(tmp_path, 1, default_branch=default_branch)
    _live(s, record("x"), events=[entry("e")])
    export(sync_settings(s), now=NOW)
    assert s.cache_dir is not None
    assert s.upload_dir is not None
    if default_branch:
        assert _files(s.cache_dir) == _files(s.upload_dir)
    else:
        assert not s.cache_dir.exists()


def test_no_upload_dir_no_bundle(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    s.upload_dir = None
    assert export_state(s) is None


def test_artifact_retention_stays_within_the_prune_horizon() -> None:
    """A restored copy older than the prune horizon could resurrect what a pruned tombstone had
    deleted: state artifacts must expire first (docs/state-across-runs.md)."""
    assert horizon_days() == 30
    assert ARTIFACT_RETENTION_DAYS == 14
    assert horizon_days() > ARTIFACT_RETENTION_DAYS
    doc = (ROOT / "docs" / "state-across-runs.md").read_text()
    assert f"retention-days: {ARTIFACT_RETENTION_DAYS}" in doc
    assert f"{horizon_days()} days" in doc
    for name in ("action.yml", ".github/workflows/holon.yml"):
        path = ROOT / name
        if path.exists():  # the workflows that upload state artifacts (written elsewhere)
            for days in re.findall(r"retention-days:\s*\$?\{?\{?\s*(\d+)", path.read_text()):
                assert int(days) <= ARTIFACT_RETENTION_DAYS, (name, days)


# Recovery from an exported-then-restored bundle.

REPO = "Codertocat/Hello-World"
REVIEW = example("pull_request_review", "submitted")
SHA = REVIEW["pull_request"]["head"]["sha"]
NUMBER = REVIEW["pull_request"]["number"]
BASE = REVIEW["pull_request"]["base"]["ref"]
POLICY = (ROOT / "holon/controller/default_policy.yaml").read_text()
MERGING = POLICY.replace("allow_merge: false", "allow_merge: true ")
GOOD_PULL = PullFacts(approved=True, stale=False, head_sha=SHA, head_ref="holon/issue-1",
                      same_repo=True, base_ref=BASE)  # fmt: skip


def _intent(env: EventEnvelope, type_: str, target: Target, args: dict[str, Any]) -> ActionIntent:
    return make_intent(type_=type_, target=target, args=args, reason="decided", decider="policy",
                       event_key=env.dedupe_key, event_id=env.id, at=NOW,
                       skills=default_catalog().names())  # fmt: skip


def _inflight(intent: ActionIntent) -> Record:
    """`intent` as `attempts.perform` records it before performing it."""
    data = {
        "intent": intent.model_dump(mode="json"), "type": intent.type,
        "subject": intent.target.subject(), "skill": intent.args.get("skill"),
        "head_sha": intent.args.get("head_sha"), "automatic": False,
        "event_id": intent.event_id, "decided_at": intent.created_at.isoformat(),
        "attempts": 0, "result": None,
    }  # fmt: skip
    return Record(kind="intent", key=intent.id, status="inflight", updated_at=NOW,
                  writer="run-1", data=data)  # fmt: skip


def _controller(state_dir: Path, policy: str, **facts: Any) -> Controller:
    static = StaticFacts(**facts)
    parsed = parse_policy(policy) if policy else load_policy(None)
    journals = Journals(*(Journal(state_dir / f"{n}.ndjson", fsync=False)
                          for n in ("events", "decisions", "actions")))  # fmt: skip
    return Controller(
        state=StateStore(state_dir).load(), journals=journals,
        executor=build_executor(dry_run=True, clock=lambda: NOW, run_skill=None),
        decider=PolicyDecider(parsed, static), facts=static, policy=parsed,
        catalog=default_catalog(), clock=lambda: NOW, writer="run-2", idempotent_runs=True,
    )  # fmt: skip


def _through_an_artifact(
    server: LoopbackGitHub, tmp_path: Path, record_: Record, event: dict[str, Any]
) -> Settings:
    """Run 1 leaves `record_` inflight with `event` journaled and exports its bundle; it is
    uploaded as an artifact; run 2 restores it into a fresh state directory."""
    repo = server.state.repos["octocat/Hello-World"]
    first = settings(tmp_path / "run-1", repo.id)
    _live(first, record_, events=[event])
    bundle = export(sync_settings(first), now=NOW)
    assert bundle is not None
    repo.add_artifact("holon-state-1-1", zip_of({p.name: p.read_bytes() for p in bundle.iterdir()}))
    second = settings(tmp_path / "run-2", repo.id)
    restored = restore(sync_settings(second), client=client_of(server), warn=print, now=NOW)
    assert restored.merged == ["artifact holon-state-1-1 (run 101001)"]
    return second


def test_a_restored_inflight_merge_passes_recoverys_rechecks_and_is_finished(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    review = normalize("pull_request_review", example("pull_request_review", "submitted"),
                       via="actions", received_at=NOW)  # fmt: skip
    merge = _intent(review, "merge", Target(repo=REPO, kind="pull_request", id=str(NUMBER)),
                    {"sha": SHA, "base": BASE})  # fmt: skip
    s = _through_an_artifact(github_server, tmp_path, _inflight(merge), event_entry(review, NOW))
    # The payload that came back is the trimmed one, and it still decides.
    (kept,) = journal_lines(s.state_dir / "events.ndjson")
    assert "api.github.com" not in json.dumps(kept)
    ctl = _controller(s.state_dir, MERGING, pulls={(REPO, NUMBER): GOOD_PULL},
                      green={(REPO, SHA): True})  # fmt: skip
    report = ctl.recover()
    (action,) = ctl.journals.actions.read()
    assert (action["intent_id"], action["status"], action["dry_run"]) == (
        merge.id, "succeeded", True,
    )  # fmt: skip
    assert report.decisions == []


def test_a_restored_strangers_skill_run_claiming_owner_authority_is_refused(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    payload = example("issue_comment", "created")
    payload["comment"].update(id=77, body="/holon solve", author_association="NONE")
    payload["sender"]["login"] = payload["comment"]["user"]["login"] = "drive-by"
    env = normalize("issue_comment", payload, via="actions", received_at=NOW)
    run = _intent(env, "run_skill", Target(repo=REPO, kind="issue", id="1"),
                  {"skill": "github-issue-solve"})  # fmt: skip
    forged = event_entry(env, NOW)
    forged["envelope"]["actor"].update(authority="owner", association="OWNER")
    s = _through_an_artifact(github_server, tmp_path, _inflight(run), forged)
    ctl = _controller(s.state_dir, "")
    report = ctl.recover()
    assert list(ctl.journals.actions.read()) == []  # nothing was performed
    (refused,) = report.decisions[0]["refused"]
    assert (refused["type"], refused["guard"]) == ("run_skill", "authority")
    assert "drive-by (NONE) has no write access" in refused["reason"]
    record_ = ctl.state.get("intent", run.id)
    assert record_ is not None
    assert record_.status == "refused"


def test_nothing_secret_leaves_through_the_upload_dir_permissions(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    _live(s, record("x"))
    written = export(sync_settings(s), now=NOW)
    assert written is not None
    assert not any(p.is_symlink() for p in written.iterdir())
    assert os.stat(written).st_mode & 0o777 == 0o755
