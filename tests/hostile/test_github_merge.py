"""Hostile corpus: the merge effect against approvals, checks and answers meant to fool it.

On a public repository anyone may submit an "Approve" review, any app with `statuses: write`
may set a status of any name, and an answer may be cut off or malformed. The safe outcome is
always the same: no merge call, a refusal or a wait naming why, and never a second merge call
after GitHub may already have merged (it is read back instead).
"""

from __future__ import annotations

from typing import Any

import pytest

from holon.github.access import CheckRun, Merged, Pull, Review, Status
from holon.github.errors import GitHubError, ServerError
from holon.github.facts import GitHubFacts
from holon.github.merge import merge_pull
from tests.github.merge_support import facts_for
from tests.support.github_fake import GitHubFake, example, routes

API = "https://api.github.com"
REPO = "octocat/Hello-World"
NUMBER = 1347  # GitHub's example pull request
SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"  # its head sha
BASE = "master"  # its base branch


def _pull(**fields: Any) -> dict[str, Any]:
    _, body = example(routes().find("pulls/get"))
    body.update({"labels": [], "title": "Fix the crash", **fields})
    return dict(body)


def _reviews(*reviews: tuple[str, str, str]) -> list[dict[str, Any]]:
    """(login, account type, author_association) approvals on the head."""
    return [
        {
            "id": n,
            "user": {"login": login, "type": kind},
            "state": "APPROVED",
            "author_association": association,
            "commit_id": SHA,
        }
        for n, (login, kind, association) in enumerate(reviews, 1)
    ]


def _checks(*runs: tuple[str, int]) -> dict[str, Any]:
    items = [
        {"name": name, "status": "completed", "conclusion": "success", "app": {"id": app}}
        for name, app in runs
    ]
    return {"total_count": len(items), "check_runs": items}


def _rules(context: str, app: int | None = None) -> list[dict[str, Any]]:
    check = {"context": context, **({"integration_id": app} if app else {})}
    return [{"type": "required_status_checks", "parameters": {"required_status_checks": [check]}}]


def _statuses(*pairs: tuple[str, str]) -> dict[str, Any]:
    items = [{"context": c, "state": s} for c, s in pairs]
    return {"state": "success", "sha": SHA, "total_count": len(items), "statuses": items}


def _answer(fake: GitHubFake, **overrides: Any) -> None:
    """A mergeable, owner-approved pull request whose required check `ci` passed."""
    fake.on("pulls/get", body=overrides.get("pull", _pull()))
    fake.on(
        "pulls/list-reviews", body=overrides.get("reviews", _reviews(("octocat", "User", "OWNER")))
    )
    fake.on("repos/get-branch-rules", body=overrides.get("rules", _rules("ci")))
    fake.on("checks/list-for-ref", body=overrides.get("checks", _checks(("ci", 15368))))
    fake.on("repos/get-combined-status-for-ref", body=overrides.get("statuses", _statuses()))


def _no_sleep(seconds: float) -> None:
    del seconds


def _merge(facts: GitHubFacts | None = None, **kw: Any) -> Any:
    options = {"sha": SHA, "method": "squash", "event_repo": REPO, "base_ref": BASE, **kw}
    options.setdefault("sleep", _no_sleep)
    return merge_pull(facts or facts_for(API), REPO, NUMBER, **options)


def test_the_set_up_merges(github_fake: GitHubFake) -> None:
    _answer(github_fake)
    github_fake.on("pulls/merge")
    assert _merge().performed


APPROVALS = {
    # An outsider on a public repository, a contributor, a first-timer: not write access.
    "outsider_approves": ("mallory", "User", "NONE"),
    "contributor_approves": ("mallory", "User", "CONTRIBUTOR"),
    "first_timer_approves": ("mallory", "User", "FIRST_TIME_CONTRIBUTOR"),
    # An app's review, even one GitHub labels OWNER, and one whose type was edited to User.
    "bot_approves": ("approver[bot]", "Bot", "OWNER"),
    "bot_posing_as_user_approves": ("approver[bot]", "User", "OWNER"),
    # Holon approving the pull request it is about to merge.
    "holon_approves_itself": ("github-actions[bot]", "Bot", "OWNER"),
    # A deleted account's review ("ghost"): nobody to trust.
    "deleted_account_approves": ("", "User", "OWNER"),
}


@pytest.mark.parametrize("reviewer", APPROVALS.values(), ids=APPROVALS.keys())
def test_an_untrusted_approval_does_not_merge(
    github_fake: GitHubFake, reviewer: tuple[str, str, str]
) -> None:
    _answer(github_fake, reviews=_reviews(reviewer))
    outcome = _merge()
    assert (outcome.performed, outcome.output["refused"]) == (False, "approval")
    assert github_fake.count("pulls/merge") == 0
    assert github_fake.count("repos/get-collaborator-permission-level") == 0


CHECKS = {
    # A status named like the required check, which is pinned to one app: anyone with
    # statuses: write could set it.
    "forged_status_for_an_app_check": {
        "rules": _rules("ci", app=15368),
        "checks": _checks(),
        "statuses": _statuses(("ci", "success")),
    },
    # A check run of that name from another app.
    "same_name_from_another_app": {
        "rules": _rules("ci", app=15368),
        "checks": _checks(("ci", 666)),
    },
    # Lookalike names.
    "lookalike_name": {"checks": _checks(("ci ", 15368), ("CI", 15368), ("c\u0456", 15368))},
}


@pytest.mark.parametrize("answers", CHECKS.values(), ids=CHECKS.keys())
def test_a_check_that_is_not_the_required_one_does_not_merge(
    github_fake: GitHubFake, answers: dict[str, Any]
) -> None:
    _answer(github_fake, **answers)
    outcome = _merge()
    assert (outcome.performed, outcome.output["waiting"]) == (False, "checks")
    assert outcome.wait == f"'ci' not passed yet on {SHA[:12]}"
    assert github_fake.count("pulls/merge") == 0


MALFORMED = {
    "mergeable_as_text": (_pull(mergeable="true"), "waiting", "mergeable"),
    "head_missing": (_pull(head=None), "waiting", "head_moved"),
    "labels_as_names": (_pull(labels=[7, None, "do-not-merge"]), "refused", "hold"),
    "draft_as_text": (_pull(draft="false", mergeable=None), "waiting", "mergeable"),
    "state_missing": (_pull(state=None), "refused", "closed"),
    "base_of_another_repository": (
        _pull(base={"ref": "main", "repo": {"full_name": "mallory/Hello-World"}}),
        "refused",
        "repository",
    ),
}


@pytest.mark.parametrize(("body", "key", "code"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_pull_request_answer_never_merges(
    github_fake: GitHubFake, body: dict[str, Any], key: str, code: str
) -> None:
    _answer(github_fake, pull=body)
    outcome = _merge()
    assert (outcome.performed, outcome.output[key]) == (False, code)
    assert github_fake.count("pulls/merge") == 0


def test_merged_as_text_is_not_merged(github_fake: GitHubFake) -> None:
    _answer(github_fake, pull=_pull(merged="true", mergeable=False))
    assert _merge().output["waiting"] == "mergeable"


def test_a_malformed_list_is_unknown_and_refused(github_fake: GitHubFake) -> None:
    _answer(github_fake, checks={"total_count": 1, "check_runs": None})
    outcome = _merge()
    assert (outcome.output["refused"], outcome.wait) == ("checks", None)
    assert "not a list" in outcome.note


def test_a_lost_merge_answer_is_read_back_and_found_merged(github_fake: GitHubFake) -> None:
    _answer(github_fake)
    merged = _pull(merged=True, state="closed", merge_commit_sha="e" * 40)
    github_fake.on("pulls/get", body=merged)  # the re-read after the 502
    github_fake.on("pulls/merge", status=502, headers={"Retry-After": "1"})
    outcome = _merge()
    assert outcome.performed
    assert outcome.output["merge_sha"] == "e" * 40
    assert "a re-read shows it merged" in outcome.note
    assert github_fake.count("pulls/merge") == 1


def test_the_merge_call_carries_only_the_pinned_sha(github_fake: GitHubFake) -> None:
    """A sha that is not one (an intent's args restored from a tampered state) never reaches
    the merge call: the head differs, and RestAccess refuses it besides."""
    _answer(github_fake)
    outcome = _merge(sha="main")
    assert outcome.output["waiting"] == "head_moved"
    assert github_fake.count("pulls/merge") == 0
    with pytest.raises(GitHubError, match="sha"):
        facts_for(API).access.merge(REPO, NUMBER, sha="HEAD~1", method="squash")


@pytest.mark.parametrize("repo", ["octocat/../../orgs/x", "octocat/Hello-World/../x"])
def test_a_traversing_target_is_refused_before_any_request(
    github_fake: GitHubFake, repo: str
) -> None:
    with pytest.raises(GitHubError, match="repository name"):
        merge_pull(
            facts_for(API), repo, NUMBER, sha=SHA, method="merge", event_repo=repo, base_ref=BASE
        )
    assert github_fake.calls == []


class Lost:
    """A RepoAccess whose merge answer never arrives; `merged_after` is what a re-read finds."""

    def __init__(self, merged_after: bool | None) -> None:
        self.merged_after = merged_after
        self.merges = 0
        self.reads = 0

    def pull(self, repo: str, number: int) -> Pull:
        self.reads += 1
        if self.reads > 1 and self.merged_after is None:
            raise ServerError(
                "GitHub timed out during pulls/get: GitHub may or may not have done it"
            )
        merged = self.reads > 1 and bool(self.merged_after)
        return Pull(
            number,
            "open",
            merged,
            "f" * 40 if merged else None,
            False,
            "Fix",
            (),
            "a",
            SHA,
            "holon/x",
            REPO,
            "main",
            REPO,
            True,
        )

    def reviews(self, repo: str, number: int) -> list[Review]:
        return [Review(1, "octocat", False, "OWNER", "APPROVED", SHA)]

    def branch_rules(self, repo: str, branch: str) -> list[dict[str, Any]]:
        return []

    def check_runs(self, repo: str, sha: str) -> list[CheckRun]:
        return [CheckRun("ci", "completed", "success", 1, None)]

    def statuses(self, repo: str, sha: str) -> list[Status]:
        return []

    def permission(self, repo: str, login: str) -> tuple[str, str | None]:
        raise AssertionError("not needed")

    def default_branch(self, repo: str) -> str:
        return "main"

    def merge(self, repo: str, number: int, *, sha: str, method: str) -> Merged:
        self.merges += 1
        raise ServerError(
            "GitHub timed out during pulls/merge: GitHub may or may not have done it",
            operation="pulls/merge",
        )


def test_no_answer_and_not_merged_is_a_failure_not_a_second_merge() -> None:
    access = Lost(merged_after=False)
    with pytest.raises(
        ServerError, match="after no answer to pulls/merge a re-read shows it not merged"
    ):
        _merge(GitHubFacts(access, login="github-actions[bot]"), base_ref="main")
    assert (access.merges, access.reads) == (1, 2)


def test_no_answer_and_merged_is_success() -> None:
    access = Lost(merged_after=True)
    outcome = _merge(GitHubFacts(access, login="github-actions[bot]"), base_ref="main")
    assert outcome.performed
    assert outcome.output["merge_sha"] == "f" * 40
    assert access.merges == 1


def test_no_answer_and_no_re_read_keeps_the_uncertainty() -> None:
    access = Lost(merged_after=None)
    with pytest.raises(ServerError, match="timed out during pulls/merge: GitHub may or may not"):
        _merge(GitHubFacts(access, login="github-actions[bot]"), base_ref="main")
    assert access.merges == 1
