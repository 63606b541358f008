"""The controller with in-memory parts: guardrails, vocabulary, pause/resume, ticks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from holon.cli.serve_cmd import CRASH_ENV, crash_hook
from holon.controller.facts import PullFacts
from holon.controller.policy import parse_policy
from holon.errors import InvalidInput
from holon.executor.executor import build_executor
from holon.gateway.github import normalize
from holon.intent import IntentRejected, Target, make_intent
from tests.controller.conftest import REPO, Clock, comment_event, decisions, make_controller
from tests.gateway.conftest import example


def test_intent_vocabulary_is_strict() -> None:
    target = Target(repo=REPO, kind="issue", id="1")
    common = dict(
        target=target,
        reason="r",
        decider="t",
        event_key="k",
        event_id="e",
        at=datetime.now(UTC),
        skills={"github-review"},
    )
    with pytest.raises(IntentRejected, match="not in the action vocabulary"):
        make_intent(type_="deploy", args={}, **common)  # type: ignore[arg-type]
    with pytest.raises(IntentRejected, match="unknown skill 'github-deploy'"):
        make_intent(type_="run_skill", args={"skill": "github-deploy"}, **common)  # type: ignore[arg-type]
    with pytest.raises(IntentRejected, match="merge: sha"):
        make_intent(type_="merge", args={"sha": "not-a-sha"}, **common)  # type: ignore[arg-type]
    with pytest.raises(IntentRejected, match="Extra inputs"):
        make_intent(type_="label", args={"label": "x", "colour": "red"}, **common)  # type: ignore[arg-type]
    a = make_intent(type_="label", args={"label": "x"}, **common)  # type: ignore[arg-type]
    b = make_intent(type_="label", args={"label": "x"}, **common)  # type: ignore[arg-type]
    assert a.idempotency_key == b.idempotency_key
    assert a.id == b.id


def test_dedupe_and_one_decision_per_event(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    env = comment_event("/holon solve")
    ctl.handle(env)
    ctl.handle(env)
    assert [d["outcome"] for d in decisions(ctl)] == ["decided", "duplicate"]


def test_write_points_call_the_injected_crash_hook_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The controller never reads the environment: only the hook it was given hears the points.
    monkeypatch.setenv(CRASH_ENV, "after_effect_before_journal")
    ctl = make_controller(tmp_path)
    seen: list[str] = []
    ctl.parts.crashpoint = seen.append
    ctl.handle(comment_event("/holon solve"))
    assert seen[:2] == ["after_effect_before_journal", "after_journal_before_state"]
    assert crash_hook({})("after_effect_before_journal") is None  # no variable: nothing happens


def test_unknown_permission_refuses(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(comment_event("/holon solve", association="MEMBER"))
    (decision,) = decisions(ctl)
    assert decision["refused"][0]["guard"] == "authority"
    assert "cannot verify" in decision["refused"][0]["reason"]


def test_member_with_write_access_may_command(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path, permissions={(REPO, "Codertocat"): "write"})
    ctl.handle(comment_event("/holon solve", association="MEMBER"))
    (decision,) = decisions(ctl)
    assert decision["refused"] == []
    assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"


def test_duplicate_fix_for_same_sha_suppressed(tmp_path: Path) -> None:
    sha = example("pull_request_review", "submitted")["pull_request"]["head"]["sha"]
    number = example("pull_request_review", "submitted")["pull_request"]["number"]
    pulls = {
        (REPO, number): PullFacts(
            approved=False, stale=False, head_sha=sha, head_ref="holon/issue-1", same_repo=True
        )
    }
    ctl = make_controller(tmp_path, pulls=pulls)
    for review_id in (1, 2):
        payload = example("pull_request_review", "submitted")
        payload["review"].update(id=review_id, state="changes_requested")
        ctl.handle(
            normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))
        )
    first, second = decisions(ctl)
    assert first["intents"][0]["args"]["skill"] == "github-pr-fix"
    assert second["refused"][0]["guard"] == "duplicate"
    assert f"for {sha[:12]}" in second["refused"][0]["reason"]


def test_cooldown_for_automatic_runs(tmp_path: Path) -> None:
    policy = (
        "version: 1\nsettings: {auto_review: true, cooldown: 10m}\nrules:\n"
        "  - name: auto\n    on: github.pull_request.synchronize\n    setting: auto_review\n"
        "    do: run_skill\n    skill: github-review\n"
    )
    ctl = make_controller(tmp_path, policy)
    payload = example("pull_request", "synchronize")
    env = normalize("pull_request", payload, via="replay", received_at=datetime.now(UTC))
    ctl.handle(env)
    again = example("pull_request", "synchronize")
    again["after"] = "f" * 40
    again["pull_request"]["head"]["sha"] = "f" * 40
    ctl.handle(normalize("pull_request", again, via="replay", received_at=datetime.now(UTC)))
    first, second = decisions(ctl)
    assert first["intents"]
    assert second["refused"][0]["guard"] == "cooldown"


def test_budget(tmp_path: Path) -> None:
    from holon.controller.decide import Decision, Proposal

    class Greedy:
        name = "greedy"

        def decide(self, envelope: Any, view: Any) -> Decision:
            target = Target(repo=REPO, kind="issue", id="1")
            proposals = [Proposal("label", target, {"label": f"l{i}"}, "many") for i in range(3)]
            return Decision(self.name, "three labels", None, proposals)

    ctl = make_controller(tmp_path, "version: 1\nsettings: {budget: 2}\nrules: []\n")
    ctl.parts.decider = Greedy()
    ctl.handle(comment_event("/holon solve"))
    (decision,) = decisions(ctl)
    assert decision["decider"] == "greedy"
    assert len(decision["intents"]) == 2
    assert [r["guard"] for r in decision["refused"]] == ["budget"]


def test_rejected_proposal_is_journaled_not_executed(tmp_path: Path) -> None:
    from holon.controller.decide import Decision, Proposal

    class Wild:
        name = "wild"

        def decide(self, envelope: Any, view: Any) -> Decision:
            target = Target(repo=REPO, kind="issue", id="1")
            return Decision(self.name, "x", None, [Proposal("rm_rf", target, {}, "oops")])

    ctl = make_controller(tmp_path)
    ctl.parts.decider = Wild()
    ctl.handle(comment_event("/holon solve"))
    (decision,) = decisions(ctl)
    assert decision["rejected"] == [
        {"type": "rm_rf", "reason": "unknown intent type 'rm_rf': not in the action vocabulary"}
    ]
    assert list(ctl.journals.actions.read()) == []


def test_resume_expires_stale_events(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    clock = ctl.clock
    assert isinstance(clock, Clock)
    ctl.pause("me", "testing")
    ctl.handle(comment_event("/holon solve", comment_id=1))
    clock.now += timedelta(hours=25)
    ctl.handle(comment_event("/holon solve", number=4, comment_id=2))
    reports = ctl.resume("me")  # one pass a kept event, the expired one too
    assert [(r.kind, r.event_id) for r in reports] == [
        ("resumed", comment_event("/holon solve", comment_id=1).id),
        ("resumed", comment_event("/holon solve", number=4, comment_id=2).id),
    ]
    assert [r.intents != [] for r in reports] == [False, True]
    outcomes = [d["outcome"] for d in decisions(ctl)]
    assert outcomes == ["paused", "paused", "expired", "decided"]


def test_tick_expires_stale_inflight_and_fires_timers(tmp_path: Path) -> None:
    from holon.gateway.envelope import Scope
    from holon.serve.serve import tick_envelope
    from holon.state.model import Record

    ctl = make_controller(tmp_path)
    clock = ctl.clock
    assert isinstance(clock, Clock)
    ctl.state.put(
        Record(
            kind="intent",
            key="act_x",
            status="inflight",
            updated_at=clock.now,
            writer="t",
            data={
                "subject": "issue:9",
                "type": "run_skill",
                "intent": {},
                "skill": "github-issue-solve",
            },
        )
    )
    ctl.state.put(
        Record(
            kind="wait",
            key="w1",
            status="live",
            updated_at=clock.now,
            writer="t",
            data={
                "subject": "issue:8",
                "on": "timer",
                "until": (clock.now + timedelta(minutes=5)).isoformat(),
            },
        )
    )
    ctl.loaded.ledger = type(ctl.ledger)(ctl.state)
    clock.now += timedelta(hours=3)
    ctl.handle(tick_envelope(clock.now, None))
    assert ctl.state.get("intent", "act_x").status == "expired"
    assert ctl.state.get("wait", "w1") is None
    (decision,) = decisions(ctl)
    assert "expired stale run_skill act_x" in decision["rationale"]
    assert "timer fired for issue:8" in decision["rationale"]
    assert Scope().tenant == "default"


def test_failed_action_is_retried_then_closed_as_failed(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    # Without --dry-run and without the GitHub edge, a comment cannot be posted: it must fail
    # loudly after the policy's attempts, never be marked done.
    ctl.parts.executor = build_executor(dry_run=False, clock=ctl.clock, run_skill=None)
    ctl.handle(comment_event("/holon help", number=5))
    attempts = [a for a in ctl.journals.actions.read() if a["type"] == "comment"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert all(a["status"] == "failed" for a in attempts)
    assert "need GITHUB_TOKEN" in attempts[0]["error"]
    (record,) = [r for r in ctl.state.live("intent") if r.data["subject"] == "issue:5"]
    assert record.status == "failed"
    closure = ctl.state.get("closure", "issue:5")
    assert closure is not None
    assert closure.data["closure_outcome"] == "failed"


def _labeled(name: str, *, by: str | None = None) -> Any:
    """GitHub's `issues.labeled` example (Codertocat labels their own issue 1 `bug`), with the
    label renamed and, with `by`, someone else doing the labelling."""
    payload = example("issues", "labeled")
    payload["label"]["name"] = name
    if by is not None:
        payload["sender"]["login"] = by
    return normalize("issues", payload, via="replay", received_at=datetime.now(UTC))


def test_holon_label_asks_for_a_solve(tmp_path: Path) -> None:
    ctl = make_controller(tmp_path)
    ctl.handle(_labeled("bug"))
    ctl.handle(_labeled("holon"))
    other, holon = decisions(ctl)
    assert other["intents"] == []
    assert holon["rule"] == "solve-issue-label"
    (intent,) = holon["intents"]
    assert intent["args"]["skill"] == "github-issue-solve"
    assert intent["args"]["inputs"] == {"issue": "1"}
    assert intent["target"] == "issue:1"


def test_holon_label_is_the_setting_not_a_literal(tmp_path: Path) -> None:
    # The built-in rules with only the setting changed: the label that asks follows it.
    default = (Path(__file__).parents[2] / "holon/controller/default_policy.yaml").read_text()
    renamed = default.replace("holon_label: holon ", "holon_label: please-fix ")
    assert renamed != default
    ctl = make_controller(tmp_path, renamed)
    ctl.handle(_labeled("holon"))
    ctl.handle(_labeled("please-fix"))
    old, new = decisions(ctl)
    assert old["intents"] == []
    assert new["rule"] == "solve-issue-label"
    assert new["intents"][0]["args"]["skill"] == "github-issue-solve"
    # An empty label could never be added: a mistake, reported with its line.
    with pytest.raises(InvalidInput, match=r"^p.yaml line 2: settings.holon_label: "):
        parse_policy("version: 1\nsettings: {holon_label: ''}\n", "p.yaml")


@pytest.mark.parametrize(
    ("labeller", "refusal"),
    [
        ("stranger", "cannot verify stranger's permission on this repository"),
        ("reader", "reader has read access; Holon needs write"),
        ("helper", None),
    ],
)
def test_holon_label_authority_is_the_labellers(
    tmp_path: Path, labeller: str, refusal: str | None
) -> None:
    # The author is the OWNER; the labeller is not, and it is the labeller who counts.
    ctl = make_controller(
        tmp_path, permissions={(REPO, "helper"): "write", (REPO, "reader"): "read"}
    )
    ctl.handle(_labeled("holon", by=labeller))
    (decision,) = decisions(ctl)
    assert decision["rule"] == "solve-issue-label"
    if refusal is None:
        assert decision["refused"] == []
        assert decision["intents"][0]["args"]["skill"] == "github-issue-solve"
    else:
        assert [(r["guard"], r["reason"]) for r in decision["refused"]] == [("authority", refusal)]
        assert all(i["type"] == "comment" for i in decision["intents"])  # the polite refusal


def test_a_target_in_another_repository_is_refused(tmp_path: Path) -> None:
    from holon.controller.decide import Decision, Proposal

    class Elsewhere:
        name = "elsewhere"

        def decide(self, envelope: Any, view: Any) -> Decision:
            there = Target(repo="attacker/other", kind="issue", id="1")
            here = Target(repo=REPO, kind="issue", id="1")
            return Decision(
                self.name,
                "x",
                None,
                [
                    Proposal("label", there, {"label": "x"}, "elsewhere"),
                    Proposal("label", here, {"label": "x"}, "here"),
                ],
            )

    ctl = make_controller(tmp_path)
    ctl.parts.decider = Elsewhere()
    ctl.handle(comment_event("/holon solve"))
    (decision,) = decisions(ctl)
    assert [(r["guard"], r["reason"]) for r in decision["refused"]] == [
        ("repository", f"attacker/other is another repository than the event's ({REPO})")
    ]
    assert [i["target"] for i in decision["intents"]] == ["issue:1"]
    assert [a["effect"]["repo"] for a in ctl.journals.actions.read()] == [REPO]


UNHOLD_POLICY = """version: 1
rules:
  - name: unhold-issue
    on: github.issues.unlabeled
    label: hold
    do: run_skill
    skill: github-issue-solve
  - name: unhold-pull
    on: github.pull_request.unlabeled
    label: hold
    do: run_skill
    skill: github-review
"""


def _unlabeled(event: str, *, by: str | None) -> Any:
    """GitHub's `issues.unlabeled` / `pull_request.unlabeled` example (Codertocat, OWNER of
    the repository and author of the issue or pull request, removes `bug`), with the label
    renamed `hold` and, with `by`, someone else removing it."""
    payload = example(event, "unlabeled")
    payload["label"]["name"] = "hold"
    if by is not None:
        payload["sender"]["login"] = by
    return normalize(event, payload, via="replay", received_at=datetime.now(UTC))


@pytest.mark.parametrize("event", ["issues", "pull_request"])
@pytest.mark.parametrize(
    ("remover", "refusal"),
    [
        ("stranger", "cannot verify stranger's permission on this repository"),
        ("reader", "reader has read access; Holon needs write"),
        ("helper", None),
        (None, None),  # the example's own sender, the repository's OWNER
    ],
)
def test_a_label_removed_needs_the_same_authority_as_one_added(
    tmp_path: Path, event: str, remover: str | None, refusal: str | None
) -> None:
    # A policy may start work when a label goes (a hold lifted): removing it is a command.
    ctl = make_controller(
        tmp_path,
        UNHOLD_POLICY,
        permissions={(REPO, "helper"): "write", (REPO, "reader"): "read"},
    )
    ctl.handle(_unlabeled(event, by=remover))
    (decision,) = decisions(ctl)
    assert decision["rule"] == ("unhold-issue" if event == "issues" else "unhold-pull")
    if refusal is None:
        assert decision["refused"] == []
        assert [i["type"] for i in decision["intents"]] == ["run_skill"]
    else:
        assert [(r["guard"], r["reason"]) for r in decision["refused"]] == [("authority", refusal)]
        assert all(i["type"] == "comment" for i in decision["intents"])  # the polite refusal
