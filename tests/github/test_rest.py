"""RestAccess and the permission answer, against GitHub's documented bodies (`github_fake`):
role names over the legacy field, a 404 as no access, pages read to the end and no further
than Holon's bound, and names GitHub could not have refused before any request."""

from __future__ import annotations

from typing import Any

import github
import pytest

from holon.github.access import TooMany
from holon.github.client import GitHubConfig, make_client
from holon.github.errors import GitHubError
from holon.github.rest import RestAccess, repo_path
from tests.github.merge_support import facts_for
from tests.support.github_fake import GitHubFake

REPO = "octocat/Hello-World"
API = "https://api.github.com"


def _permission_body(permission: str, role: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"permission": permission, "user": {"login": "someone"}}
    if role is not None:
        body["role_name"] = role
    return body


@pytest.mark.parametrize(
    ("permission", "role", "expected"),
    [
        ("write", "maintain", "maintain"),  # GitHub's legacy field reads maintain as write
        ("read", "triage", "triage"),  # ...and triage as read
        ("admin", "admin", "admin"),
        ("write", "security-reviewer", "write"),  # a custom role: its base
        ("read", None, "read"),  # an older GitHub Enterprise Server: no role_name
        ("none", "none", "none"),
        ("superuser", "superuser", None),  # neither is a permission Holon knows
    ],
)
def test_the_role_name_decides(
    github_fake: GitHubFake, permission: str, role: str | None, expected: str | None
) -> None:
    github_fake.on(
        "repos/get-collaborator-permission-level", body=_permission_body(permission, role)
    )
    assert facts_for(API).permission(REPO, "someone") == expected


@pytest.mark.parametrize(("status", "expected"), [(404, "none"), (403, None), (401, None)])
def test_a_404_is_no_access_and_a_refusal_unknown(
    github_fake: GitHubFake, status: int, expected: str | None
) -> None:
    github_fake.on("repos/get-collaborator-permission-level", status=status)
    facts = facts_for(API)
    assert facts.permission(REPO, "someone") == expected
    assert facts.permission(REPO, "someone") == expected
    assert github_fake.count() == 1  # a refusal is remembered for the pass too


def test_the_documented_permission_answer(github_fake: GitHubFake) -> None:
    github_fake.on("repos/get-collaborator-permission-level")  # GitHub's own example: admin
    assert facts_for(API).permission(REPO, "octocat") == "admin"


def _review(n: int) -> dict[str, Any]:
    return {
        "id": n,
        "user": {"login": f"r{n}", "type": "User"},
        "state": "COMMENTED",
        "author_association": "NONE",
        "commit_id": "a" * 40,
    }


def test_reviews_are_read_page_by_page(github_fake: GitHubFake) -> None:
    github_fake.on("pulls/list-reviews", body=[_review(n) for n in range(100)])
    github_fake.on("pulls/list-reviews", body=[_review(n) for n in range(100, 150)])
    reviews = RestAccess(_client()).reviews(REPO, 7)
    assert len(reviews) == 150
    assert [c.query["page"] for c in github_fake.calls] == [["1"], ["2"]]
    assert all(c.query["per_page"] == ["100"] for c in github_fake.calls)


def test_a_list_longer_than_holon_reads_is_refused(github_fake: GitHubFake) -> None:
    runs = [{"name": f"c{n}", "status": "completed", "conclusion": "success"} for n in range(100)]
    github_fake.on("checks/list-for-ref", body={"total_count": 5000, "check_runs": runs})
    with pytest.raises(TooMany, match="more than 1000 items"):
        RestAccess(_client()).check_runs(REPO, "a" * 40)
    assert github_fake.count() == 10


def test_a_check_list_ends_at_its_total(github_fake: GitHubFake) -> None:
    github_fake.on("checks/list-for-ref")  # GitHub's example: total_count 1
    github_fake.on("repos/get-combined-status-for-ref")  # total_count 2
    access = RestAccess(_client())
    (run,) = access.check_runs(REPO, "a" * 40)
    assert (run.name, run.status, run.conclusion, run.app_id) == (
        "mighty_readme",
        "completed",
        "neutral",
        1,
    )
    assert [s.context for s in access.statuses(REPO, "a" * 40)] == [
        "continuous-integration/jenkins",
        "security/brakeman",
    ]
    assert github_fake.count() == 2


@pytest.mark.parametrize(
    "repo", ["octocat", "octocat/Hello/World", "../etc", "octocat/..", "octo cat/x", "-x/y", ""]
)
def test_a_repository_name_github_could_not_have_is_refused(repo: str) -> None:
    with pytest.raises(GitHubError, match="repository name"):
        repo_path(repo)


def test_names_and_shas_are_checked_before_any_request(github_fake: GitHubFake) -> None:
    access = RestAccess(_client())
    with pytest.raises(GitHubError, match="sha"):
        access.check_runs(REPO, "main")
    with pytest.raises(GitHubError, match="sha"):
        access.statuses(REPO, "A" * 40)
    with pytest.raises(GitHubError, match="branch"):
        access.branch_rules(REPO, "release/../../x")
    with pytest.raises(GitHubError, match="branch"):
        access.branch_rules(REPO, "")
    with pytest.raises(GitHubError, match="repository name"):
        access.pull("../../orgs/x", 1)
    assert github_fake.calls == []


def test_a_branch_is_encoded_but_keeps_its_slashes(github_fake: GitHubFake) -> None:
    github_fake.on("repos/get-branch-rules")
    RestAccess(_client()).branch_rules(REPO, "feature/a b#?")
    assert github_fake.calls[0].path == f"/repos/{REPO}/rules/branches/feature/a%20b%23%3F"


def _client() -> github.Github:
    config = GitHubConfig.model_validate({"api_url": API, "token": "ghs_" + "f" * 36})
    return make_client(config, sleep=lambda seconds: None)
