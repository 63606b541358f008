"""Findings of an attacker's audit of the controller, each held by a test that failed before its
fix: a pass that raises leaves its event to a redelivery; a kept `holon.run.settled` decides on
resume only when the state holds the run as it claims; an event from another repository than
the one served gets no work; a review that would start work needs the policy's authority;
Holon's own `Holon` check run failing starts no fix; a merge is pinned to its base branch."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.controller.decide import Decision, PolicyDecider
from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.journals import Journals
from holon.controller.parts import LoadedState, Parts
from holon.controller.passes import resume, run_pass
from holon.controller.pause import pause_record
from holon.controller.policy import load_policy, parse_policy
from holon.controller.view import ControllerView
from holon.executor.executor import build_executor
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.serve.serve import Serve, ServeOptions
from holon.skills.catalog import default_catalog
from holon.state.journal import Journal
from holon.state.model import ServeState
from tests.controller.conftest import REPO, Clock, comment_event
from tests.controller.test_settled_run import FakeRuns
from tests.gateway.conftest import example


def _parts(tmp_path: Path, facts: StaticFacts | None = None, **more: Any) -> Parts:
    clock = Clock()
    static = facts or StaticFacts()
    policy = load_policy(None)
    return Parts(
        decider=PolicyDecider(policy, static),
        executor=build_executor(dry_run=True, clock=clock, run_skill=None),
        facts=static,
        policy=policy,
        catalog=default_catalog(),
        journals=Journals(*(Journal(tmp_path / f"{n}.ndjson", fsync=False) for n in "eda")),
        clock=clock,
        writer="test",
        **more,
    )


# -- a pass that fails does not spend its event ----------------------------------------------
class _FailsOnce:
    """A decider with a bug reached once: the first decision raises, the next ones decide."""

    name = "policy"

    def __init__(self, inner: PolicyDecider) -> None:
        self.inner, self.failed = inner, False

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        if not self.failed:
            self.failed = True
            raise RuntimeError("a bug in a decider")
        return self.inner.decide(envelope, view)


def test_a_failed_pass_leaves_its_event_to_a_redelivery(tmp_path: Path) -> None:
    parts, loaded = _parts(tmp_path), LoadedState.of(ServeState())
    assert isinstance(parts.decider, PolicyDecider)
    parts.decider = _FailsOnce(parts.decider)
    env = comment_event("/holon solve", number=3)
    with pytest.raises(RuntimeError):
        run_pass(env, loaded, parts)
    assert loaded.state.get("dedupe", env.dedupe_key) is None  # not handled: not seen
    again = run_pass(env, loaded, parts)  # GitHub's redelivery of the same delivery
    assert [d["outcome"] for d in again.decisions] == ["decided"]
    (intent,) = again.intents
    assert intent.args["skill"] == "github-issue-solve"
    # Handled now: a third copy is the duplicate.
    assert [d["outcome"] for d in run_pass(env, loaded, parts).decisions] == ["duplicate"]


# -- a kept `holon.run.settled` is checked against the state on resume -------------------------
def _settled_then_paused(tmp_path: Path, outcome: str) -> tuple[Parts, LoadedState, EventEnvelope]:
    """A solve whose run settled with `outcome`, and its settled event kept while paused."""
    runs = FakeRuns(Clock(), outcome)
    parts = _parts(tmp_path)
    parts.executor = build_executor(dry_run=False, clock=runs.clock, run_skill=runs)
    loaded = LoadedState.of(ServeState())
    (settled,) = run_pass(comment_event("/holon solve", number=3), loaded, parts).follow_ups
    loaded.state.put(pause_record(paused=True, by="me", reason="", at=runs.clock(), writer="t"))
    return parts, loaded, settled


def test_a_kept_settled_event_that_settled_as_it_says_is_published_on_resume(
    tmp_path: Path,
) -> None:
    parts, loaded, settled = _settled_then_paused(tmp_path, "success")
    assert run_pass(settled, loaded, parts).kept
    (resumed,) = resume(loaded, parts, by="me")
    assert [i.args["skill"] for i in resumed.intents] == ["github-publish"]


def test_a_forged_kept_settled_event_decides_nothing_on_resume(tmp_path: Path) -> None:
    # The run failed; a state restored from elsewhere keeps its settled event claiming success.
    parts, loaded, settled = _settled_then_paused(tmp_path, "failure")
    assert run_pass(settled, loaded, parts).kept
    key = f"pending:{settled.id}"
    kept = loaded.state.get("meta", key)
    assert kept is not None
    forged = {**kept.data, "payload": {**kept.data["payload"], "run_outcome": "success"}}
    loaded.state.put(kept.model_copy(update={"data": forged}))
    (resumed,) = resume(loaded, parts, by="me")
    assert resumed.intents == []
    (decision,) = resumed.decisions
    assert decision["outcome"] == "refused"
    assert decision["rationale"] == (
        "kept event not decided: the run it reports did not settle as it says"
    )
    assert loaded.state.get("meta", key) is None  # decided once: not kept for another resume


# -- an event from another repository than the configured one gets no work ---------------------
def _comment_in(repo: str, body: str = "/holon solve") -> EventEnvelope:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = body
    owner, _, name = repo.partition("/")
    payload["repository"].update(full_name=repo, name=name)
    payload["repository"]["owner"]["login"] = owner
    return normalize("issue_comment", payload, via="replay", received_at=datetime.now(UTC))


def test_an_event_from_another_repository_gets_no_work(tmp_path: Path) -> None:
    parts, loaded = _parts(tmp_path, repo=REPO), LoadedState.of(ServeState())
    elsewhere = _comment_in("attacker/elsewhere")
    assert elsewhere.scope.repo == "attacker/elsewhere"
    report = run_pass(elsewhere, loaded, parts)
    assert report.intents == []
    (decision,) = report.decisions
    assert (decision["outcome"], decision["rationale"]) == (
        "refused",
        f"attacker/elsewhere is not the repository Holon serves ({REPO})",
    )
    assert not loaded.ledger.inflight()
    # The configured repository, in any case GitHub spells it, is served.
    home = run_pass(_comment_in(REPO.upper()), loaded, parts)
    assert [i.args["skill"] for i in home.intents] == ["github-issue-solve"]


def test_a_kept_event_from_another_repository_gets_no_work_on_resume(tmp_path: Path) -> None:
    parts, loaded = _parts(tmp_path, repo=REPO), LoadedState.of(ServeState())
    loaded.state.put(pause_record(paused=True, by="me", reason="", at=parts.clock(), writer="t"))
    assert run_pass(_comment_in("attacker/elsewhere"), loaded, parts).kept
    (resumed,) = resume(loaded, parts, by="me")
    assert resumed.intents == []
    assert [d["outcome"] for d in resumed.decisions] == ["refused"]


def test_serve_refuses_events_of_another_repository_than_its_repo(tmp_path: Path) -> None:
    replay = tmp_path / "replay.ndjson"
    lines = [
        {"event": "issue_comment", "delivery": f"d-{n}", "payload": _comment_in(repo).payload}
        for n, repo in enumerate(("attacker/elsewhere", REPO))
    ]
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    options = ServeOptions(
        state_dir=tmp_path / "s", replay=[replay], dry_run=True, once=True, repo=REPO
    )
    serve = Serve(options, clock=Clock())
    serve.open()
    try:
        serve.run()
    finally:
        serve.close()
    assert serve.failed == []
    journal = tmp_path / "s" / "decisions.ndjson"
    found = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [(d["outcome"], len(d["intents"])) for d in found] == [("refused", 0), ("decided", 1)]


# -- a review that would start work needs the policy's authority --------------------------------
NUMBER = example("pull_request_review", "submitted")["pull_request"]["number"]
HOLON_PR = PullFacts(
    approved=False, stale=False, head_sha="a" * 40, head_ref="holon/issue-1", same_repo=True
)


def _changes_requested(login: str, association: str, kind: str = "User") -> EventEnvelope:
    payload = example("pull_request_review", "submitted")
    payload["review"].update(state="changes_requested", author_association=association)
    for user in (payload["review"]["user"], payload["sender"]):
        user.update(login=login, type=kind)
    return normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))


def _review_outcome(tmp_path: Path, env: EventEnvelope, **facts: Any) -> list[tuple[str, str]]:
    static = StaticFacts(pulls={(REPO, NUMBER): HOLON_PR}, **facts)
    parts = _parts(tmp_path, static)
    (decision,) = run_pass(env, LoadedState.of(ServeState()), parts).decisions
    assert decision["rule"] == "fix-after-changes-requested"
    runs = [("run", i["args"]["skill"]) for i in decision["intents"] if i["type"] == "run_skill"]
    return runs + [(r["guard"], r["reason"]) for r in decision["refused"]]


def test_a_readers_review_requesting_changes_starts_no_fix(tmp_path: Path) -> None:
    env = _changes_requested("reader", "COLLABORATOR")
    outcome = _review_outcome(tmp_path, env, permissions={(REPO, "reader"): "read"})
    assert outcome == [("authority", "reader has read access; Holon needs write")]


def test_an_outsiders_review_is_refused_without_a_look_up(tmp_path: Path) -> None:
    # No Holon login configured: not being Holon is no trust of its own.
    env = _changes_requested("stranger", "CONTRIBUTOR")
    assert _review_outcome(tmp_path, env) == [
        ("authority", "stranger (CONTRIBUTOR) has no write access to this repository")
    ]


def test_a_maintainers_review_requesting_changes_starts_a_fix(tmp_path: Path) -> None:
    env = _changes_requested("maintainer", "MEMBER")
    outcome = _review_outcome(tmp_path, env, permissions={(REPO, "maintainer"): "maintain"})
    assert outcome == [("run", "github-pr-fix")]


def test_a_review_by_a_bot_starts_a_fix_only_when_allow_listed(tmp_path: Path) -> None:
    env = _changes_requested("reviewbot[bot]", "NONE", kind="Bot")
    assert _review_outcome(tmp_path / "a", env) == [
        ("authority", "reviewbot[bot] is a bot, and settings.allowed_bots does not name it")
    ]
    parts = _parts(tmp_path / "b", StaticFacts(pulls={(REPO, NUMBER): HOLON_PR}))
    parts.policy = parts.policy.model_copy(
        update={
            "settings": parts.policy.settings.model_copy(
                update={"allowed_bots": ["ReviewBot[bot]"]}
            )
        }
    )
    (decision,) = run_pass(env, LoadedState.of(ServeState()), parts).decisions
    assert decision["refused"] == []
    assert [i["args"]["skill"] for i in decision["intents"]] == ["github-pr-fix"]


# -- Holon's own failed `Holon` check run asks no fix of it ---------------------------------------
HOLON_APP = "holon-app"
CHECK_PR = PullFacts(
    approved=False, stale=False, head_sha="c" * 40, head_ref="holon/issue-1", same_repo=True
)


def _failed_check(kind: str, *, name: str, app: str, sender: str) -> EventEnvelope:
    payload = example(kind, "completed")
    check = payload[kind]
    check.update(conclusion="failure", app={**check["app"], "slug": app})
    if kind == "check_run":
        check["name"] = name
    payload["sender"].update(login=sender, type="Bot" if sender.endswith("[bot]") else "User")
    return normalize(kind, payload, via="replay", received_at=datetime.now(UTC))


def _check_outcome(tmp_path: Path, env: EventEnvelope) -> list[tuple[str, str]]:
    assert env.subject is not None
    assert env.subject.pull_requests == [2]
    facts = StaticFacts(pulls={(REPO, 2): CHECK_PR}, holon_login=f"{HOLON_APP}[bot]")
    (decision,) = run_pass(env, LoadedState.of(ServeState()), _parts(tmp_path, facts)).decisions
    assert decision["rule"] == "fix-after-failed-check"
    runs = [("run", i["args"]["skill"]) for i in decision["intents"] if i["type"] == "run_skill"]
    return runs + [(r["guard"], r["reason"]) for r in decision["refused"]]


@pytest.mark.parametrize("sender", [f"{HOLON_APP}[bot]", "Codertocat"])
def test_holons_own_failed_check_run_starts_no_fix(tmp_path: Path, sender: str) -> None:
    env = _failed_check("check_run", name="Holon", app=HOLON_APP, sender=sender)
    assert [guard for guard, _ in _check_outcome(tmp_path, env)] == ["self"]


def test_a_check_run_named_holon_completed_by_holon_is_its_own(tmp_path: Path) -> None:
    env = _failed_check("check_run", name="Holon", app="other-app", sender=f"{HOLON_APP}[bot]")
    assert [guard for guard, _ in _check_outcome(tmp_path, env)] == ["self"]


def test_holons_own_check_suite_starts_no_fix(tmp_path: Path) -> None:
    env = _failed_check("check_suite", name="", app=HOLON_APP, sender=f"{HOLON_APP}[bot]")
    assert [guard for guard, _ in _check_outcome(tmp_path, env)] == ["self"]


@pytest.mark.parametrize(
    ("name", "app", "sender"),
    [
        ("lint", HOLON_APP, f"{HOLON_APP}[bot]"),  # another check of the same app (Actions')
        ("Holon", "other-app", "Codertocat"),  # another app's check that happens to be named so
    ],
)
def test_other_failed_checks_still_start_a_fix(
    tmp_path: Path, name: str, app: str, sender: str
) -> None:
    env = _failed_check("check_run", name=name, app=app, sender=sender)
    assert _check_outcome(tmp_path, env) == [("run", "github-pr-fix")]


# -- a merge is pinned to the base branch it was decided for ------------------------------------
MERGE_POLICY = (
    "version: 1\nsettings: {allow_merge: true}\nrules:\n"
    "  - name: merge-when-approved\n    on: github.pull_request_review.submitted\n"
    "    do: merge\n"
)


def _merge_decision(tmp_path: Path, base_ref: str | None) -> dict[str, Any]:
    payload = example("pull_request_review", "submitted")
    payload["review"]["state"] = "approved"
    env = normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))
    sha = payload["pull_request"]["head"]["sha"]
    pull = PullFacts(
        approved=True,
        stale=False,
        head_sha=sha,
        head_ref="holon/issue-1",
        same_repo=True,
        base_ref=base_ref,
    )
    facts = StaticFacts(pulls={(REPO, NUMBER): pull}, green={(REPO, sha): True})
    parts = _parts(tmp_path, facts)
    parts.policy = parse_policy(MERGE_POLICY)
    parts.decider = PolicyDecider(parts.policy, facts)
    (decision,) = run_pass(env, LoadedState.of(ServeState()), parts).decisions
    return decision


def test_a_merge_carries_the_base_it_was_decided_for(tmp_path: Path) -> None:
    base = example("pull_request_review", "submitted")["pull_request"]["base"]["ref"]
    decision = _merge_decision(tmp_path, base)
    assert decision["refused"] == []
    (intent,) = decision["intents"]
    assert intent["args"]["base"] == base == "master"


@pytest.mark.parametrize(
    ("base_ref", "reason"),
    [
        ("release", "the base branch is now release; the merge was decided for master"),
        (None, "cannot verify the pull request's base branch"),
    ],
)
def test_a_merge_is_refused_when_the_base_changed(
    tmp_path: Path, base_ref: str | None, reason: str
) -> None:
    decision = _merge_decision(tmp_path, base_ref)
    assert decision["intents"] == []
    assert [(r["guard"], r["reason"]) for r in decision["refused"]] == [("merge", reason)]
