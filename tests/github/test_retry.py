"""Holon's retry policy over `responses`: writes are never sent twice on a 5xx, reads are,
rate limits are waited out (every wait reported) up to a bound, and no call is made that the
effect does not need."""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from typing import Any

import github
import pytest
from urllib3.exceptions import NewConnectionError, ReadTimeoutError

from holon.github.client import GitHubConfig, make_client
from holon.github.errors import PermissionDenied, RateLimited, ServerError, map_errors
from holon.github.retry import HolonRetry, Wait
from tests.support.github_fake import GitHubFake

NOW = 1_800_000_000.0
SECONDARY = {
    "message": "You have exceeded a secondary rate limit. "
    "Please wait a few minutes before you try again."
}
PRIMARY = {"message": "API rate limit exceeded for installation ID 1."}


class Recorder:
    def __init__(self) -> None:
        self.waits: list[Wait] = []
        self.slept: list[float] = []

    def client(self, **config: Any) -> github.Github:
        settings = {"token": "ghs_" + "d4" * 18, "write_spacing": 0.0, **config}
        return make_client(
            GitHubConfig.model_validate(settings),
            on_wait=self.waits.append,
            sleep=self.slept.append,
            clock=lambda: NOW,
        )


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _repo(gh: github.Github) -> Any:
    return gh.get_repo("octocat/Hello-World")


# The effects the policy is about, each as (operation, call): POST, PUT, PATCH, DELETE.
WRITES: list[tuple[str, Callable[[Any], object]]] = [
    ("issues/create-comment", lambda repo: repo.get_issue(1347).create_comment("hi")),
    ("pulls/merge", lambda repo: repo.get_pull(1347).merge()),
    ("issues/update", lambda repo: repo.get_issue(1347).edit(title="t")),
    ("issues/remove-label", lambda repo: repo.get_issue(1347).remove_from_labels("bug")),
]


@pytest.mark.parametrize(("operation", "call"), WRITES, ids=[w[0] for w in WRITES])
@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_write_answered_5xx_is_sent_once(
    github_fake: GitHubFake,
    recorder: Recorder,
    operation: str,
    call: Callable[[Any], object],
    status: int,
) -> None:
    github_fake.on(operation, status=status)
    with (
        pytest.raises(ServerError, match="GitHub may or may not have done it"),
        map_errors(operation),
    ):
        call(_repo(recorder.client()))
    assert github_fake.operations() == [operation]
    assert recorder.waits == []


def test_a_read_answered_502_is_retried_once_and_the_wait_reported(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/get", status=502)
    github_fake.on("issues/get")
    with map_errors("issues/get"):
        title = _repo(recorder.client()).get_issue(1347).title
    assert title == "Found a bug"
    assert github_fake.operations() == ["issues/get", "issues/get"]
    assert recorder.waits == [
        Wait(1.0, "server error 502", "GET", "/repos/octocat/Hello-World/issues/1347")
    ]
    assert recorder.slept == [1.0]


def test_a_read_failing_every_time_gives_up_after_the_retries(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/get", status=503)
    with pytest.raises(ServerError, match=r"issues/get \(503"), map_errors("issues/get"):
        _repo(recorder.client(retries=2)).get_issue(1347).title  # noqa: B018
    assert github_fake.count("issues/get") == 3
    assert recorder.slept == [1.0, 2.0]  # backoff doubles


def test_the_configured_backoff_is_the_first_wait(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    # HOLON_GITHUB_BACKOFF: 0 in tests that fail reads on purpose, so they take no time.
    github_fake.on("issues/get", status=503)
    with pytest.raises(ServerError), map_errors("issues/get"):
        _repo(recorder.client(retries=2, backoff=0.25)).get_issue(1347).title  # noqa: B018
    assert recorder.slept == [0.25, 0.5]


def test_a_503_with_retry_after_waits_that_long(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/get", status=503, headers={"Retry-After": "7"})
    github_fake.on("issues/get")
    _repo(recorder.client()).get_issue(1347).title  # noqa: B018
    assert recorder.slept == [7.0]


@pytest.mark.parametrize(("operation", "call"), WRITES, ids=[w[0] for w in WRITES])
def test_a_secondary_rate_limit_with_retry_after_is_waited_out_whatever_the_method(
    github_fake: GitHubFake, recorder: Recorder, operation: str, call: Callable[[Any], object]
) -> None:
    github_fake.on(operation, status=403, body=SECONDARY, headers={"Retry-After": "1"})
    github_fake.on(operation)
    call(_repo(recorder.client()))
    assert github_fake.operations() == [operation, operation]
    method = github_fake.calls[0].method
    assert recorder.waits == [
        Wait(1.0, "secondary rate limit", method, "/" + github_fake.calls[0].path.lstrip("/"))
    ]
    assert recorder.slept == [1.0]


def test_a_429_with_retry_after_is_waited_out(github_fake: GitHubFake, recorder: Recorder) -> None:
    github_fake.on("issues/create-comment", status=429, headers={"Retry-After": "2"})
    github_fake.on("issues/create-comment")
    _repo(recorder.client()).get_issue(1347).create_comment("hi")
    assert recorder.slept == [2.0]
    assert github_fake.count() == 2


def test_a_secondary_rate_limit_said_only_in_the_message_waits_a_minute(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/create-comment", status=403, body=SECONDARY)
    github_fake.on("issues/create-comment")
    _repo(recorder.client()).get_issue(1347).create_comment("hi")
    assert [w.seconds for w in recorder.waits] == [60.0]


def test_a_primary_rate_limit_waits_until_the_reset(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}
    github_fake.on("issues/list-comments", status=403, body=PRIMARY, headers=reset)
    github_fake.on("issues/list-comments")
    comments = list(_repo(recorder.client()).get_issue(1347).get_comments())
    assert len(comments) == 1
    assert recorder.waits == [
        Wait(31.0, "primary rate limit", "GET", "/repos/octocat/Hello-World/issues/1347/comments")
    ]


@pytest.mark.parametrize(
    "headers",
    [
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)},
        {"Retry-After": "120"},
    ],
)
def test_a_wait_beyond_the_bound_raises_rate_limited_at_once(
    github_fake: GitHubFake, recorder: Recorder, headers: dict[str, str]
) -> None:
    github_fake.on("issues/create-comment", status=403, body=PRIMARY, headers=headers)
    expected = pytest.raises(RateLimited, match="longer than the 90s Holon waits")
    with expected as caught, map_errors("issues/create-comment"):
        _repo(recorder.client()).get_issue(1347).create_comment("hi")
    assert github_fake.count() == 1
    assert recorder.waits == []
    assert recorder.slept == []
    assert caught.value.wait is not None
    assert caught.value.wait > 90


def test_a_message_only_rate_limit_beyond_the_bound_raises(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/create-comment", status=403, body=SECONDARY)
    with pytest.raises(RateLimited), map_errors("issues/create-comment"):
        _repo(recorder.client(max_wait=10)).get_issue(1347).create_comment("hi")
    assert github_fake.count() == 1


@pytest.mark.parametrize("body", [SECONDARY, None])
def test_rate_limited_every_time_ends_rate_limited(
    github_fake: GitHubFake, recorder: Recorder, body: Any
) -> None:
    github_fake.on(
        "issues/create-comment",
        status=403,
        body=body or SECONDARY,
        headers={} if body else {"Retry-After": "1"},
    )
    with pytest.raises(RateLimited), map_errors("issues/create-comment"):
        _repo(recorder.client(retries=2)).get_issue(1347).create_comment("hi")
    assert github_fake.count() == 3
    assert len(recorder.waits) == 2


def test_a_refusal_is_not_retried_and_names_the_permission(
    github_fake: GitHubFake, recorder: Recorder
) -> None:
    github_fake.on("issues/create-comment", status=403)
    with (
        pytest.raises(PermissionDenied, match="permissions: issues: write"),
        map_errors("issues/create-comment"),
    ):
        _repo(recorder.client()).get_issue(1347).create_comment("hi")
    assert github_fake.count() == 1
    assert recorder.waits == []


def test_lazy_objects_cost_no_call(github_fake: GitHubFake, recorder: Recorder) -> None:
    github_fake.on("issues/create-comment")
    github_fake.on("pulls/merge")
    repo = _repo(recorder.client())
    repo.get_issue(1347).create_comment("hi")
    assert repo.get_pull(1347).merge().merged
    assert github_fake.operations() == ["issues/create-comment", "pulls/merge"]
    assert github_fake.calls[0].json == {"body": "hi"}
    assert github_fake.calls[0].headers["Authorization"] == "token ghs_" + "d4" * 18


def test_github_enterprise_server_prefix(recorder: Recorder) -> None:
    with GitHubFake("https://ghe.example.com/api/v3") as fake:
        fake.on("issues/create-comment")
        fake.on("issues/update-comment")
        comment = (
            _repo(recorder.client(api_url="https://ghe.example.com/api/v3"))
            .get_issue(1347)
            .create_comment("hi")
        )
        assert comment.url.startswith("https://ghe.example.com/api/v3/repos/")
        comment.edit("edited")  # follows the URL GitHub returned, under the prefix
    assert fake.operations() == ["issues/create-comment", "issues/update-comment"]
    fake.assert_clean()


def test_a_write_whose_answer_was_lost_is_not_sent_again(recorder: Recorder) -> None:
    retry = HolonRetry(on_wait=recorder.waits.append, sleep=recorder.slept.append)
    lost = ReadTimeoutError(None, "/repos/o/r/pulls/1/merge", "read timed out")  # type: ignore[arg-type]
    with pytest.raises(ReadTimeoutError):
        retry.increment("PUT", "/repos/o/r/pulls/1/merge", error=lost)
    assert recorder.waits == []
    again = retry.increment("GET", "/repos/o/r/pulls/1?x=1", error=lost)
    assert again.total == 2
    assert recorder.waits == [Wait(1.0, "no answer", "GET", "/repos/o/r/pulls/1")]
    refused = NewConnectionError(None, "refused")  # type: ignore[arg-type]
    retry.increment("POST", "/repos/o/r/issues/1/comments", error=refused)
    assert recorder.waits[-1] == Wait(
        1.0, "connection error", "POST", "/repos/o/r/issues/1/comments"
    )


def test_retry_after_as_a_date(github_fake: GitHubFake, recorder: Recorder) -> None:
    when = email.utils.formatdate(NOW + 5, usegmt=True)
    github_fake.on(
        "issues/create-comment", status=403, body=SECONDARY, headers={"Retry-After": when}
    )
    github_fake.on("issues/create-comment")
    _repo(recorder.client()).get_issue(1347).create_comment("hi")
    assert recorder.slept == [5.0]
