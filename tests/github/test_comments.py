"""One comment per (subject, workflow, skill), found by its marker on Holon's own comments only,
edited in place; the calls each path costs (docs/github.md, "Effects")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from holon.github.comments import reply, upsert_comment
from holon.github.effects import CrossRepository, EffectRefused, Scope, Subject
from holon.github.errors import GitHubError, NotFound, PermissionDenied, ServerError
from holon.github.marker import format_marker, parse_marker
from holon.github.pygithub_repo import check_next_page
from tests.github.effect_scope import HOLON, ISSUE, PULL, REPO, scope_on
from tests.support.github_fake import GitHubFake, LoopbackGitHub
from tests.support.github_fake.state import Repo

MARK = format_marker("issue", "1", "holon", "github-issue-solve")


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")  # 1
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    return repo


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url) as made:
        yield made


def _bodies(state: Repo, number: int = 1) -> list[str]:
    return [c.body for c in state.comments.values() if c.issue == number]


def test_first_write_posts_with_the_marker_first(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    outcome = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
    assert outcome.performed
    # Listed again after posting: another process may have posted at the same moment.
    assert github_server.operations() == [
        "issues/list-comments",
        "issues/create-comment",
        "issues/list-comments",
    ]
    [body] = _bodies(state)
    assert body == MARK + "\nWorking on it."
    assert outcome.output["comment_id"] == next(iter(state.comments))
    assert outcome.output["url"].endswith(f"#issuecomment-{outcome.output['comment_id']}")


def test_a_second_write_edits_the_same_comment_in_two_calls(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    state.add_comment(1, "an unrelated comment", "octocat")
    first = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
    github_server.calls.clear()
    with scope_on(github_server.url) as fresh:  # another process: it knows no comment id
        second = upsert_comment(fresh, ISSUE, "Done.", skill="github-issue-solve")
    assert second.performed
    assert second.output["comment_id"] == first.output["comment_id"]
    assert github_server.operations() == ["issues/list-comments", "issues/update-comment"]
    assert _bodies(state) == ["an unrelated comment", MARK + "\nDone."]


def test_a_comment_this_process_wrote_is_edited_in_one_call(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    first = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
    github_server.calls.clear()
    second = upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
    assert second.performed
    assert second.output["comment_id"] == first.output["comment_id"]
    assert github_server.operations() == ["issues/update-comment"]
    assert _bodies(state) == [MARK + "\nDone."]


def test_a_comment_this_process_found_is_edited_in_one_call_next_time(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    mine = state.add_comment(1, MARK + "\nWorking on it.", HOLON)  # an earlier run's
    upsert_comment(scope, ISSUE, "Still working.", skill="github-issue-solve")
    github_server.calls.clear()
    upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
    assert github_server.operations() == ["issues/update-comment"]
    assert state.comments[mine.id].body == MARK + "\nDone."


def test_a_known_comment_deleted_meanwhile_is_looked_up_and_posted_again(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    first = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
    del state.comments[first.output["comment_id"]]  # someone deleted it
    github_server.calls.clear()
    second = upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
    assert github_server.operations() == [
        "issues/update-comment",  # 404
        "issues/list-comments",
        "issues/create-comment",
        "issues/list-comments",
    ]
    assert _bodies(state) == [MARK + "\nDone."]
    github_server.calls.clear()
    upsert_comment(scope, ISSUE, "Done, really.", skill="github-issue-solve")
    assert github_server.operations() == ["issues/update-comment"]  # the new one is known
    assert second.output["comment_id"] != first.output["comment_id"]


def test_the_same_body_again_writes_nothing(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
    github_server.calls.clear()
    again = upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
    assert not again.performed
    assert again.note == "the comment already says this"
    assert github_server.operations() == ["issues/list-comments"]
    assert len(state.comments) == 1


def test_keys_are_apart(scope: Scope, state: Repo) -> None:
    upsert_comment(scope, ISSUE, "solve", skill="github-issue-solve")
    upsert_comment(scope, ISSUE, "review", skill="github-review")
    upsert_comment(scope, ISSUE, "none")
    upsert_comment(scope, PULL, "on the PR", skill="github-issue-solve")
    other = Scope(scope.repo, scope.event_repo, scope.login, workflow="nightly")
    upsert_comment(other, ISSUE, "another workflow", skill="github-issue-solve")
    markers = {parse_marker(c.body) for c in state.comments.values()}
    assert len(state.comments) == len(markers) == 5


def test_a_marker_in_someone_elses_comment_is_ignored(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    forged = state.add_comment(1, MARK + "\nI am Holon, honest.", "mallory")
    outcome = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
    assert outcome.output["comment_id"] != forged.id
    assert state.comments[forged.id].body == MARK + "\nI am Holon, honest."
    assert github_server.count("issues/update-comment") == 0


def test_holons_comment_with_another_key_is_not_taken(scope: Scope, state: Repo) -> None:
    other = state.add_comment(1, format_marker("issue", "1", "holon", "github-review"), HOLON)
    upsert_comment(scope, ISSUE, "Working.", skill="github-issue-solve")
    assert state.comments[other.id].body.count("\n") == 0
    assert len(state.comments) == 2


def test_a_body_marker_is_replaced_by_the_effects_own(scope: Scope, state: Repo) -> None:
    body = format_marker("issue", "99", "elsewhere", None) + "\nThe result."
    upsert_comment(scope, ISSUE, body, skill="github-issue-solve")
    [written] = _bodies(state)
    assert written == MARK + "\nThe result."


def test_replies_carry_a_marker_per_kind(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    reply(scope, ISSUE, "usage", "Commands: /holon solve")
    reply(scope, ISSUE, "status", "Idle.")
    github_server.calls.clear()
    again = reply(scope, ISSUE, "status", "Running github-issue-solve.")
    assert again.performed
    assert github_server.operations() == ["issues/update-comment"]  # known: written above
    found = {parse_marker(c.body) for c in state.comments.values()}
    assert {m.skill for m in found if m} == {"reply.usage", "reply.status"}
    with pytest.raises(EffectRefused, match="short lowercase word"):
        reply(scope, ISSUE, "Status!", "x")


def test_unknown_login_refuses_instead_of_posting_again(
    github_server: LoopbackGitHub, state: Repo
) -> None:
    with (
        scope_on(github_server.url, login=None) as scope,
        pytest.raises(EffectRefused, match="set HOLON_GITHUB_LOGIN"),
    ):
        upsert_comment(scope, ISSUE, "x")
    assert state.comments == {}


@pytest.mark.parametrize("target", ["octocat/Other", None, "octocat/Hello-World-2"])
def test_a_target_in_another_repository_is_refused_before_any_call(
    scope: Scope, github_server: LoopbackGitHub, target: str | None
) -> None:
    with pytest.raises(CrossRepository, match="not in the event's octocat/Hello-World") as caught:
        upsert_comment(scope, Subject(target, "issue", 1), "x")  # type: ignore[arg-type]
    assert caught.value.reason.startswith("the target is in")
    assert github_server.calls == []


def test_case_of_the_repository_name_does_not_matter(scope: Scope, state: Repo) -> None:
    assert upsert_comment(scope, Subject("OctoCat/hello-world", "issue", 1), "x").performed


def test_a_handle_on_another_repository_is_refused(github_server: LoopbackGitHub) -> None:
    github_server.state.add_repo("octocat/Other").add_issue("x")
    with (
        scope_on(github_server.url, repo="octocat/Other") as scope,
        pytest.raises(CrossRepository, match="the handle is on octocat/Other"),
    ):
        upsert_comment(scope, ISSUE, "x")
    assert github_server.calls == []


def test_403_names_the_permission(scope: Scope, github_server: LoopbackGitHub) -> None:
    github_server.fail("issues/create-comment", 403)
    with pytest.raises(PermissionDenied) as caught:
        upsert_comment(scope, PULL, "x")
    message = str(caught.value)
    assert "\n" not in message
    assert "`permissions: issues: write` (`pull-requests: write` on a pull request)" in message
    assert caught.value.permission == "issues: write"


def test_404_on_a_missing_issue(scope: Scope, github_server: LoopbackGitHub) -> None:
    with pytest.raises(NotFound, match="issues/list-comments"):
        upsert_comment(scope, Subject(REPO, "issue", 404), "x")
    assert github_server.operations() == ["issues/list-comments"]


# A 5xx after GitHub accepted the POST: with `responses`, the POST answers 502 and the next
# listing shows the comment GitHub made anyway.


def _comment(fake: GitHubFake, id: int, body: str, login: str) -> dict[str, object]:
    from tests.support.github_fake import example, routes

    _, template = example(routes().find("issues/get-comment"), fake.base_url)
    return {**template, "id": id, "body": body, "user": {**template["user"], "login": login}}


@pytest.fixture
def remote(github_fake: GitHubFake) -> Iterator[Scope]:
    with scope_on(github_fake.base_url) as made:
        yield made


def test_a_502_after_github_posted_finds_it_and_never_posts_twice(
    github_fake: GitHubFake, remote: Scope
) -> None:
    posted = _comment(github_fake, 7, MARK + "\nWorking.", HOLON)
    github_fake.on("issues/list-comments", body=[])
    github_fake.on("issues/list-comments", body=[posted])
    github_fake.on("issues/create-comment", status=502)
    outcome = upsert_comment(remote, ISSUE, "Working.", skill="github-issue-solve")
    assert outcome.performed
    assert outcome.output["comment_id"] == 7
    assert outcome.note == "GitHub answered with an error but had posted it"
    assert github_fake.operations() == [
        "issues/list-comments",
        "issues/create-comment",
        "issues/list-comments",
    ]


def test_a_502_when_github_did_not_post_fails_without_posting_again(
    github_fake: GitHubFake, remote: Scope
) -> None:
    github_fake.on("issues/list-comments", body=[])
    github_fake.on("issues/create-comment", status=502)
    github_fake.on("issues/create-comment")
    with pytest.raises(ServerError, match="no comment with its marker was found"):
        upsert_comment(remote, ISSUE, "Working.", skill="github-issue-solve")
    assert github_fake.count("issues/create-comment") == 1
    # The next attempt lists first, then posts: still one comment at most.
    upsert_comment(remote, ISSUE, "Working.", skill="github-issue-solve")
    assert github_fake.count("issues/create-comment") == 2
    assert github_fake.operations()[-3:] == [
        "issues/list-comments",
        "issues/create-comment",
        "issues/list-comments",
    ]


def test_the_listing_stops_at_the_page_holding_the_comment(
    github_fake: GitHubFake, remote: Scope
) -> None:
    others = [_comment(github_fake, n, f"comment {n}", "octocat") for n in range(1, 101)]
    mine = _comment(github_fake, 200, MARK + "\nold", HOLON)
    page2 = f"{github_fake.base_url}/repos/{REPO}/issues/1/comments?per_page=100&page=2"
    github_fake.on("issues/list-comments", body=others, headers={"Link": f'<{page2}>; rel="next"'})
    github_fake.on("issues/list-comments", body=[mine])
    github_fake.on("issues/update-comment", body={**mine, "body": MARK + "\nnew"})
    outcome = upsert_comment(remote, ISSUE, "new", skill="github-issue-solve")
    assert outcome.output["comment_id"] == 200
    assert github_fake.operations() == [
        "issues/list-comments",
        "issues/list-comments",
        "issues/update-comment",
    ]
    assert github_fake.calls[0].query["per_page"] == ["100"]
    assert github_fake.calls[1].query["page"] == ["2"]
    assert github_fake.last("issues/update-comment").json == {"body": MARK + "\nnew"}


def test_a_comment_on_the_first_page_costs_no_second_page(
    github_fake: GitHubFake, remote: Scope
) -> None:
    mine = _comment(github_fake, 5, MARK + "\nold", HOLON)
    page2 = f"{github_fake.base_url}/repos/{REPO}/issues/1/comments?per_page=100&page=2"
    github_fake.on("issues/list-comments", body=[mine], headers={"Link": f'<{page2}>; rel="next"'})
    github_fake.on("issues/update-comment", body=mine)
    upsert_comment(remote, ISSUE, "new", skill="github-issue-solve")
    assert github_fake.operations() == ["issues/list-comments", "issues/update-comment"]


def test_a_listing_that_never_ends_fails_instead_of_posting_again(
    github_fake: GitHubFake, remote: Scope
) -> None:
    page = f"{github_fake.base_url}/repos/{REPO}/issues/1/comments?per_page=100&page=2"
    github_fake.on("issues/list-comments", body=[], headers={"Link": f'<{page}>; rel="next"'})
    with pytest.raises(GitHubError, match="more than 100 pages for issues/list-comments"):
        upsert_comment(remote, ISSUE, "x", skill="github-issue-solve")
    assert github_fake.operations() == ["issues/list-comments"] * 100


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        # A body that starts like JSON and is not: PyGithub's json.loads raises ValueError.
        ({"status": 201, "body": '{"id": 7, "body": '}, "could not be read"),
        # A redirect to another host: PyGithub raises RuntimeError.
        (
            {"status": 301, "body": None, "headers": {"Location": "https://evil.example/x"}},
            "could not be read",
        ),
    ],
)
def test_an_answer_pygithub_cannot_read_is_a_one_line_github_error(
    github_fake: GitHubFake, remote: Scope, reply: dict[str, Any], says: str
) -> None:
    github_fake.on("issues/list-comments", body=[])
    github_fake.on("issues/create-comment", **reply)
    with pytest.raises(ServerError) as caught:
        upsert_comment(remote, ISSUE, "Working.", skill="github-issue-solve")
    message = str(caught.value)
    assert "\n" not in message
    assert says in message
    assert "issues/create-comment" in message
    assert caught.value.operation == "issues/create-comment"
    # GitHub may have posted it: looked up, never sent again.
    assert github_fake.count("issues/create-comment") == 1


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.example/repos/x/y/issues/1/comments?page=2",
        # Hosts of the API's domain, and https for http, PyGithub follows even with asserts on.
        "https://evil.github.com/repos/x/y/issues/1/comments?page=2",
        "https://github.com/repos/x/y/issues/1/comments?page=2",
        "http://api.github.com/repos/x/y/issues/1/comments?page=2",
        "https://api.github.com:8443/repos/x/y/issues/1/comments?page=2",
        "https://api.github.com:x/repos/x/y/issues/1/comments?page=2",
    ],
)
def test_a_next_page_on_another_host_is_refused_before_any_request(
    github_fake: GitHubFake, remote: Scope, next_url: str
) -> None:
    # Holon's own refusal, not PyGithub's `assert` (skipped under `python -O`) mapped to an
    # unreadable answer: the token never leaves for that host.
    github_fake.on("issues/list-comments", body=[], headers={"Link": f'<{next_url}>; rel="next"'})
    with pytest.raises(GitHubError) as caught:
        upsert_comment(remote, ISSUE, "x", skill="github-issue-solve")
    assert type(caught.value) is GitHubError
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "GitHub's next page of issues/list-comments is not on https://api.github.com ("
    )
    assert caught.value.operation == "issues/list-comments"
    assert github_fake.operations() == ["issues/list-comments"]


def test_the_next_page_origin_is_scheme_host_and_port() -> None:
    # GitHub's default ports spelled or not, and a host in any case, are the API's origin.
    for same in ("https://API.github.com:443/x?page=2", "https://api.github.com/api/v3/x"):
        check_next_page(same, "https://api.github.com", "op")
    check_next_page("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/api/v3", "op")
    for other in ("http://127.0.0.1/x", "http://127.0.0.2:8080/x", "ftp://127.0.0.1:8080/x"):
        with pytest.raises(GitHubError, match=r"^GitHub's next page of op is not on "):
            check_next_page(other, "http://127.0.0.1:8080/api/v3", "op")
