"""The loopback GitHub's fault schedule: which request fails, how, and that a lost answer
really did the write."""

from __future__ import annotations

import http.client
import json

import pytest

from tests.support.github_fake.faults import SECONDARY_MESSAGE, Fault, FaultSchedule
from tests.support.github_fake.loopback import LoopbackGitHub


def test_a_fault_by_index_fails_that_request_only() -> None:
    schedule = FaultSchedule()
    schedule.add(Fault("5xx", index=2))
    hits = [schedule.match(i, "GET", "issues/get") for i in range(5)]
    assert [h is not None for h in hits] == [False, False, True, False, False]


def test_a_fault_by_pattern_counts_only_matching_requests() -> None:
    schedule = FaultSchedule()
    schedule.add(Fault("403", operation="issues/*", method="POST", nth=1, times=2))
    calls = [
        ("POST", "issues/create-comment"),  # matching 0
        ("GET", "issues/get"),
        ("POST", "pulls/create"),
        ("POST", "issues/create-comment"),  # matching 1: fails
        ("POST", "issues/create-label"),  # matching 2: fails
        ("POST", "issues/create-comment"),  # times spent
    ]
    hits = [schedule.match(i, m, op) is not None for i, (m, op) in enumerate(calls)]
    assert hits == [False, False, False, True, True, False]
    assert [index for index, _, _ in schedule.fired] == [3, 4]


def test_a_fault_needs_a_target() -> None:
    with pytest.raises(ValueError, match="index or an operation"):
        FaultSchedule().add(Fault("404"))


def _post(server: LoopbackGitHub, body: dict[str, str]) -> tuple[int, str | None, bytes]:
    """Status, Retry-After and body of one comment POST on a connection of its own."""
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        connection.request(
            "POST", "/repos/octocat/Hello-World/issues/1/comments", json.dumps(body).encode()
        )
        answer = connection.getresponse()
        return answer.status, answer.getheader("Retry-After"), answer.read()
    finally:
        connection.close()


def test_the_modes_as_github_answers_them() -> None:
    with LoopbackGitHub() as server:
        server.state.repos["octocat/Hello-World"].add_issue("t", "b", user="octocat")
        server.faults.add(Fault("secondary_rate_limit", operation="issues/create-comment"))
        status, retry_after, data = _post(server, {"body": "x"})
        assert (status, retry_after) == (403, "1")
        assert json.loads(data)["message"] == SECONDARY_MESSAGE
        server.faults.add(Fault("5xx", operation="issues/create-comment", status=503))
        assert _post(server, {"body": "x"})[0] == 503
        comments = server.state.repos["octocat/Hello-World"].comments
        assert not comments  # refused: nothing done
        # Accepted, then the answer is lost: the comment exists, the client gets no answer.
        server.faults.add(Fault("accepted_then_timeout", operation="issues/create-comment"))
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            _post(server, {"body": "kept"})
        assert [c.body for c in comments.values()] == ["kept"]
    server.assert_clean()
