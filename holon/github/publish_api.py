"""The REST calls publishing makes on one repository, and how a write GitHub may or may not
have done is settled.

Calls go through the client's requester (PyGithub's own transport, with Holon's retry and
rate-limit policy: `client.py`, `retry.py`) as plain JSON, each inside `map_errors` under
GitHub's operation id, so a refusal names the permission. Git data is plain JSON here, not
PyGithub's lazy objects, so each call is exactly one request and the count in docs/github.md
holds.

A write that failed with a 5xx or went unanswered (`ServerError`) is not sent again blindly:
`write_once` first looks for its effect (the branch at the commit, the pull request of the
branch, the review of the sha) and sends it once more only when the effect is not there.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

import github

from holon.github.access import TooMany
from holon.github.errors import GitHubError, NotFound, PublishError, ServerError, map_errors

PER_PAGE = 100
MAX_PAGES = 10
T = TypeVar("T")


class RepoApi:
    def __init__(self, gh: github.Github, full_name: str) -> None:
        self._requester = gh.requester
        self.full_name = full_name
        self.owner = full_name.split("/")[0]

    def call(
        self,
        operation: str,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        """One request to `/repos/{owner}/{repo}{path}`; the answer's JSON."""
        with map_errors(operation):
            _, data = self._requester.requestJsonAndCheck(
                method, f"/repos/{self.full_name}{path}", parameters=params, input=body
            )
        return data

    def pages(self, operation: str, path: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Every item of a listing, a page of 100 at a time; `TooMany` when there are more
        than MAX_PAGES pages: a list cut short could hide Holon's own review or reply, which
        would then be posted again."""
        items: list[Any] = []
        for page in range(1, MAX_PAGES + 2):
            found = self.call(
                operation,
                "GET",
                path,
                params={**(params or {}), "per_page": PER_PAGE, "page": page},
            )
            if page > MAX_PAGES and found:
                raise TooMany(
                    f"GitHub lists more than {MAX_PAGES * PER_PAGE} items for {operation} "
                    f"({self.full_name}{path}): stopped rather than decide on part of them",
                    operation=operation,
                )
            items.extend(found or [])
            if not isinstance(found, list) or len(found) < PER_PAGE:
                break
        return items

    def branch_tip(self, branch: str) -> str | None:
        """The commit `branch` points at; None when there is no such branch."""
        try:
            ref = self.call("git/get-ref", "GET", f"/git/ref/heads/{_quote(branch)}")
        except NotFound:
            return None
        sha = (ref or {}).get("object", {}).get("sha")
        return sha if isinstance(sha, str) else None


def _quote(branch: str) -> str:
    return urllib.parse.quote(branch, safe="/")


def ref_path(branch: str) -> str:
    return f"/git/refs/heads/{_quote(branch)}"


def write_once(write: Callable[[], T], lookup: Callable[[], T | None]) -> T:
    """`write()`; after a ServerError, what `lookup()` finds of its effect, and only when it
    finds nothing, `write()` once more (a second ServerError is raised). A look-up that fails
    is tried once more; when that fails too, whether GitHub did the write is unknown:
    PublishError("undecided"), never the write sent again blindly (the work then waits on the
    operator: `publish_handler`)."""
    try:
        return write()
    except ServerError as lost:
        try:
            found = _looked_up(lookup)
        except GitHubError as exc:
            raise undecided(lost, exc) from None
        if found is not None:
            return found
        return write()


def _looked_up(lookup: Callable[[], T | None]) -> T | None:
    try:
        return lookup()
    except GitHubError:
        return lookup()


def undecided(lost: GitHubError, lookup: GitHubError) -> PublishError:
    """A write GitHub may have done (`lost`) whose effect could not be looked up (`lookup`)."""
    return PublishError(
        "undecided",
        f"{lost}; looking for its effect failed too, so it is not sent again",
        (f"look-up: {lookup}",),
    )


def again_after_5xx(write: Callable[[], T]) -> T:
    """For writes whose repeat creates nothing new (a blob, a tree: content-addressed) or
    nothing anyone sees (an unreferenced commit): sent once more after a ServerError."""
    try:
        return write()
    except ServerError:
        return write()
