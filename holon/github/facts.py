"""`GitHubFacts`: the controller's `RepoFacts` read live from GitHub (docs/github.md, "Facts").

Answers are None when GitHub cannot tell Holon (a 403, a 5xx, a list too long to read), and the
guardrails then refuse. Reads are cached for one pass (one event): `new_pass()` starts another,
and a cache older than `ttl` seconds is dropped anyway, so a permission taken away is noticed
even where nobody calls it.

- permission: `repos/get-collaborator-permission-level`. Its `permission` field is legacy
  (maintain reads as write, triage as read); `role_name` is the real role and is used when it
  is one of GitHub's five, else the legacy field (a custom role's base). A 404 is "none": GitHub
  answers it for a login that is no user, and for some non-collaborators; either way, no access.
- pull: approval from the reviews (`approval.py`), trusted reviewers being those with write
  access (OWNER and an allow-listed bot without a look-up; a bot otherwise, and Holon itself,
  never: Holon does not approve its own merges).
- checks_green: the verdict of `required.py` for the sha, the required checks read from the
  rulesets of the base branch of the pull request this pass read with that head (else the
  default branch). Holon's own check runs are left out: its Actions run's jobs, and its
  `Holon` check run (by name, app and marker, as `checks.py` finds it).
- head: the pull request's head sha and whether it is in this repository (the pull request
  read once per pass, shared with `pull` and `is_holon_pr`).
- is_holon_pr: same repository and a head branch starting `holon/`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any, cast

from holon.controller.facts import PERMISSION_ORDER, Permission, PullFacts, PullHead, at_least
from holon.controller.guardrails import HOLON_CHECK, bot_allowed, looks_like_bot
from holon.gateway.github import authority_of
from holon.github.access import CheckRun, Pull, RepoAccess, Review
from holon.github.approval import Approval, approval
from holon.github.errors import GitHubError, NotFound
from holon.github.logins import same_login
from holon.github.marker import parse_marker
from holon.github.required import Verdict, verdict

HOLON_BRANCH = "holon/"


class GitHubFacts:
    def __init__(
        self,
        access: RepoAccess,
        *,
        login: str | None,
        allowed_bots: Iterable[str] = (),
        own_run_id: str | None = None,
        ttl: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.access = access
        self.login = login
        self.allowed_bots = tuple(allowed_bots)
        # Check runs of this Actions run (Holon's own job) link to it; they never decide.
        self.own_run = f"/actions/runs/{own_run_id}/" if own_run_id else None
        self.ttl = ttl
        self.clock = clock
        self._cache: dict[tuple[Any, ...], Any] = {}
        self._since = clock()

    def new_pass(self) -> None:
        """Forget what this pass read: the next answers are read again."""
        self._cache.clear()
        self._since = self.clock()

    def _cached(self, key: tuple[Any, ...], read: Callable[[], Any]) -> Any:
        if self.clock() - self._since > self.ttl:
            self.new_pass()
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    # -- who --------------------------------------------------------------------------------
    def is_holon(self, login: str) -> bool:
        return same_login(login, self.login)

    def permission(self, repo: str, login: str) -> Permission | None:
        key = ("permission", repo.casefold(), login.casefold())
        return cast("Permission | None", self._cached(key, lambda: self._permission(repo, login)))

    def _permission(self, repo: str, login: str) -> Permission | None:
        try:
            legacy, role = self.access.permission(repo, login)
        except NotFound:
            return "none"
        except GitHubError:
            return None
        for value in (role, legacy):
            for known in PERMISSION_ORDER:
                if value == known:
                    return known
        return None

    def reviewer_trusted(self, repo: str, review: Review) -> bool | None:
        if not review.login or self.is_holon(review.login):
            return False  # a deleted account ("ghost"), or Holon approving its own work
        if review.bot or looks_like_bot(review.login):
            return bot_allowed(review.login, self.allowed_bots)
        authority = authority_of(review.association)
        if authority != "unknown":
            return authority == "owner"
        permission = self.permission(repo, review.login)
        return None if permission is None else at_least(permission, "write")

    # -- pull requests ----------------------------------------------------------------------
    def read_pull(self, repo: str, number: int, *, fresh: bool = False) -> Pull:
        """The pull request (GitHubError when GitHub does not say); `fresh` reads it again."""
        key = ("pull", repo.casefold(), number)
        if fresh:
            self._cache.pop(key, None)
        pull: Pull = self._cached(key, lambda: self.access.pull(repo, number))
        return pull

    def approval(self, repo: str, pull: Pull) -> Approval:
        """Read fresh each time: a merge decides on the reviews as they are now."""
        reviews = self.access.reviews(repo, pull.number)
        return approval(reviews, pull.head_sha, lambda r: self.reviewer_trusted(repo, r))

    def pull(self, repo: str, number: int) -> PullFacts | None:
        try:
            found = self.read_pull(repo, number)
            approved = self.approval(repo, found)
        except GitHubError:
            return None
        return PullFacts(
            approved=approved.approved,
            stale=approved.stale,
            head_sha=found.head_sha,
            head_ref=found.head_ref,
            same_repo=same_repo(found),
            base_ref=found.base_ref,
        )

    def head(self, repo: str, number: int) -> PullHead | None:
        try:
            found = self.read_pull(repo, number)
        except GitHubError:
            return None
        return PullHead(found.head_sha, same_repo(found)) if found.head_sha else None

    def is_holon_pr(self, repo: str, number: int) -> bool | None:
        try:
            found = self.read_pull(repo, number)
        except GitHubError:
            return None
        return same_repo(found) and found.head_ref.startswith(HOLON_BRANCH)

    # -- checks -----------------------------------------------------------------------------
    def checks(self, repo: str, sha: str, branch: str) -> Verdict:
        """The verdict on `sha` merging into `branch`, read now (unknown when GitHub won't say)."""
        try:
            key = ("rules", repo.casefold(), branch)
            rules = self._cached(key, lambda: self._rules(repo, branch))
            runs = self.access.check_runs(repo, sha)
            statuses = self.access.statuses(repo, sha)
        except GitHubError as exc:
            return Verdict("unknown", f"cannot read the checks on {sha[:12]}: {exc}")
        return verdict(rules, runs, statuses, sha, own=self._is_own)

    def _rules(self, repo: str, branch: str) -> list[dict[str, Any]]:
        try:
            return self.access.branch_rules(repo, branch)
        except NotFound:
            return []  # a GitHub Enterprise Server older than rulesets: there are none

    def _is_own(self, run: CheckRun) -> bool:
        if self.own_run is not None and self.own_run in (run.details_url or ""):
            return True
        # Holon's `Holon` check run (github/checks.py), found as it finds it: by name, app and
        # marker. It is in progress while Holon works, inside Actions or not, and must not hold
        # Holon's own merge back; a `Holon` check of another app is someone else's and counts.
        return (
            run.name == HOLON_CHECK
            and run.app is not None
            and same_login(f"{run.app}[bot]", self.login)
            and parse_marker(run.summary) is not None
        )

    def checks_green(self, repo: str, sha: str) -> bool | None:
        branch = next(
            (
                value.base_ref
                for key, value in self._cache.items()
                if key[:2] == ("pull", repo.casefold()) and value.head_sha == sha
            ),
            None,
        )
        if branch is None:
            try:
                branch = self._cached(
                    ("default", repo.casefold()), lambda: self.access.default_branch(repo)
                )
            except GitHubError:
                return None
        return self.checks(repo, sha, str(branch)).green


def same_repo(pull: Pull) -> bool:
    """The head branch lives in the base repository (not a fork, not a deleted one)."""
    return pull.head_repo is not None and pull.head_repo.casefold() == pull.base_repo.casefold()
