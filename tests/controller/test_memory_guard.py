"""The guard `failed_before` on its own (holon/controller/guardrails.py): which events repeat a
skill where it failed, per the ledger's count from the subject's memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from holon.controller.facts import StaticFacts
from holon.controller.follow_ups import settled_run
from holon.controller.guardrails import guard
from holon.controller.policy import load_policy
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.intent import Target, make_intent
from tests.controller.conftest import REPO, comment_event
from tests.gateway.conftest import example

SHA = "c" * 40


class FailedLedger:
    """A ledger whose memory says `github-pr-fix` failed `count` times on SHA, nothing else."""

    def __init__(self, count: int) -> None:
        self.count = count

    def active_skill(self, subject: str, skill: str) -> bool:
        return False

    def ran_for_sha(self, subject: str, skill: str, sha: str) -> bool:
        return False

    def last_automatic_run(self, subject: str) -> datetime | None:
        return None

    def failed_attempts(self, subject: str, skill: str, sha: str | None) -> int:
        return self.count if (skill, sha) == ("github-pr-fix", SHA) else 0


def _review() -> EventEnvelope:
    payload = example("pull_request_review", "submitted")
    payload["review"]["state"] = "changes_requested"
    return normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))


def _publishing() -> EventEnvelope:
    data = {
        "subject": "pull_request:2",
        "skill": "github-pr-fix",
        "head_sha": SHA,
        "attempts": 1,
        "result": {"status": "succeeded", "run_id": "r", "run_outcome": "success"},
    }
    return settled_run("act_1", REPO, data, datetime.now(UTC))


def _refusals(env: EventEnvelope, count: int, sha: str = SHA) -> list[tuple[str, str]]:
    intent = make_intent(
        type_="run_skill",
        target=Target(repo=REPO, kind="pull_request", id="2"),
        args={"skill": "github-pr-fix", "head_sha": sha},
        reason="test",
        decider="policy",
        event_key=env.dedupe_key,
        event_id=env.id,
        at=datetime.now(UTC),
        skills=["github-pr-fix"],
    )
    _, refused = guard(
        [intent],
        env,
        ledger=FailedLedger(count),
        facts=StaticFacts(),
        policy=load_policy(None),  # max_attempts: 2
        now=datetime.now(UTC),
        budget_left=10,
        authority=None,
    )
    return [(r.guard, r.reason) for r in refused]


REFUSED = [
    (
        "failed_before",
        f"github-pr-fix failed twice on {SHA[:12]}; a new commit or a /holon command retries",
    )
]


def test_an_automatic_trigger_does_not_repeat_a_run_that_failed_max_attempts_times() -> None:
    assert _refusals(_review(), 1) == []  # failed less than max_attempts times: retried
    assert _refusals(_review(), 2) == REFUSED
    assert _refusals(_review(), 3)[0][1].startswith("github-pr-fix failed 3 times")
    assert _refusals(_review(), 2, sha="d" * 40) == []  # a new commit is a new head


@pytest.mark.parametrize(
    "env",
    [
        comment_event("/holon fix", number=2, pr=True),  # a person's command retries
        _publishing(),  # Holon's own event publishing a run that just succeeded
    ],
)
def test_a_command_or_holons_own_continuation_is_not_a_blind_repeat(env: EventEnvelope) -> None:
    assert _refusals(env, 5) == []
