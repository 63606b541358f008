"""The client over real HTTP, against the loopback GitHub: the same retry policy through
urllib3's own connection pool, the token kept to the Authorization header, write spacing,
the API URL a subprocess is given."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import github
import pytest

from holon.github.client import GitHubConfig, make_client
from holon.github.errors import (
    PermissionDenied,
    RateLimited,
    ServerError,
    Unauthorized,
    map_errors,
)
from holon.github.retry import Wait
from tests.support.github_fake import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36  # the github_server fixture's
REPO = "octocat/Hello-World"


class Client:
    def __init__(self, server: LoopbackGitHub) -> None:
        self.server = server
        self.waits: list[Wait] = []
        self.slept: list[float] = []
        self.made: list[github.Github] = []

    def __call__(self, **config: Any) -> github.Github:
        settings = {"api_url": self.server.url, "token": TOKEN, "write_spacing": 0.0, **config}
        gh = make_client(
            GitHubConfig.model_validate(settings),
            on_wait=self.waits.append,
            sleep=self.slept.append,
        )
        self.made.append(gh)
        return gh


@pytest.fixture
def client(github_server: LoopbackGitHub) -> Iterator[Client]:
    github_server.state.repos[REPO].add_issue("Crash on start", "It crashes.")
    made = Client(github_server)
    yield made
    for gh in made.made:
        gh.close()


def test_a_read_answered_502_is_retried_over_http(
    github_server: LoopbackGitHub, client: Client
) -> None:
    github_server.fail("issues/get", 502)
    assert client().get_repo(REPO).get_issue(1).title == "Crash on start"
    assert github_server.operations() == ["issues/get", "issues/get"]
    assert client.waits == [
        Wait(1.0, "server error 502", "GET", "/repos/octocat/Hello-World/issues/1")
    ]


def test_a_post_answered_502_is_sent_once_over_http(
    github_server: LoopbackGitHub, client: Client
) -> None:
    github_server.fail("issues/create-comment", 502)
    with pytest.raises(ServerError), map_errors("issues/create-comment"):
        client().get_repo(REPO).get_issue(1).create_comment("hi")
    assert github_server.operations() == ["issues/create-comment"]
    assert github_server.state.repos[REPO].comments == {}


def test_a_secondary_rate_limit_is_waited_once_not_twice(
    github_server: LoopbackGitHub, client: Client
) -> None:
    """urllib3 would sleep Retry-After itself after `increment`; Holon's retry has already
    waited (through the injected sleep here), so nothing sleeps for real."""
    github_server.fail("issues/create-comment", 403, headers={"Retry-After": "3"})
    started = time.monotonic()
    comment = client().get_repo(REPO).get_issue(1).create_comment("hi")
    assert time.monotonic() - started < 2.5
    assert client.slept == [3.0]
    assert github_server.count("issues/create-comment") == 2
    assert github_server.state.repos[REPO].comments[comment.id].body == "hi"


def test_a_long_primary_rate_limit_raises_after_one_call(
    github_server: LoopbackGitHub, client: Client
) -> None:
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3600)}
    body = {
        "message": "API rate limit exceeded",
        "documentation_url": "https://docs.github.com/rest",
    }
    github_server.fail("issues/create-comment", 403, body=body, headers=reset, times=2)
    with pytest.raises(RateLimited), map_errors("issues/create-comment"):
        client().get_repo(REPO).get_issue(1).create_comment("hi")
    # The connection was drained, not lost: the next call on it works.
    assert client.made[0].get_repo(REPO).get_issue(1).title == "Crash on start"
    assert github_server.operations() == ["issues/create-comment", "issues/get"]


def test_an_unreachable_github_is_retried_then_reported(client: Client) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gh = client(api_url=f"http://127.0.0.1:{port}", retries=2)
    expected = pytest.raises(ServerError, match="could not be reached during issues/create-comment")
    with expected, map_errors("issues/create-comment"):
        gh.get_repo(REPO).get_issue(1).create_comment("hi")
    # The connection never opened, so even a POST is tried again.
    assert [w.reason for w in client.waits] == ["connection error", "connection error"]


def test_a_wrong_token_is_unauthorized_and_never_shown(
    github_server: LoopbackGitHub, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub sets its own logger to INFO
    wrong = "ghs_" + "0" * 36
    with pytest.raises(Unauthorized) as caught, map_errors("issues/get"):
        client(token=wrong).get_repo(REPO).get_issue(1).title  # noqa: B018
    client().get_repo(REPO).get_issue(1).create_comment("hi")
    assert github_server.calls[0].headers["authorization"] == f"token {wrong}"
    assert "GITHUB_TOKEN is missing, expired or wrong" in str(caught.value)
    assert "(oauth token removed)" in caplog.text  # PyGithub logged the requests, masked
    for secret in (wrong, TOKEN):
        assert secret not in caplog.text
        assert secret not in str(caught.value)
        assert secret not in repr(caught.value)


def test_writes_are_spaced_and_reads_are_not(github_server: LoopbackGitHub, client: Client) -> None:
    issue = client(write_spacing=0.4).get_repo(REPO).get_issue(1)
    started = time.monotonic()
    issue.create_comment("one")
    issue.create_comment("two")
    writes = time.monotonic() - started
    started = time.monotonic()
    for _ in range(3):
        list(issue.get_comments())
    reads = time.monotonic() - started
    assert writes >= 0.4
    assert reads < 0.4


def test_a_subprocess_reaches_the_fake_through_github_api_url(
    github_server: LoopbackGitHub,
) -> None:
    github_server.state.repos[REPO].add_issue("Crash")
    script = (
        "import os\n"
        "from holon.github.client import GitHubConfig, make_client\n"
        "gh = make_client(GitHubConfig.from_env(os.environ))\n"
        "print(gh.get_repo('octocat/Hello-World').get_issue(1).create_comment('from a child').id)\n"
    )
    env = {**os.environ, "GITHUB_API_URL": github_server.url, "GITHUB_TOKEN": TOKEN}
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    comment = github_server.state.repos[REPO].comments[int(proc.stdout)]
    assert (comment.body, comment.user) == ("from a child", "github-actions[bot]")
    assert github_server.operations() == ["issues/create-comment"]


def test_a_refusal_over_http_names_the_permission(
    github_server: LoopbackGitHub, client: Client
) -> None:
    body = {"message": "Resource not accessible by integration", "documentation_url": "x"}
    github_server.fail("issues/create-comment", 403, body=body)
    expected = pytest.raises(PermissionDenied, match="`permissions: issues: write`")
    with expected, map_errors("issues/create-comment"):
        client().get_repo(REPO).get_issue(1).create_comment("hi")
    # The body was read to tell a refusal from a rate limit; the connection is usable again.
    assert client.made[0].get_repo(REPO).get_issue(1).title == "Crash on start"
    assert github_server.operations() == ["issues/create-comment", "issues/get"]
    assert client.waits == []
