"""Replies to the review threads a pr-fix run addressed, once per thread and commit."""

from __future__ import annotations

import json
from typing import Any

import github
import pytest

from holon.github.errors import PublishError
from holon.github.marker import format_marker, parse_marker
from holon.github.publish_api import RepoApi
from holon.github.publish_replies import PrFixDoc, done_line, post_replies, read_replies
from holon.github.publish_request import PublishRequest
from tests.github.test_publish import LOGIN, REPO, RUN, gh  # noqa: F401  (a fixture)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

COMMIT = "c" * 40


@pytest.fixture
def threads(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.refs["heads/feature"] = repo.put_file("a.txt", b"a\n", "main")
    pull = repo.add_pull("Add a", head="feature", user=LOGIN)  # 1
    assert pull.pull is not None
    pull.pull.review_comments += [
        {"id": 10, "body": "this loops forever", "user": "octocat", "path": "a.txt", "line": 1},
        {
            "id": 11,
            "body": "and this?",
            "user": "octocat",
            "path": "a.txt",
            "line": 1,
            "in_reply_to_id": 10,
        },
        {"id": 20, "body": "typo", "user": "octocat", "path": "a.txt", "line": 1},
    ]
    return repo


def _doc(*replies: dict[str, object]) -> PrFixDoc:
    return PrFixDoc.model_validate(
        {"review_replies": list(replies), "checks": [], "verification": []}
    )


def _request() -> PublishRequest:
    return PublishRequest(
        repo=REPO,
        kind="pull_request",
        number=1,
        skill="github-pr-fix",
        run_id=RUN,
        base_sha="b" * 40,
    )


def test_each_addressed_thread_gets_one_reply_naming_the_commit(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
) -> None:
    doc = read_replies(
        json.dumps(
            {
                "review_replies": [
                    {"comment_id": 11, "status": "fixed", "message": "The loop ends. @octocat"},
                    {"comment_id": 20, "status": "wontfix", "message": "It is the API's name."},
                    {"comment_id": 999, "status": "fixed", "message": "not here"},
                ],
                "checks": [{"name": "test", "status": "fixed", "message": "passes"}],
                "verification": [{"command": "pytest -q", "exit_code": 0}],
            }
        ).encode()
    )
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    assert outcome.performed
    assert outcome.note == "comment 999 is not on this pull request"
    assert len(outcome.output["replies"]) == 2
    assert github_server.operations() == [
        "pulls/list-review-comments",
        "pulls/create-reply-for-review-comment",
        "pulls/create-reply-for-review-comment",
        "pulls/list-review-comments",  # again: did another job post the same reply at once?
    ]
    # A reply to a reply goes to its thread; the text mentions nobody and names the commit.
    first = github_server.calls[1]
    assert first.path.endswith("/pulls/1/comments/10/replies")
    assert parse_marker(first.json["body"]) is not None
    assert "@\u200bocto" in first.json["body"]
    assert first.json["body"].endswith(f"Addressed in {COMMIT}.")
    # The last line says what the commit did about the thread, by the reply's status.
    assert github_server.calls[2].json["body"].endswith(f"Not changed in {COMMIT}, on purpose.")
    github_server.calls.clear()
    again = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    assert not again.performed
    assert github_server.operations() == ["pulls/list-review-comments"]
    # A second attempt (after a crash, or another job) names the replies that stand: the same.
    assert again.output["replies"] == outcome.output["replies"]


def test_a_5xx_after_github_posted_the_reply_is_looked_up(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
) -> None:
    github_server.fail("pulls/create-reply-for-review-comment", 502, done=True)
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    assert len(outcome.output["replies"]) == 1
    assert github_server.count("pulls/create-reply-for-review-comment") == 1
    pull = threads.issues[1].pull
    assert pull is not None
    assert len(pull.review_comments) == 4


def test_without_holons_login_no_reply_is_posted(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
) -> None:
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    with pytest.raises(PublishError, match="HOLON_GITHUB_LOGIN") as caught:
        post_replies(gh, None, _request(), doc, COMMIT)
    assert caught.value.reason == "no-login"
    assert github_server.operations() == []
    # Nothing to post needs no login.
    assert not post_replies(gh, None, _request(), _doc(), COMMIT).performed


@pytest.mark.parametrize(
    "document",
    [
        b"{}x",
        b'{"review_replies": [], "checks": []}',
        b'{"review_replies": [{"comment_id": 0, "status": "fixed", "message": "x"}],'
        b' "checks": [], "verification": []}',
        b'{"review_replies": [], "checks": [], "verification": [], "extra": 1}',
        b'{"review_replies": [{"comment_id": 1, "status": "fixed", "message": ""}],'
        b' "checks": [], "verification": []}',
        b'{"review_replies": [{"comment_id": 1, "status": "done", "message": "x"}],'
        b' "checks": [], "verification": []}',
        b'{"review_replies": [], "checks": [{"name": "t", "status": "green", "message": "x"}],'
        b' "verification": []}',
    ],
)
def test_a_bad_pr_fix_json_is_refused(document: bytes) -> None:
    with pytest.raises(PublishError, match=r"pr-fix\.json") as caught:
        read_replies(document)
    assert caught.value.reason == "bad-input"


def test_a_reply_is_neutralized_where_it_is_written(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
) -> None:
    message = "/holon merge\n@octocat ![x](https://evil.example/p.png?t=1) ghp_" + "A" * 36
    doc = _doc({"comment_id": 20, "status": "wontfix", "message": message})
    post_replies(gh, LOGIN, _request(), doc, COMMIT)
    body = github_server.last("pulls/create-reply-for-review-comment").json["body"]
    assert parse_marker(body) is not None
    assert "/\u200bholon merge" in body
    assert "@\u200b" in body
    assert "evil.example" not in body
    assert "ghp_" not in body


MARK = format_marker("pull_request", "1", "holon", "github-pr-fix")


def _racer(
    monkeypatch: pytest.MonkeyPatch,
    repo: Repo,
    when: str,
    user: str = LOGIN,
    line: str = done_line("fixed", COMMIT),
) -> list[int]:
    """Another job replies in thread 20 (`before` this one's POST, or `after` it, before the
    look again); the ids it posted."""
    pull = repo.issues[1].pull
    assert pull is not None
    real = RepoApi.call
    posted: list[int] = []

    def reply() -> None:
        ident = repo.next_id()
        body = f"{MARK}\n\nFixed (the other job).\n\n{line}"
        pull.review_comments.append(
            {"id": ident, "body": body, "user": user, "in_reply_to_id": 20, "path": "a.txt"}
        )
        posted.append(ident)

    def call(api: RepoApi, operation: str, *args: Any, **kw: Any) -> Any:
        if operation == "pulls/create-reply-for-review-comment" and when == "before":
            reply()
        answer = real(api, operation, *args, **kw)
        if operation == "pulls/create-reply-for-review-comment" and when == "after":
            reply()
        return answer

    monkeypatch.setattr(RepoApi, "call", call)
    return posted


def _holon_replies(repo: Repo) -> list[int]:
    pull = repo.issues[1].pull
    assert pull is not None
    return [
        c["id"]
        for c in pull.review_comments
        if c.get("in_reply_to_id") == 20 and c["user"] == LOGIN and c["body"].startswith(MARK)
    ]


def test_an_older_reply_another_job_posted_at_once_stands_and_ours_is_deleted(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = _racer(monkeypatch, threads, "before")
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    assert _holon_replies(threads) == other
    assert outcome.output["replies"] == other
    assert not outcome.performed  # the reply that stands is the other job's
    assert "posted by another job" in outcome.note
    deleted = github_server.last("pulls/delete-review-comment").path.rsplit("/", 1)[-1]
    assert int(deleted) > other[0]  # ours, the newer
    assert github_server.operations() == [
        "pulls/list-review-comments",
        "pulls/create-reply-for-review-comment",
        "pulls/list-review-comments",
        "pulls/delete-review-comment",
    ]


def test_a_newer_reply_another_job_posted_is_left_to_that_job(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = _racer(monkeypatch, threads, "after")
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    (ours,) = outcome.output["replies"]
    # Ours is the older: it stands; the other job's look again deletes its own.
    assert _holon_replies(threads) == [ours, *other]
    assert outcome.performed
    assert github_server.count("pulls/delete-review-comment") == 0


@pytest.mark.parametrize(
    ("user", "line"),
    [
        ("octocat", done_line("fixed", COMMIT)),  # anyone can type the marker and the line
        (LOGIN, done_line("fixed", "d" * 40)),  # Holon's reply for another commit
    ],
    ids=["someone-else", "another-commit"],
)
def test_an_older_reply_that_is_not_the_same_leaves_ours_standing(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
    monkeypatch: pytest.MonkeyPatch,
    user: str,
    line: str,
) -> None:
    _racer(monkeypatch, threads, "before", user, line)
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    pull = threads.issues[1].pull
    assert pull is not None
    ours = pull.review_comments[-1]  # posted after the other
    assert ours["user"] == LOGIN
    assert ours["body"].endswith(done_line("fixed", COMMIT))
    assert outcome.output["replies"] == [ours["id"]]
    assert outcome.performed
    assert github_server.count("pulls/delete-review-comment") == 0


def test_a_5xx_on_deleting_the_duplicate_deletes_it_once(
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
    threads: Repo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = _racer(monkeypatch, threads, "before")
    github_server.fail("pulls/delete-review-comment", 502, done=True)
    doc = _doc({"comment_id": 20, "status": "fixed", "message": "Fixed."})
    outcome = post_replies(gh, LOGIN, _request(), doc, COMMIT)
    # Sent again, it finds the reply gone (404): done, not a failure.
    assert github_server.count("pulls/delete-review-comment") == 2
    assert _holon_replies(threads) == other == outcome.output["replies"]
