"""GitHubFacts (holon/github/facts.py) over real HTTP against the loopback GitHub: permissions
(cached for a pass), pull requests (approval, staleness, same repository, Holon's), checks on a
sha with and without rulesets, and the API calls each answer costs (docs/github.md)."""

from __future__ import annotations

import pytest

from holon.controller.facts import PullFacts
from holon.github.checks import start_check
from holon.github.effects import Subject
from tests.github.effect_scope import SKILL, scope_on
from tests.github.merge_support import (
    REPO,
    RUN_ID,
    check,
    facts_for,
    holon_pull,
    pull_of,
    require,
    review,
    status,
)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo


@pytest.fixture
def repo(github_server: LoopbackGitHub) -> Repo:
    return github_server.state.repos[REPO]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# -- permission --------------------------------------------------------------------------------
def test_permission_is_read_once_per_actor_per_pass(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    repo.permissions.update(octocat="write", hubot="read")
    clock = Clock()
    facts = facts_for(github_server.url, clock=clock)
    assert [facts.permission(REPO, "octocat") for _ in range(3)] == ["write"] * 3
    assert facts.permission(REPO, "OctoCat") == "write"  # one actor, whatever the case
    assert facts.permission(REPO, "hubot") == "read"
    assert facts.permission(REPO, "stranger") == "none"
    assert github_server.count("repos/get-collaborator-permission-level") == 3
    facts.new_pass()
    repo.permissions["octocat"] = "read"  # taken away between passes: noticed
    assert facts.permission(REPO, "octocat") == "read"
    assert github_server.count() == 4
    clock.now += 61  # nobody called new_pass: a cache older than a minute is dropped anyway
    assert facts.permission(REPO, "octocat") == "read"
    assert github_server.count() == 5


def test_a_login_is_one_path_segment(github_server: LoopbackGitHub, repo: Repo) -> None:
    facts = facts_for(github_server.url)
    assert facts.permission(REPO, "dependabot[bot]") == "none"
    assert facts.permission(REPO, "../../user") == "none"
    assert [c.path for c in github_server.calls] == [
        f"/repos/{REPO}/collaborators/dependabot%5Bbot%5D/permission",
        f"/repos/{REPO}/collaborators/..%2F..%2Fuser/permission",
    ]


# -- pull requests -----------------------------------------------------------------------------
def test_a_fresh_approval_by_the_owner(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    review(issue, "octocat", "APPROVED", "OWNER")
    facts = facts_for(github_server.url)
    pull = pull_of(issue)
    assert facts.pull(REPO, issue.number) == PullFacts(
        approved=True,
        stale=False,
        head_sha=pull.head_sha,
        head_ref="holon/issue-1",
        same_repo=True,
        base_ref="main",
    )
    assert facts.is_holon_pr(REPO, issue.number) is True
    # The pull request is read once per pass; reviews every time a decision needs them.
    assert github_server.operations() == ["pulls/get", "pulls/list-reviews"]


def test_an_approval_on_an_older_head_is_stale(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    review(issue, commit=repo.refs["heads/main"])
    found = facts_for(github_server.url).pull(REPO, issue.number)
    assert found is not None
    assert (found.approved, found.stale) == (True, True)


@pytest.mark.parametrize(
    ("login", "association", "permission", "approved", "calls"),
    [
        ("octocat", "OWNER", None, True, 0),
        ("maintainer", "MEMBER", "maintain", True, 1),
        ("writer", "COLLABORATOR", "write", True, 1),
        ("triager", "COLLABORATOR", "triage", False, 1),
        ("outsider", "NONE", "admin", False, 0),  # the association says no: not looked up
        ("contributor", "CONTRIBUTOR", "write", False, 0),
        ("renovate[bot]", "OWNER", "admin", False, 0),  # a bot not allow-listed
        ("github-actions[bot]", "OWNER", "admin", False, 0),  # Holon never approves itself
    ],
)
def test_only_reviewers_with_write_access_approve(
    github_server: LoopbackGitHub,
    repo: Repo,
    login: str,
    association: str,
    permission: str | None,
    approved: bool,
    calls: int,
) -> None:
    issue = holon_pull(repo)
    if permission:
        repo.permissions[login] = permission
    review(issue, login, "APPROVED", association)
    found = facts_for(github_server.url).pull(REPO, issue.number)
    assert found is not None
    assert found.approved is approved
    assert github_server.count("repos/get-collaborator-permission-level") == calls


def test_an_allow_listed_bot_approves(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    review(issue, "renovate[bot]", "APPROVED", "NONE")
    found = facts_for(github_server.url, allowed_bots=["renovate[bot]"]).pull(REPO, issue.number)
    assert found is not None
    assert found.approved


def test_a_writers_request_for_changes_blocks(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    repo.permissions["writer"] = "write"
    review(issue, "octocat", "APPROVED", "OWNER")
    review(issue, "writer", "CHANGES_REQUESTED", "COLLABORATOR")
    found = facts_for(github_server.url).pull(REPO, issue.number)
    assert found is not None
    assert not found.approved


def test_fork_pull_requests_are_not_holons(github_server: LoopbackGitHub, repo: Repo) -> None:
    forked = holon_pull(repo)
    pull_of(forked).fork = "mallory/Hello-World"  # a fork may name its branch holon/ too
    gone = holon_pull(repo, branch="holon/issue-2")
    pull_of(gone).fork_deleted = True
    other = holon_pull(repo, branch="feature/x")
    facts = facts_for(github_server.url)
    assert facts.is_holon_pr(REPO, forked.number) is False
    assert facts.is_holon_pr(REPO, gone.number) is False
    assert facts.is_holon_pr(REPO, other.number) is False
    found = facts.pull(REPO, forked.number)
    assert found is not None
    assert not found.same_repo


def test_unknown_when_github_does_not_answer(github_server: LoopbackGitHub, repo: Repo) -> None:
    facts = facts_for(github_server.url)
    assert facts.pull(REPO, 99) is None  # 404
    assert facts.is_holon_pr(REPO, 99) is None
    issue = holon_pull(repo)
    github_server.fail("pulls/list-reviews", 403)
    assert facts.pull(REPO, issue.number) is None
    assert facts.is_holon_pr(REPO, issue.number) is True  # the pull request itself was read


# -- checks ------------------------------------------------------------------------------------
def test_required_checks_come_from_the_base_branchs_rulesets(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    require(repo, "ci")
    check(repo, sha, "ci")
    check(repo, sha, "optional", conclusion="failure")  # not required: does not count
    facts = facts_for(github_server.url)
    assert facts.pull(REPO, issue.number) is not None
    github_server.calls.clear()
    assert facts.checks_green(REPO, sha) is True
    assert github_server.operations() == [
        "repos/get-branch-rules",
        "checks/list-for-ref",
        "repos/get-combined-status-for-ref",
    ]
    assert github_server.calls[0].path == f"/repos/{REPO}/rules/branches/main"


def test_pending_required_check_is_not_green(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    require(repo, "ci", "deploy")
    check(repo, sha, "ci")
    facts = facts_for(github_server.url)
    assert facts.checks_green(REPO, sha) is False  # deploy has not reported
    status(repo, sha, "deploy", "pending")
    assert facts.checks_green(REPO, sha) is False
    status(repo, sha, "deploy", "success")
    assert facts.checks_green(REPO, sha) is True


def test_without_a_pull_read_the_default_branch_rules(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    sha = repo.refs["heads/main"]
    require(repo, "ci")
    check(repo, sha, "ci", conclusion="failure")
    facts = facts_for(github_server.url)
    assert facts.checks_green(REPO, sha) is False
    assert github_server.operations()[:2] == ["repos/get", "repos/get-branch-rules"]


def test_a_release_branch_has_its_own_rules(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    pull = pull_of(issue)
    repo.refs["heads/release/1.x"] = repo.refs["heads/main"]
    pull.base = "release/1.x"
    require(repo, "release-gate", branch="release/1.x")
    check(repo, pull.head_sha, "ci")
    facts = facts_for(github_server.url)
    assert facts.pull(REPO, issue.number) is not None
    assert facts.checks_green(REPO, pull.head_sha) is False  # release-gate never reported
    assert github_server.last("repos/get-branch-rules").path.endswith("/rules/branches/release/1.x")


def test_without_rulesets_everything_on_the_sha_must_pass(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    facts = facts_for(github_server.url, own_run_id=RUN_ID)
    assert facts.checks_green(REPO, sha) is False  # nothing has checked it yet
    check(repo, sha, "holon", status="in_progress", run_id=RUN_ID)  # Holon's own job
    assert facts.checks_green(REPO, sha) is False  # still: Holon's job proves nothing
    check(repo, sha, "ci")
    assert facts.checks_green(REPO, sha) is True
    status(repo, sha, "coverage", "failure")
    assert facts.checks_green(REPO, sha) is False
    check(repo, sha, "another-run", status="in_progress", run_id="77")  # not Holon's own
    assert facts_for(github_server.url).checks_green(REPO, sha) is False


def test_checks_unknown_when_github_refuses(github_server: LoopbackGitHub, repo: Repo) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    check(repo, sha, "ci")
    facts = facts_for(github_server.url)
    github_server.fail("repos/get-branch-rules", 403)
    assert facts.checks_green(REPO, sha) is None
    github_server.fail("checks/list-for-ref", 403)
    assert facts.checks_green(REPO, sha) is None
    github_server.fail("repos/get-combined-status-for-ref", 500, times=4)  # every retry too
    assert facts.checks_green(REPO, sha) is None
    assert facts.checks_green(REPO, sha) is True


# -- Holon's own `Holon` check run -----------------------------------------------------------
APP = "octoapp[bot]"  # the loopback GitHub creates check runs as its documented example's app


def _holon_check(url: str, sha: str) -> None:
    """Holon's `Holon` check run on `sha`, in progress, written as serve's hooks write it."""
    with scope_on(url, login=APP) as scope:
        start_check(scope, Subject(REPO, "pull_request", 2), sha, skill=SKILL)


@pytest.mark.parametrize("own_run_id", [None, RUN_ID])  # outside Actions, and inside
def test_holons_own_check_run_never_holds_the_merge(
    github_server: LoopbackGitHub, repo: Repo, own_run_id: str | None
) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    _holon_check(github_server.url, sha)
    check(repo, sha, "ci")
    (run,) = [r for r in repo.check_runs.values() if r["name"] == "Holon"]
    assert run["status"] == "in_progress"
    assert facts_for(github_server.url, login=APP, own_run_id=own_run_id).checks_green(REPO, sha)
    # Required by name, it is still left out: the merge waits for another app's `Holon`.
    require(repo, "ci", "Holon")
    facts = facts_for(github_server.url, login=APP, own_run_id=own_run_id)
    assert facts.checks_green(REPO, sha) is False
    # Holon under another login: the same check run is someone else's, and holds the merge.
    repo.rules.clear()
    assert facts_for(github_server.url, own_run_id=own_run_id).checks_green(REPO, sha) is False


@pytest.mark.parametrize("required", [True, False])
def test_a_holon_check_of_another_app_counts(
    github_server: LoopbackGitHub, repo: Repo, required: bool
) -> None:
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    _holon_check(github_server.url, sha)
    check(repo, sha, "ci")
    if required:
        require(repo, "ci", "Holon")
    check(repo, sha, "Holon", status="in_progress", app_id=99, app="other-ci")
    facts = facts_for(github_server.url, login=APP)
    assert facts.checks_green(REPO, sha) is False  # another app's `Holon` is not done
    other = next(r for r in repo.check_runs.values() if "other-ci" in str(r.get("app")))
    other.update(status="completed", conclusion="failure")
    assert facts.checks_green(REPO, sha) is False
    other["conclusion"] = "success"
    assert facts.checks_green(REPO, sha) is True


def test_a_holon_check_of_holons_app_without_its_marker_counts(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    # A workflow job named `Holon` when Holon writes with that workflow's app (Actions' token):
    # Holon's own carries its marker, this one does not, and it is a check like any other.
    issue = holon_pull(repo)
    sha = pull_of(issue).head_sha
    check(repo, sha, "ci")
    check(repo, sha, "Holon", status="in_progress", app="octoapp")
    assert facts_for(github_server.url, login=APP).checks_green(REPO, sha) is False


# -- head --------------------------------------------------------------------------------------
def test_head_is_the_pull_requests_read_once_a_pass_with_where_it_lives(
    github_server: LoopbackGitHub, repo: Repo
) -> None:
    pull = holon_pull(repo)
    facts = facts_for(github_server.url)
    found = facts.head(REPO, pull.number)
    assert found is not None
    assert (found.sha, found.same_repo) == (pull_of(pull).head_sha, True)
    assert facts.is_holon_pr(REPO, pull.number) is True  # the same read: no second call
    assert github_server.count("pulls/get") == 1
    pull_of(pull).fork = "someone/Hello-World"
    facts.new_pass()
    forked = facts.head(REPO, pull.number)
    assert forked is not None
    assert forked.same_repo is False
    assert facts.head(REPO, 999) is None  # no such pull request: unknown
