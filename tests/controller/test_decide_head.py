"""The head a run on a pull request works on is decided with it, in the intent's args, so the
guardrails, the check run, the run's workspace and publishing agree on one sha: the payload's
head (and where it lives) when the event carries it, else the live pull request's (an issue
comment on a pull request carries no head); unknown stays unrecorded."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from holon.controller.decide import PolicyDecider
from holon.controller.facts import PullFacts, PullHead, StaticFacts
from holon.controller.policy import load_policy
from holon.controller.view import ControllerView
from holon.gateway.github import normalize
from tests.controller.conftest import REPO, comment_event
from tests.gateway.conftest import example

HEAD = "1" * 40
OTHER = "2" * 40


def _pull(sha: str, same_repo: bool) -> PullFacts:
    return PullFacts(
        approved=False, stale=False, head_sha=sha, head_ref="feature", same_repo=same_repo
    )


class CountingFacts(StaticFacts):
    """StaticFacts that count how often the decider asked for a head."""

    asked: int = 0

    def head(self, repo: str, number: int) -> PullHead | None:
        self.asked += 1
        return super().head(repo, number)


def _args(env: Any, facts: StaticFacts) -> dict[str, Any]:
    decider = PolicyDecider(load_policy(None), facts)
    decision = decider.decide(env, ControllerView(paused=False, subject=None))
    (proposal,) = decision.proposals
    assert proposal.type == "run_skill"
    return proposal.args


def _review(same_repo: bool) -> Any:
    payload = example("pull_request_review", "submitted")
    payload["review"].update(state="commented", body="/holon fix", author_association="OWNER")
    pull = payload["pull_request"]
    pull["head"]["sha"] = HEAD
    if not same_repo:
        pull["head"]["repo"] = {**pull["head"]["repo"], "id": 99, "full_name": "fork/Hello-World"}
    return normalize("pull_request_review", payload, via="replay", received_at=datetime.now(UTC))


def test_a_fix_command_commented_on_a_pull_request_gets_the_live_head() -> None:
    env = comment_event("/holon fix", number=2, pr=True)
    assert env.subject is not None
    assert env.subject.head_sha is None  # an issue comment says nothing of the head
    facts = StaticFacts(pulls={(REPO, 2): _pull(HEAD, True)})
    args = _args(env, facts)
    assert args["skill"] == "github-pr-fix"
    assert (args["head_sha"], args["head_repo"]) == (HEAD, "same")


def test_a_fork_pull_requests_head_is_recorded_as_a_forks() -> None:
    env = comment_event("/holon review", number=2, pr=True)
    args = _args(env, StaticFacts(pulls={(REPO, 2): _pull(HEAD, False)}))
    assert (args["skill"], args["head_sha"], args["head_repo"]) == ("github-review", HEAD, "fork")


def test_an_unknown_pull_request_leaves_the_head_unrecorded() -> None:
    args = _args(comment_event("/holon fix", number=2, pr=True), StaticFacts())
    assert "head_sha" not in args
    assert "head_repo" not in args


def test_the_payloads_head_wins_and_needs_no_look_up() -> None:
    facts = CountingFacts(pulls={(REPO, 2): _pull(OTHER, False)})
    env = _review(same_repo=True)
    args = _args(env, facts)
    assert (args["head_sha"], args["head_repo"]) == (HEAD, "same")
    assert facts.asked == 0
    fork = _args(_review(same_repo=False), facts)
    assert (fork["head_sha"], fork["head_repo"]) == (HEAD, "fork")
    assert facts.asked == 0


def test_a_run_on_an_issue_records_no_head() -> None:
    facts = CountingFacts()
    args = _args(comment_event("/holon solve", number=1), facts)
    assert args["skill"] == "github-issue-solve"
    assert "head_sha" not in args
    assert "head_repo" not in args
    assert facts.asked == 0
