"""GitHub logins ignore case: Holon's login configured as `Github-Actions[bot]` still finds
what GitHub says `github-actions[bot]` wrote (a comment, a check run, a review, a reply, a pull
request), so nothing is posted twice."""

from __future__ import annotations

from pathlib import Path

import github
import pytest

from holon.github.checks import settle_check, start_check
from holon.github.comments import upsert_comment
from holon.github.logins import same_login
from holon.github.publish import publish_change
from holon.github.publish_replies import PrFixDoc, post_replies
from holon.github.publish_request import PublishRequest
from holon.github.publish_review import ReviewDoc, post_review
from holon.github.publish_text import Actor
from tests.github.effect_scope import ISSUE, PULL, SKILL, handoff, scope_on
from tests.github.publish_support import runner_patch, seed
from tests.github.test_publish import BASE, REPO, RUN, edit, gh, request  # noqa: F401
from tests.support.github_fake import LoopbackGitHub

SHOUTED = "Github-Actions[bot]"  # GitHub answers `github-actions[bot]`


def test_same_login_ignores_case_and_never_matches_nobody() -> None:
    assert same_login("Github-Actions[bot]", "github-actions[bot]")
    assert not same_login("github-actions[bot]", "octocat")
    assert not same_login(None, None)
    assert not same_login("octocat", None)


def test_a_comment_is_found_again_whatever_the_case_of_the_login(
    github_server: LoopbackGitHub,
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    with scope_on(github_server.url, login=SHOUTED) as scope:
        upsert_comment(scope, ISSUE, "Working.", skill=SKILL)
        again = upsert_comment(scope, ISSUE, "Done.", skill=SKILL)
    assert again.performed
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("issues/update-comment") == 1


def test_a_check_run_is_found_again_whatever_the_case_of_the_login(
    github_server: LoopbackGitHub,
) -> None:
    repo = github_server.state.repos[REPO]
    repo.refs["heads/holon/issue-1"] = sha = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_issue("Crash on start")  # 1
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    # The loopback's check runs are by the app of GitHub's example, `octoapp`.
    with scope_on(github_server.url, login="OctoApp[bot]") as scope:
        start_check(scope, PULL, sha, skill=SKILL)
        settle_check(scope, PULL, sha, handoff("completed_success"))
    assert github_server.count("checks/create") == 1
    assert github_server.count("checks/update") == 1


def _pull(github_server: LoopbackGitHub) -> str:
    repo = github_server.state.repos[REPO]
    repo.refs["heads/feature"] = repo.put_file("a.txt", b"a\n", "main")
    pull = repo.add_pull("Add a", head="feature", user="octocat")  # 1
    assert pull.pull is not None
    pull.pull.review_comments.append(
        {"id": 20, "body": "typo", "user": "octocat", "path": "a.txt", "line": 1}
    )
    return repo.refs["heads/feature"]


def _on_pull(skill: str, sha: str) -> PublishRequest:
    return PublishRequest(
        repo=REPO, kind="pull_request", number=1, skill=skill, run_id=RUN, base_sha=sha
    )


def test_a_review_is_found_again_whatever_the_case_of_the_login(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    sha = _pull(github_server)
    post_review(gh, SHOUTED, _on_pull("github-review", sha), ReviewDoc())
    again = post_review(gh, SHOUTED, _on_pull("github-review", sha), ReviewDoc())
    assert again.note == "already reviewed"
    assert github_server.count("pulls/create-review") == 1


def test_a_change_request_on_holons_own_pull_request_whatever_the_case(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    sha = _pull(github_server)
    github_server.state.repos[REPO].issues[1].user = "github-actions[bot]"
    doc = ReviewDoc(event="REQUEST_CHANGES")
    outcome = post_review(gh, SHOUTED, _on_pull("github-review", sha), doc)
    assert outcome.output["event"] == "COMMENT"


def test_a_reply_is_found_again_whatever_the_case_of_the_login(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    sha = _pull(github_server)
    reply = {"comment_id": 20, "status": "fixed", "message": "Fixed."}
    doc = PrFixDoc.model_validate({"review_replies": [reply], "checks": [], "verification": []})
    post_replies(gh, SHOUTED, _on_pull("github-pr-fix", sha), doc, "c" * 40)
    again = post_replies(gh, SHOUTED, _on_pull("github-pr-fix", sha), doc, "c" * 40)
    assert not again.performed
    assert github_server.count("pulls/create-reply-for-review-comment") == 1


@pytest.fixture
def issue(github_server: LoopbackGitHub) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start", user="octocat")


def test_holons_pull_request_is_updated_whatever_the_case_of_the_login(
    tmp_path: Path,
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    issue: None,
) -> None:
    repo = github_server.state.repos[REPO]
    base = seed(repo, BASE)
    patch = runner_patch(tmp_path, BASE, edit)
    publish_change(gh, SHOUTED, request(base), patch, "summary")
    again = publish_change(gh, SHOUTED, request(base), patch, "a better summary")
    assert again.output["pull_request_action"] == "updated"


def test_holon_is_no_co_author_of_its_own_commit_whatever_the_case(
    tmp_path: Path,
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    issue: None,
) -> None:
    repo = github_server.state.repos[REPO]
    base = seed(repo, BASE)
    patch = runner_patch(tmp_path, BASE, edit)
    asked = request(base, actor=Actor("github-actions[bot]", 41898282))
    outcome = publish_change(gh, SHOUTED, asked, patch, "summary")
    assert "Co-authored-by" not in repo.get(outcome.output["commit"], "commit")["message"]
