"""The narrow handle on one repository that Holon's GitHub effects use (`Repo`), and the small
values it answers with.

The effects (`comments`, `labels`, `issues`, `dispatch`, `checks`) see only this protocol, never
PyGithub: `pygithub_repo.PyGithubRepo` implements it over the client, and a test may implement it
with a recording fake. Every method is one REST call (a listing, one call per page), so the call
count of an effect can be read off its code; each raises `errors.GitHubError` on failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

CheckStatus = Literal["queued", "in_progress", "completed"]


@dataclass(frozen=True)
class CommentView:
    id: int
    author: str | None  # the login that wrote it; None for a deleted account
    body: str
    url: str | None = None


@dataclass(frozen=True)
class IssueView:
    number: int
    state: str  # open, closed
    is_pull: bool
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class PullView:
    number: int
    state: str
    author: str | None
    requested: tuple[str, ...] = ()  # logins whose review is requested now
    head_sha: str | None = None


@dataclass(frozen=True)
class CheckRunView:
    id: int
    name: str
    app: str | None  # the slug of the app that created it
    status: str
    conclusion: str | None
    title: str | None
    summary: str | None
    url: str | None = None


@dataclass(frozen=True)
class CheckFields:
    """What a check run says: its state and its output."""

    status: CheckStatus
    title: str
    summary: str
    conclusion: str | None = None
    details_url: str | None = None


class Repo(Protocol):
    """One repository, as the effects need it. `full_name` is `owner/name`."""

    @property
    def full_name(self) -> str: ...

    def comments(self, number: int) -> Iterator[CommentView]:
        """The issue's or pull request's comments, oldest first, one call per page as read."""
        ...

    def create_comment(self, number: int, body: str) -> CommentView: ...

    def edit_comment(self, number: int, comment_id: int, body: str) -> CommentView: ...

    def delete_comment(self, comment_id: int) -> None:
        """Delete the comment; one already gone is no error."""
        ...

    def issue(self, number: int) -> IssueView: ...

    def add_labels(self, number: int, names: Sequence[str]) -> None: ...

    def remove_label(self, number: int, name: str) -> None: ...

    def close_issue(self, number: int, reason: str) -> None: ...

    def pull(self, number: int) -> PullView: ...

    def request_reviewers(self, number: int, logins: Sequence[str]) -> None: ...

    def workflow_dispatch(self, workflow: str, ref: str, inputs: Mapping[str, str]) -> None: ...

    def repository_dispatch(self, event_type: str, payload: Mapping[str, Any]) -> None: ...

    def check_runs(self, sha: str, name: str) -> Iterator[CheckRunView]:
        """The check runs named `name` on commit `sha`, newest first."""
        ...

    def create_check_run(self, sha: str, name: str, fields: CheckFields) -> CheckRunView: ...

    def update_check_run(self, check_run_id: int, fields: CheckFields) -> CheckRunView: ...
