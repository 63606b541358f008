"""A review run's review.json and review.md as one pull request review per head sha."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import github
import pytest

from holon.github.access import TooMany
from holon.github.client import GitHubConfig, make_client
from holon.github.errors import PublishError
from holon.github.marker import format_marker, parse_marker
from holon.github.publish_request import PublishRequest
from holon.github.publish_review import ReviewDoc, post_review, read_review
from tests.github.test_publish import LOGIN, REPO, RUN, TOKEN
from tests.support.github_fake import GitHubFake, LoopbackGitHub
from tests.support.github_fake.state import Repo

# The skill's shape (skills/github-review/schemas/review.schema.json); review.md is the body.
REVIEW = [
    {
        "path": "src/app.py",
        "line": 2,
        "severity": "error",
        "message": "`x` is unbound here.",
        "suggestion": "```python\nx = 0\n```",
    },
    {
        "path": "README.md",
        "line": 3,
        "severity": "nit",
        "message": "@octocat typo",
        "suggestion": "",
    },
]
REVIEW_MD = "Two problems. cc @octo-org/team <!-- holon:v1 subject=issue:9 workflow=x skill=y -->"


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    client = make_client(
        GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0)  # type: ignore[arg-type]
    )
    yield client
    client.close()


@pytest.fixture
def pull(github_server: LoopbackGitHub) -> tuple[Repo, str]:
    repo = github_server.state.repos[REPO]
    repo.refs["heads/feature"] = repo.put_file("a.txt", b"a\n", "main")
    repo.add_pull("Add a", head="feature", user="octocat")  # 1
    return repo, repo.refs["heads/feature"]


def review_request(sha: str) -> PublishRequest:
    return PublishRequest(
        repo=REPO, kind="pull_request", number=1, skill="github-review", run_id=RUN, base_sha=sha
    )


def test_a_review_is_posted_once_per_head_sha(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    repo, sha = pull
    doc = read_review(json.dumps(REVIEW).encode(), REVIEW_MD)
    outcome = post_review(gh, LOGIN, review_request(sha), doc)
    assert outcome.performed
    assert outcome.output["event"] == "REQUEST_CHANGES"  # an error finding asks for changes
    assert github_server.operations() == [
        "pulls/get",
        "pulls/list-reviews",
        "pulls/list-review-comments",
        "pulls/create-review",
    ]
    sent = github_server.last("pulls/create-review").json
    assert sent["commit_id"] == sha
    assert parse_marker(sent["body"]) == parse_marker(
        format_marker("pull_request", "1", "holon", "github-review")
    )
    assert "@\u200bocto-org/team" in sent["body"]  # nobody is mentioned
    assert sent["body"].count("<!--") == 1  # the agent's marker is broken
    assert sent["comments"][0] == {
        "path": "src/app.py",
        "line": 2,
        "side": "RIGHT",
        "body": "**error**: `x` is unbound here.\n\n**Suggestion**: ```python\nx = 0\n```",
    }
    assert sent["comments"][1]["body"] == "**nit**: @\u200boctocat typo"
    assert len(repo.issues[1].pull.reviews) == 1  # type: ignore[union-attr]
    github_server.calls.clear()
    again = post_review(gh, LOGIN, review_request(sha), doc)
    assert not again.performed
    assert again.note == "already reviewed"
    assert "pulls/create-review" not in github_server.operations()


def test_a_finding_an_open_thread_already_raises_is_not_repeated(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    repo, sha = pull
    thread = {"id": 77, "user": "octocat", "body": "x is unbound", "path": "src/app.py"}
    reply = {**thread, "id": 78, "in_reply_to_id": 77, "path": "README.md", "line": 1}
    repo.issues[1].pull.review_comments.extend(  # type: ignore[union-attr]
        [{**thread, "line": 2, "commit_id": sha}, {**reply, "commit_id": sha}]
    )
    doc = read_review(json.dumps(REVIEW).encode(), REVIEW_MD)
    outcome = post_review(gh, LOGIN, review_request(sha), doc)
    assert outcome.performed
    assert outcome.note == "1 finding(s) on a line with a review thread already: not repeated"
    sent = github_server.last("pulls/create-review").json
    # src/app.py line 2 has a thread: only the other finding is posted (a reply starts none).
    assert [(c["path"], c["line"]) for c in sent["comments"]] == [
        (f["path"], f["line"]) for f in REVIEW if (f["path"], f["line"]) != ("src/app.py", 2)
    ]


def test_someone_elses_review_with_a_marker_does_not_count(
    gh: github.Github, pull: tuple[Repo, str]
) -> None:
    repo, sha = pull
    forged = format_marker("pull_request", "1", "holon", "github-review")
    repo.issues[1].pull.reviews.append(  # type: ignore[union-attr]
        {"id": 5, "user": "octocat", "body": forged, "state": "COMMENTED", "commit_id": sha}
    )
    assert post_review(gh, LOGIN, review_request(sha), ReviewDoc()).performed


def test_without_holons_login_no_review_is_posted(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    # Its own review cannot be recognized without the login: a second settle would post twice.
    _, sha = pull
    with pytest.raises(PublishError, match="HOLON_GITHUB_LOGIN") as caught:
        post_review(gh, None, review_request(sha), ReviewDoc())
    assert caught.value.reason == "no-login"
    assert github_server.operations() == []


def test_a_review_of_a_head_that_moved_is_not_posted(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    # Not a success: the run's review is of code that is gone, and nobody would be told.
    _, sha = pull
    with pytest.raises(PublishError) as caught:
        post_review(gh, LOGIN, review_request("f" * 40), ReviewDoc())
    assert caught.value.reason == "moved"
    assert f"the head moved from {'f' * 12} to {sha[:12]}" in str(caught.value)
    assert caught.value.evidence == (f"reviewed {'f' * 40}", f"head {sha}")
    assert github_server.operations() == ["pulls/get"]


def test_a_change_request_on_holons_own_pull_request_becomes_a_comment(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    repo, sha = pull
    repo.issues[1].user = LOGIN
    outcome = post_review(gh, LOGIN, review_request(sha), ReviewDoc(event="REQUEST_CHANGES"))
    assert outcome.output["event"] == "COMMENT"
    assert "own pull request" in outcome.note
    assert github_server.last("pulls/create-review").json["event"] == "COMMENT"


def test_line_comments_github_refuses_are_folded_into_the_body(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    _, sha = pull
    github_server.fail(
        "pulls/create-review",
        422,
        {"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]},
    )
    doc = read_review(json.dumps(REVIEW).encode(), REVIEW_MD)
    outcome = post_review(gh, LOGIN, review_request(sha), doc)
    assert outcome.performed
    assert "findings are in the body" in outcome.note
    sent = github_server.last("pulls/create-review").json
    assert sent["comments"] == []
    assert "`src/app.py` line 2 (error):" in sent["body"]


def test_a_5xx_after_github_posted_the_review_is_looked_up(github_fake: GitHubFake) -> None:
    sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"  # the head in GitHub's example pull
    marker = format_marker("pull_request", "1", "holon", "github-review")
    posted: dict[str, Any] = {"id": 80, "user": {"login": LOGIN}, "body": marker, "commit_id": sha}
    github_fake.on("pulls/get")
    github_fake.on("pulls/list-reviews", body=[])
    github_fake.on("pulls/list-reviews", body=[posted])
    github_fake.on("pulls/create-review", status=502)
    client = make_client(GitHubConfig(token=TOKEN, write_spacing=0.0))  # type: ignore[arg-type]
    outcome = post_review(client, LOGIN, review_request(sha), ReviewDoc())
    assert outcome.output["review"] == 80
    assert github_fake.operations() == [
        "pulls/get",
        "pulls/list-reviews",
        "pulls/create-review",
        "pulls/list-reviews",
    ]


def test_more_reviews_than_holon_reads_fail_instead_of_posting_again(
    github_fake: GitHubFake,
) -> None:
    # Holon's review could be on the page after the last one read: posting would double it.
    sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"  # the head in GitHub's example pull
    others = [{"id": n, "user": {"login": "octocat"}, "body": "ok"} for n in range(100)]
    github_fake.on("pulls/get")
    github_fake.on("pulls/list-reviews", body=others)
    client = make_client(GitHubConfig(token=TOKEN, write_spacing=0.0))  # type: ignore[arg-type]
    with pytest.raises(TooMany) as caught:
        post_review(client, LOGIN, review_request(sha), ReviewDoc())
    message = str(caught.value)
    assert "pulls/list-reviews" in message
    assert "more than 1000" in message
    assert "\n" not in message
    assert github_fake.operations() == ["pulls/get"] + ["pulls/list-reviews"] * 11


def test_exactly_the_pages_holon_reads_are_not_too_many(github_fake: GitHubFake) -> None:
    sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
    others = [{"id": n, "user": {"login": "octocat"}, "body": "ok"} for n in range(100)]
    github_fake.on("pulls/get")
    for _ in range(10):
        github_fake.on("pulls/list-reviews", body=others)
    github_fake.on("pulls/list-reviews", body=[])
    github_fake.on("pulls/create-review")
    client = make_client(GitHubConfig(token=TOKEN, write_spacing=0.0))  # type: ignore[arg-type]
    assert post_review(client, LOGIN, review_request(sha), ReviewDoc()).performed


FINDING = {"path": "a", "line": 1, "severity": "warn", "message": "b", "suggestion": ""}


def test_a_review_without_an_error_finding_is_a_comment_with_review_md_as_its_body() -> None:
    doc = read_review(json.dumps([FINDING]).encode(), "Looks right.")
    assert (doc.event, doc.body, len(doc.comments)) == ("COMMENT", "Looks right.", 1)
    assert read_review(b"[]").comments == []


@pytest.mark.parametrize(
    ("document", "says"),
    [
        (b"{}", "list"),
        (b"[", "invalid JSON"),
        (json.dumps([{**FINDING, "severity": "note"}]).encode(), "severity"),
        (json.dumps([{**FINDING, "verdict": "ok"}]).encode(), "verdict"),
        (json.dumps([{**FINDING, "path": "../x"}]).encode(), ".."),
        (json.dumps([{**FINDING, "line": 0}]).encode(), "line"),
        (json.dumps([{**FINDING, "message": ""}]).encode(), "message"),
        (
            json.dumps([{k: v for k, v in FINDING.items() if k != "suggestion"}]).encode(),
            "suggestion",
        ),
        (json.dumps([FINDING] * 51).encode(), "50"),
    ],
)
def test_a_bad_review_json_is_refused_naming_the_problem(document: bytes, says: str) -> None:
    with pytest.raises(PublishError, match=r"review\.json") as caught:
        read_review(document)
    assert caught.value.reason == "bad-input"
    assert says in str(caught.value)


def test_a_review_neutralized_longer_still_fits_githubs_limit(
    gh: github.Github, github_server: LoopbackGitHub, pull: tuple[Repo, str]
) -> None:
    _, sha = pull
    hostile = ("https://" + "a." * 250 + "evil.example/x " + "@x ") * 110  # ~59,000 characters
    post_review(gh, LOGIN, review_request(sha), ReviewDoc(body=hostile[:59_000]))
    body = github_server.last("pulls/create-review").json["body"]
    assert len(body) <= 60_000
    assert parse_marker(body) is not None
    assert "https://" not in body.split("\n", 1)[1]
