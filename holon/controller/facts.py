"""`RepoFacts`: what the controller must know about the repository and cannot tell from an event.

Answers are `None` when unknown; guardrails then refuse rather than guess. The GitHub-backed
implementation comes with the GitHub edge; `StaticFacts` is the in-memory one (tests, dry runs,
the offline demo), configured explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]
PERMISSION_ORDER: tuple[Permission, ...] = ("none", "read", "triage", "write", "maintain", "admin")


def at_least(permission: Permission, needed: Permission) -> bool:
    return PERMISSION_ORDER.index(permission) >= PERMISSION_ORDER.index(needed)


@dataclass(frozen=True)
class PullFacts:
    approved: bool
    stale: bool  # the approval predates the current head
    head_sha: str
    head_ref: str
    same_repo: bool
    base_ref: str | None = None  # the branch it merges into; None: unknown (no merge)


@dataclass(frozen=True)
class PullHead:
    """Where a pull request's head is: its commit, and whether its branch is in this repository."""

    sha: str
    same_repo: bool


class RepoFacts(Protocol):
    def permission(self, repo: str, login: str) -> Permission | None: ...

    def pull(self, repo: str, number: int) -> PullFacts | None: ...

    def head(self, repo: str, number: int) -> PullHead | None:
        """The pull request's head (no reviews read: cheaper than `pull`)."""
        ...

    def checks_green(self, repo: str, sha: str) -> bool | None: ...

    def is_holon_pr(self, repo: str, number: int) -> bool | None: ...

    def is_holon(self, login: str) -> bool:
        """Whether `login` is Holon's own (what it writes never asks it for work)."""
        ...


@dataclass
class StaticFacts:
    """Facts given up front; anything not given is unknown."""

    permissions: dict[tuple[str, str], Permission] = field(default_factory=dict)
    pulls: dict[tuple[str, int], PullFacts] = field(default_factory=dict)
    green: dict[tuple[str, str], bool] = field(default_factory=dict)
    holon_login: str | None = None

    def permission(self, repo: str, login: str) -> Permission | None:
        return self.permissions.get((repo, login))

    def pull(self, repo: str, number: int) -> PullFacts | None:
        return self.pulls.get((repo, number))

    def head(self, repo: str, number: int) -> PullHead | None:
        pull = self.pulls.get((repo, number))
        return PullHead(pull.head_sha, pull.same_repo) if pull is not None else None

    def checks_green(self, repo: str, sha: str) -> bool | None:
        return self.green.get((repo, sha))

    def is_holon_pr(self, repo: str, number: int) -> bool | None:
        # docs/architecture.md, "Conventions": head branch starts `holon/`, in the same repository.
        pull = self.pulls.get((repo, number))
        if pull is None:
            return None
        return pull.same_repo and pull.head_ref.startswith("holon/")

    def is_holon(self, login: str) -> bool:
        return self.holon_login is not None and login.casefold() == self.holon_login.casefold()
