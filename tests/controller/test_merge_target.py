"""The merge guardrail keeps a merge inside the event's repository: a decider (a model, one
day) proposing a merge of a pull request elsewhere is refused with its reason, even when that
pull request's facts would allow it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.guardrails import guard
from holon.controller.policy import parse_policy
from holon.gateway.github import normalize
from holon.intent import Target, make_intent
from tests.gateway.conftest import example

SHA = "a" * 40
GOOD = PullFacts(
    approved=True, stale=False, head_sha=SHA, head_ref="fix", same_repo=True, base_ref="main"
)


class NoLedger:
    def active_skill(self, subject: str, skill: str) -> bool:
        return False

    def ran_for_sha(self, subject: str, skill: str, sha: str) -> bool:
        return False

    def last_automatic_run(self, subject: str) -> datetime | None:
        return None

    def failed_attempts(self, subject: str, skill: str, sha: str | None) -> int:
        return 0


@pytest.mark.parametrize(
    ("target_repo", "reason"),
    [
        ("Codertocat/Hello-World", None),
        ("codertocat/hello-world", None),  # GitHub's names ignore case
        # Any intent's target elsewhere is refused before the merge's own checks run.
        (
            "octocat/Spoon-Knife",
            "octocat/Spoon-Knife is another repository than the event's (Codertocat/Hello-World)",
        ),
    ],
)
def test_a_merge_elsewhere_is_refused(target_repo: str, reason: str | None) -> None:
    payload = example("pull_request_review", "submitted")
    env = normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))
    assert env.scope.repo == "Codertocat/Hello-World"
    facts = StaticFacts(pulls={(target_repo, 1): GOOD}, green={(target_repo, SHA): True})
    intent = make_intent(
        type_="merge",
        target=Target(repo=target_repo, kind="pull_request", id="1"),
        args={"sha": SHA, "base": "main"},
        reason="test",
        decider="model",
        event_key=env.dedupe_key,
        event_id=env.id,
        at=datetime.now(UTC),
        skills=[],
    )
    accepted, refused = guard(
        [intent],
        env,
        ledger=NoLedger(),
        facts=facts,
        policy=parse_policy("version: 1\nsettings: {allow_merge: true}\n"),
        now=datetime.now(UTC),
        budget_left=10,
        authority=None,
    )
    expected = [] if reason is None else [("repository", reason)]
    assert [(r.guard, r.reason) for r in refused] == expected
    assert len(accepted) == (1 if reason is None else 0)
