"""Vendor errors become Holon's one-line GitHub errors, naming the permission to grant."""

from __future__ import annotations

import traceback

import pytest
import requests
from github.GithubException import GithubException, RateLimitExceededException

from holon.errors import OperationalError
from holon.github.errors import (
    Conflict,
    GitHubError,
    NotFound,
    PermissionDenied,
    RateLimited,
    Rejected,
    ServerError,
    Unauthorized,
    map_errors,
    translate,
)
from holon.github.permissions import _OVERRIDES, permission_for, permission_hint
from tests.support.github_fake import routes

TOKEN = "ghp_" + "a1" * 18


def _raised(exc: Exception, operation: str = "issues/create-comment") -> GitHubError:
    with pytest.raises(GitHubError) as caught, map_errors(operation):
        raise exc
    return caught.value


@pytest.mark.parametrize(
    ("status", "message", "kind", "words"),
    [
        (401, "Bad credentials", Unauthorized, "GITHUB_TOKEN is missing, expired or wrong"),
        (
            403,
            "Resource not accessible by integration",
            PermissionDenied,
            "permissions: issues: write",
        ),
        (404, "Not Found", NotFound, "the token cannot see it"),
        (409, "Conflict", Conflict, "changed meanwhile"),
        (422, "Validation Failed", Rejected, "the request was invalid"),
        (429, "Too many", RateLimited, "rate limited"),
        (500, "Internal", ServerError, "GitHub may or may not have done it"),
        (502, "Bad gateway", ServerError, "GitHub may or may not have done it"),
        (410, "Gone", GitHubError, "GitHub refused issues/create-comment (410 Gone)"),
    ],
)
def test_each_status_has_its_error(status: int, message: str, kind: type, words: str) -> None:
    error = _raised(GithubException(status, {"message": message}, {}))
    assert type(error) is kind
    assert isinstance(error, OperationalError)  # exit 74
    assert words in str(error)
    assert message in str(error)
    assert error.operation == "issues/create-comment"
    assert "\n" not in str(error)


def test_the_permission_each_effect_needs_is_named() -> None:
    assert permission_for("issues/create-comment") == "issues: write"
    assert permission_for("issues/list-comments") == "issues: read"
    assert permission_for("pulls/create") == "pull-requests: write"
    assert permission_for("pulls/merge") == "contents: write"
    assert permission_for("checks/create") == "checks: write"
    assert permission_for("git/create-ref") == "contents: write"
    assert permission_for("actions/create-workflow-dispatch") == "actions: write"
    assert permission_for("repos/create-dispatch-event") == "contents: write"
    assert permission_for("repos/create-commit-status") == "statuses: write"
    assert permission_for("meta/root") is None
    assert "pull-requests: write` on a pull request" in permission_hint("issues/add-labels")
    assert permission_hint("meta/root") == "check the token's permissions"
    error = _raised(GithubException(403, {"message": "nope"}, {}), "pulls/merge")
    assert isinstance(error, PermissionDenied)
    assert error.permission == "contents: write"
    assert "`permissions: contents: write`" in str(error)


def test_a_404_on_a_write_names_the_permission_a_read_does_not() -> None:
    error = _raised(GithubException(404, {"message": "Not Found"}, {}), "git/create-ref")
    assert isinstance(error, NotFound)
    assert error.permission == "contents: write"
    assert (
        "or the token cannot see it or write it: the workflow needs `permissions: contents: write`"
        in str(error)
    )
    read = _raised(GithubException(404, {"message": "Not Found"}, {}), "issues/get")
    assert isinstance(read, NotFound)
    assert read.permission is None
    assert "permissions" not in str(read)


def test_every_operation_the_permission_table_names_is_githubs() -> None:
    for operation in _OVERRIDES:
        assert operation in routes().by_operation, operation


def test_githubs_message_is_one_short_escaped_line_without_secrets() -> None:
    hostile = "line one\nline two \x1b[31mred\x1b[0m " + TOKEN + " " + "x" * 500
    error = translate(
        GithubException(422, {"message": hostile, "errors": [{"code": "invalid"}]}, {}),
        "pulls/create",
    )
    text = str(error)
    assert "\n" not in text
    assert "\x1b" not in text
    assert "\\x1b[31mred" in text
    assert TOKEN not in text
    assert "x" * 200 not in text
    assert len(text) < 300
    # A body that is not GitHub's error shape is not quoted at all.
    assert str(translate(GithubException(500, "<html>" + TOKEN, {}), "issues/get")) == (
        "GitHub failed issues/get (500): GitHub may or may not have done it"
    )
    error = translate(
        GithubException(
            422, {"message": "Validation Failed", "errors": [{"message": "already exists"}]}, {}
        ),
        "git/create-ref",
    )
    assert "Validation Failed: already exists" in str(error)


def test_the_vendor_exception_and_its_body_stay_out_of_the_traceback() -> None:
    error = _raised(GithubException(403, {"message": "no", "secret_body": TOKEN}, {}))
    printed = "".join(traceback.format_exception(error))
    assert "secret_body" not in printed
    assert TOKEN not in printed


def test_pygithubs_rate_limit_exception_is_rate_limited() -> None:
    error = _raised(RateLimitExceededException(403, {"message": "API rate limit exceeded"}, {}))
    assert isinstance(error, RateLimited)


def test_transport_failures_leave_the_effect_unknown() -> None:
    error = _raised(requests.ConnectionError("refused"), "pulls/merge")
    assert isinstance(error, ServerError)
    assert (
        str(error)
        == "GitHub could not be reached during pulls/merge: GitHub may or may not have done it"
    )
    assert "timed out" in str(_raised(requests.ReadTimeout("slow")))


def test_other_exceptions_and_holons_own_pass_through() -> None:
    with pytest.raises(KeyError), map_errors("issues/get"):
        raise KeyError("a bug of ours stays a bug")
    own = RateLimited("wait too long", wait=3600)
    with pytest.raises(RateLimited) as caught, map_errors("issues/get"):
        raise own
    assert caught.value is own
