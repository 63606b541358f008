"""The GitHub fakes answer only what GitHub's REST description has, and record every call."""

from __future__ import annotations

import json
import threading

import pytest
import requests

from tests.support.github_fake import (
    GitHubFake,
    LoopbackGitHub,
    UnknownRoute,
    example,
    route_of,
    routes,
)
from tests.support.github_fake.request import HANDLERS
from tests.support.github_fake.routes import FIXTURES

TOKEN = "ghs_" + "f" * 36


def test_the_fixtures_name_their_source_and_licence() -> None:
    readme = (FIXTURES / "README.md").read_text()
    assert "@octokit/openapi` 23.0.2" in readme
    assert "Licence: MIT. Copyright (c) 2020 Octokit contributors." in readme
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in readme


def test_the_route_table_is_githubs() -> None:
    table = routes()
    assert len(table.routes) > 1000
    assert table.find("issues/create-comment").key == (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
    )
    assert route_of("GET", "/repos/o/r/git/ref/heads/feature/x") == "git/get-ref"
    assert route_of("GET", "/repos/o/r/commits/main/check-runs") == "checks/list-for-ref"
    assert route_of("GET", "/repos/o/r/commits/feature/x") == "repos/get-commit"
    assert route_of("GET", "/repos/o/r/contents/docs/a%20b.md") == "repos/get-content"
    # PyGithub's get_git_refs() still lists through a route GitHub no longer describes.
    assert route_of("GET", "/repos/o/r/git/refs") is None
    assert route_of("POST", "/repos/o/r/issues/1/comment") is None
    # A parameter that is one path segment must be encoded to hold a slash.
    assert route_of("DELETE", "/repos/o/r/issues/1/labels/area/docs") is None
    assert route_of("DELETE", "/repos/o/r/issues/1/labels/area%2Fdocs") == "issues/remove-label"


def test_every_route_the_loopback_fake_implements_is_githubs() -> None:
    assert len(HANDLERS) >= 40
    for operation in HANDLERS:
        assert operation in routes().by_operation, operation


def test_examples_are_githubs_documented_bodies() -> None:
    status, body = example(routes().find("issues/create-comment"), "http://127.0.0.1:1/api/v3")
    assert status == 201
    assert body["body"] == "Me too"
    assert body["url"].startswith("http://127.0.0.1:1/api/v3/repos/")


def test_the_responses_fake_refuses_a_route_github_does_not_have() -> None:
    with GitHubFake() as fake:
        with pytest.raises(UnknownRoute):
            fake.on("POST /repos/{owner}/{repo}/issues/{issue_number}/comment")
        with pytest.raises(UnknownRoute):
            fake.on("issues/create-a-comment")
        with pytest.raises(requests.ConnectionError):
            requests.post("https://api.github.com/repos/o/r/issues/1/comment", timeout=5)
        with pytest.raises(requests.ConnectionError):  # GitHub's, but not registered
            requests.get("https://api.github.com/repos/o/r/issues/1", timeout=5)
        with pytest.raises(requests.ConnectionError):  # not GitHub at all
            requests.get("https://example.com/", timeout=5)
    assert len(fake.violations) == 3
    with pytest.raises(AssertionError, match="does not have"):
        fake.assert_clean()


def test_the_responses_fake_answers_in_order_and_counts() -> None:
    with GitHubFake() as fake:
        fake.on("issues/get", status=502)
        fake.on("issues/get")
        first = requests.get("https://api.github.com/repos/o/r/issues/1347", timeout=5)
        second = requests.get("https://api.github.com/repos/o/r/issues/1347?x=1", timeout=5)
        third = requests.get("https://api.github.com/repos/o/r/issues/1347", timeout=5)
    assert [first.status_code, second.status_code, third.status_code] == [502, 200, 200]
    assert first.json()["message"] == "HTTP 502"
    assert second.json()["number"] == 1347  # GitHub's example
    assert fake.count("issues/get") == 3
    assert fake.calls[1].query == {"x": ["1"]}
    fake.assert_clean()


def test_the_loopback_fake_refuses_a_route_github_does_not_have() -> None:
    with LoopbackGitHub() as server:
        refused = requests.post(
            f"{server.url}/repos/octocat/Hello-World/issues/1/comment", timeout=5
        )
        not_faked = requests.get(f"{server.url}/repos/octocat/Hello-World/topics", timeout=5)
        with pytest.raises(UnknownRoute):
            server.fail("issues/create-a-comment", 500)
    assert (refused.status_code, not_faked.status_code) == (501, 501)
    assert len(server.violations) == 2
    assert server.operations() == [None, "repos/get-all-topics"]
    with pytest.raises(AssertionError, match="does not have"):
        server.assert_clean()


def test_the_loopback_fake_keeps_state_and_answers_404_like_github() -> None:
    with LoopbackGitHub(prefix="/api/v3", token=TOKEN) as server:
        base = f"{server.url}/repos/octocat/Hello-World"
        auth = {"Authorization": f"token {TOKEN}"}
        server.state.repos["octocat/Hello-World"].add_issue("Crash")
        posted = requests.post(
            f"{base}/issues/1/comments", json={"body": "hi"}, headers=auth, timeout=5
        )
        listed = requests.get(f"{base}/issues/1/comments", headers=auth, timeout=5)
        missing = requests.get(f"{base}/issues/9", headers=auth, timeout=5)
        anonymous = requests.get(f"{base}/issues/1", timeout=5)
    assert posted.status_code == 201
    assert posted.json()["user"]["login"] == "github-actions[bot]"
    assert posted.json()["url"].startswith(
        f"{server.url}/repos/octocat/Hello-World/issues/comments/"
    )
    assert [c["body"] for c in listed.json()] == ["hi"]
    assert missing.status_code == 404
    assert json.loads(missing.content)["message"] == "Not Found"
    assert anonymous.status_code == 401
    assert server.operations() == [
        "issues/create-comment",
        "issues/list-comments",
        "issues/get",
        "issues/get",
    ]
    server.assert_clean()


def test_the_loopback_fake_builds_on_resolved_documented_bodies() -> None:
    for operation in HANDLERS:
        _, body = example(routes().find(operation))
        assert not (isinstance(body, dict) and "$ref" in body), operation


def test_the_loopback_fake_moves_a_pull_requests_head_when_its_branch_is_pushed() -> None:
    with LoopbackGitHub(prefix="/api/v3", token=TOKEN) as server:
        repo = server.state.repos["octocat/Hello-World"]
        start = repo.put_file("a.txt", b"a\n", "main")
        repo.refs["heads/feature"] = start
        own, fork, closed = (repo.add_pull(t, head="feature") for t in ("own", "fork", "closed"))
        assert own.pull is not None
        assert fork.pull is not None
        assert closed.pull is not None
        fork.pull.fork, closed.state = "someone/Hello-World", "closed"
        tree = repo.get(start, "commit")["tree"]
        later = repo.commit("later", tree, [start])
        moved = requests.patch(
            f"{server.url}/repos/octocat/Hello-World/git/refs/heads/feature",
            json={"sha": later, "force": False},
            headers={"Authorization": f"token {TOKEN}"},
            timeout=5,
        )
        got = requests.get(
            f"{server.url}/repos/octocat/Hello-World/pulls/{own.number}",
            headers={"Authorization": f"token {TOKEN}"},
            timeout=5,
        )
    assert moved.status_code == 200
    assert got.json()["head"]["sha"] == later
    assert (fork.pull.head_sha, closed.pull.head_sha) == (start, start)
    server.assert_clean()


def test_the_loopback_fake_keeps_one_open_pull_request_per_head_and_base() -> None:
    # As GitHub: a second create for a head and base with an open pull request is a 422 with
    # GitHub's validation-error body; a closed one, a fork's or another base does not count.
    with LoopbackGitHub(token=TOKEN) as server:
        repo = server.state.repos["octocat/Hello-World"]
        repo.refs["heads/holon/issue-1"] = repo.refs["heads/dev"] = repo.refs["heads/main"]
        first = repo.add_pull("Fix", head="holon/issue-1")
        fork = repo.add_pull("Fork's", head="holon/issue-1", base="dev")
        assert fork.pull is not None
        fork.pull.fork = "someone/Hello-World"

        def create(base: str) -> requests.Response:
            return requests.post(
                f"{server.url}/repos/octocat/Hello-World/pulls",
                json={"title": "Fix again", "head": "holon/issue-1", "base": base},
                headers={"Authorization": f"token {TOKEN}"},
                timeout=5,
            )

        refused = create("main")
        other_base = create("dev")
        first.state = "closed"
        reopened = create("main")
        gone = requests.post(
            f"{server.url}/repos/octocat/Hello-World/pulls",
            json={"title": "Fix", "head": "no-such-branch", "base": "main"},
            headers={"Authorization": f"token {TOKEN}"},
            timeout=5,
        )
    assert refused.status_code == 422
    assert refused.json()["message"] == "Validation Failed"
    assert refused.json()["errors"] == [
        {
            "resource": "PullRequest",
            "code": "custom",
            "message": "A pull request already exists for octocat:holon/issue-1.",
        }
    ]
    assert (other_base.status_code, reopened.status_code) == (201, 201)
    assert gone.status_code == 422
    assert gone.json()["errors"] == [
        {"resource": "PullRequest", "field": "head", "code": "invalid"}
    ]
    server.assert_clean()


def test_the_loopback_fake_holds_answers_until_every_party_is_done() -> None:
    # Two racing processes forced to interleave: both look up, then either acts.
    with LoopbackGitHub(token=TOKEN) as server:
        held = server.hold("pulls/list", 2, {"head": "octocat:feature"})
        url = f"{server.url}/repos/octocat/Hello-World/pulls"
        auth = {"Authorization": f"token {TOKEN}"}
        answers: list[int] = []

        def look() -> None:
            answers.append(
                requests.get(
                    url, params={"head": "octocat:feature"}, headers=auth, timeout=10
                ).status_code
            )

        first = threading.Thread(target=look)
        first.start()
        first.join(0.3)
        assert first.is_alive()  # done, its answer held
        assert answers == []
        other = requests.get(url, params={"head": "octocat:other"}, headers=auth, timeout=5)
        assert other.status_code == 200  # another query is not held
        look()
        first.join(5)
        later = requests.get(url, params={"head": "octocat:feature"}, headers=auth, timeout=5)
    assert answers == [200, 200]
    assert later.status_code == 200
    assert held.met
    assert server.count("pulls/list") == 4
