"""Holon's exceptions for the GitHub edge, and the one translation of vendor errors into them.

Every call through PyGithub runs inside `map_errors(operation)`, named by GitHub's operation id
(`issues/create-comment`), so a failure says what was refused and, for a permission, what the
workflow must grant. Messages are one line: GitHub's own message is cut short and escaped, a
response body is never shown whole, and nothing that looks like a token gets through. The vendor
exception is not chained (`from None`): its text holds the whole response body, and a chained
traceback would carry it into the error log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import requests
import urllib3.exceptions
from github.GithubException import GithubException, RateLimitExceededException

from holon.errors import OperationalError
from holon.github.permissions import permission_for, permission_hint
from holon.secrets import mask_secret_looking
from holon.terminal import line

MESSAGE_LIMIT = 160
UNCERTAIN = "GitHub may or may not have done it"


class GitHubError(OperationalError):
    """A GitHub call failed (exit 74); `operation` and `status` say which and how."""

    def __init__(self, message: str, *, operation: str | None = None, status: int | None = None):
        super().__init__(message)
        self.operation = operation
        self.status = status


class Unauthorized(GitHubError):
    """401: the token is missing, expired or wrong."""


class PermissionDenied(GitHubError):
    """403 (not a rate limit): the token may not do this; `permission` is what to grant."""

    def __init__(self, message: str, *, operation: str, permission: str | None) -> None:
        super().__init__(message, operation=operation, status=403)
        self.permission = permission


class NotFound(GitHubError):
    """404: no such object, or one the token cannot see. GitHub also answers 404 to a write
    the token may not make, so on a write `permission` is what to grant (None on a read)."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None = None,
        status: int | None = 404,
        permission: str | None = None,
    ) -> None:
        super().__init__(message, operation=operation, status=status)
        self.permission = permission


class Conflict(GitHubError):
    """409: the object changed under the request (a ref moved, a merge conflicts)."""


class Rejected(GitHubError):
    """422: GitHub validated the request and refused it."""


class RateLimited(GitHubError):
    """A rate limit Holon would have to wait out longer than it is allowed to."""

    def __init__(self, message: str, *, operation: str | None = None, wait: float | None = None):
        super().__init__(message, operation=operation, status=None)
        self.wait = wait


class ServerError(GitHubError):
    """5xx, or no answer to a request that was sent: GitHub may or may not have done it."""


class Unreadable(ServerError):
    """An answer PyGithub could not take (a body that is not JSON, a redirect or a next page
    on another host): what GitHub did is unknown, as after a 5xx."""


def github_message(data: Any) -> str:
    """GitHub's own short message from an error body, escaped and cut; '' when there is none."""
    if not isinstance(data, dict):
        return ""
    parts = [data.get("message")]
    errors = data.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        first = errors[0]
        parts.append(first.get("message") or first.get("code"))
    text = ": ".join(str(p) for p in parts if isinstance(p, str) and p)
    return line(mask_secret_looking(text), limit=MESSAGE_LIMIT)


def translate(exc: GithubException, operation: str) -> GitHubError:
    """The Holon error for PyGithub's exception from `operation`."""
    status = exc.status
    said = github_message(exc.data)
    detail = f"{status} {said}" if said else str(status)
    where = f"GitHub refused {operation} ({detail})"
    if isinstance(exc, RateLimitExceededException) or status == 429:
        return RateLimited(f"{where}: rate limited, try again later", operation=operation)
    if status == 401:
        return Unauthorized(
            f"{where}: GITHUB_TOKEN is missing, expired or wrong", **_at(exc, operation)
        )
    if status == 403:
        hint = permission_hint(operation)
        return PermissionDenied(
            f"{where}: {hint}", operation=operation, permission=permission_for(operation)
        )
    if status == 404:
        needed = permission_for(operation)
        if needed is not None and needed.endswith(": write"):
            hint = permission_hint(operation)
            message = f"{where}: no such object, or the token cannot see it or write it: {hint}"
            return NotFound(message, **_at(exc, operation), permission=needed)
        message = f"{where}: no such object, or the token cannot see it"
        return NotFound(message, **_at(exc, operation))
    if status == 409:
        return Conflict(f"{where}: it changed meanwhile", **_at(exc, operation))
    if status == 422:
        return Rejected(f"{where}: the request was invalid", **_at(exc, operation))
    if status >= 500:
        return ServerError(
            f"GitHub failed {operation} ({detail}): {UNCERTAIN}", **_at(exc, operation)
        )
    return GitHubError(where, **_at(exc, operation))


def _at(exc: GithubException, operation: str) -> dict[str, Any]:
    return {"operation": operation, "status": exc.status}


def _unreachable(exc: Exception, operation: str) -> GitHubError:
    # The request may have been sent: a read timeout after a POST leaves its effect unknown.
    kind = "timed out" if isinstance(exc, requests.Timeout) else "could not be reached"
    return ServerError(f"GitHub {kind} during {operation}: {UNCERTAIN}", operation=operation)


# What PyGithub raises on an answer it cannot take, besides GithubException: ValueError
# (json.loads, decoding), RuntimeError (a redirect elsewhere), AssertionError (a URL on another
# host). Anything else (a KeyError, a TypeError) stays a bug.
_VENDOR_FAILURES = (ValueError, RuntimeError, AssertionError)


def _unreadable(exc: Exception, operation: str) -> GitHubError:
    said = line(mask_secret_looking(f"{type(exc).__name__}: {exc}"), limit=MESSAGE_LIMIT)
    return Unreadable(
        f"GitHub's answer to {operation} could not be read ({said}): {UNCERTAIN}",
        operation=operation,
    )


@contextlib.contextmanager
def map_errors(operation: str) -> Iterator[None]:
    """Translate what PyGithub, requests and urllib3 raise inside into `GitHubError`s."""
    try:
        yield
    except GitHubError:
        raise
    except GithubException as exc:
        raise translate(exc, operation) from None
    except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
        raise _unreachable(exc, operation) from None
    except _VENDOR_FAILURES as exc:
        raise _unreadable(exc, operation) from None


class PublishError(GitHubError):
    """Publishing a run's result was refused or failed before anything was pushed: a patch that
    does not apply, an empty one, an unsafe path, a branch that moved. `reason` is a short code
    (`empty`, `does-not-apply`, `unsafe-path`, `workflow`, `moved`, `too-large`, `not-allowed`,
    `bad-input`, `mismatch`, `no-login`, `undecided`: a write GitHub may have done, its look-up
    failed too); `evidence` holds one line per finding (which file, which hunk)."""

    def __init__(self, reason: str, message: str, evidence: tuple[str, ...] = ()) -> None:
        super().__init__(message, operation="publish")
        self.reason = reason
        self.evidence = evidence
