"""The narrow read-and-merge access to a repository that facts and the merge effect need.

Plain data in, plain data out: PyGithub's objects stay in `rest.py`, so facts and merge can be
read (and tested) without knowing PyGithub, and nothing of it leaks past `holon/github/`. Every
method raises `holon.github.errors.GitHubError` (a `NotFound`, a `PermissionDenied`...) when
GitHub refuses, and `TooMany` when a list is longer than Holon reads (a partial list of reviews
or checks could hide the one that matters); none of them retries a write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from holon.github.errors import GitHubError

# Pages of 100 read at most per list: a pull request with more than a thousand reviews, or a
# commit with more than a thousand checks, is not one Holon decides a merge on.
MAX_PAGES = 10


class TooMany(GitHubError):
    """A list longer than Holon reads: deciding on part of it could miss what matters."""


@dataclass(frozen=True)
class Pull:
    number: int
    state: str  # open, closed
    merged: bool
    merge_commit_sha: str | None
    draft: bool
    title: str
    labels: tuple[str, ...]
    author: str
    head_sha: str
    head_ref: str
    head_repo: str | None  # None when the fork it came from is gone
    base_ref: str
    base_repo: str
    mergeable: bool | None  # None: GitHub has not computed it yet
    merged_at: str | None = None  # GitHub's times of the end, when it gives them
    closed_at: str | None = None


@dataclass(frozen=True)
class Review:
    id: int
    login: str
    bot: bool  # GitHub says the account is a Bot (an app)
    association: str | None
    state: str  # APPROVED, CHANGES_REQUESTED, DISMISSED, COMMENTED, PENDING
    commit_id: str | None


@dataclass(frozen=True)
class CheckRun:
    name: str
    status: str  # queued, in_progress, completed, ...
    conclusion: str | None
    app_id: int | None
    details_url: str | None
    app: str | None = None  # the slug of the app that created it (its login is `<slug>[bot]`)
    summary: str | None = None  # output.summary: Holon's own carries its marker


@dataclass(frozen=True)
class Status:
    context: str
    state: str  # success, pending, failure, error


@dataclass(frozen=True)
class Merged:
    merged: bool
    sha: str | None
    message: str


class RepoAccess(Protocol):
    def permission(self, repo: str, login: str) -> tuple[str, str | None]:
        """GitHub's legacy `permission` and its `role_name` for `login` on `repo`."""
        ...

    def pull(self, repo: str, number: int) -> Pull: ...

    def reviews(self, repo: str, number: int) -> list[Review]:
        """Every submitted review, oldest first."""
        ...

    def branch_rules(self, repo: str, branch: str) -> list[dict[str, Any]]:
        """The active ruleset rules that apply to `branch` (`type`, `parameters`)."""
        ...

    def check_runs(self, repo: str, sha: str) -> list[CheckRun]:
        """The latest check run of each name (and app) on `sha`."""
        ...

    def statuses(self, repo: str, sha: str) -> list[Status]:
        """The latest commit status of each context on `sha`."""
        ...

    def default_branch(self, repo: str) -> str: ...

    def merge(self, repo: str, number: int, *, sha: str, method: str) -> Merged:
        """PUT the merge once, `sha` pinned; never sent again by Holon's retry."""
        ...
