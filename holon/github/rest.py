"""`RepoAccess` over Holon's PyGithub client: each method one REST operation (or its pages),
read through PyGithub's requester so Holon's retry policy and error mapping apply, and turned
into the plain data of `access.py` before it leaves.

Paths are built here from values an event carried (a repository name, a login, a branch), so
each is checked or encoded first: a name GitHub could not have is refused before any request.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

import github

from holon.github.access import MAX_PAGES, CheckRun, Merged, Pull, Review, Status, TooMany
from holon.github.errors import GitHubError, map_errors

PER_PAGE = 100
_REPO = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}/[A-Za-z0-9._-]{1,100}")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def repo_path(repo: str) -> str:
    """`/repos/owner/name`; a name GitHub could not have (`..`, a slash too many) is refused."""
    name = repo.partition("/")[2]
    if not _REPO.fullmatch(repo) or name in (".", ".."):
        raise GitHubError("refused a repository name GitHub could not have (owner/name)")
    return f"/repos/{repo}"


def _sha(sha: str) -> str:
    if not _SHA.fullmatch(sha):
        raise GitHubError("refused a commit sha that is not 40 (or 64) lowercase hex digits")
    return sha


def _branch(branch: str) -> str:
    # GitHub takes the branch with its slashes; a dot segment git never allows could still be
    # folded away by a URL library, reaching another route.
    if not branch or any(part in ("", ".", "..") for part in branch.split("/")):
        raise GitHubError("refused a branch name git could not have")
    return urllib.parse.quote(branch, safe="/")


class RestAccess:
    def __init__(self, client: github.Github) -> None:
        self._requester = client.requester

    def _get(self, operation: str, path: str, **params: Any) -> Any:
        with map_errors(operation):
            _, data = self._requester.requestJsonAndCheck("GET", path, parameters=params or None)
        return data

    def _pages(self, operation: str, path: str, key: str | None = None) -> list[Any]:
        """Every item of a list GitHub pages (`key` names it inside an object answer)."""
        items: list[Any] = []
        for page in range(1, MAX_PAGES + 1):
            data = self._get(operation, path, per_page=PER_PAGE, page=page)
            chunk = _obj(data).get(key) if key else data
            if not isinstance(chunk, list):
                raise GitHubError(f"GitHub answered {operation} with something not a list")
            items.extend(chunk)
            total = _obj(data).get("total_count") if key else None
            done = len(items) >= total if isinstance(total, int) else len(chunk) < PER_PAGE
            if done or not chunk:
                return items
        raise TooMany(f"{operation}: more than {MAX_PAGES * PER_PAGE} items; not deciding on part")

    def permission(self, repo: str, login: str) -> tuple[str, str | None]:
        path = f"{repo_path(repo)}/collaborators/{urllib.parse.quote(login, safe='')}/permission"
        data = _obj(self._get("repos/get-collaborator-permission-level", path))
        return _text(data.get("permission")), _text(data.get("role_name")) or None

    def pull(self, repo: str, number: int) -> Pull:
        data = _obj(self._get("pulls/get", f"{repo_path(repo)}/pulls/{int(number)}"))
        head, base = _obj(data.get("head")), _obj(data.get("base"))
        head_repo = _text(_obj(head.get("repo")).get("full_name")) or None
        mergeable, labels = data.get("mergeable"), data.get("labels")
        return Pull(
            number=int(number),
            state=_text(data.get("state")),
            merged=data.get("merged") is True,
            merge_commit_sha=_text(data.get("merge_commit_sha")) or None,
            draft=data.get("draft") is True,
            title=_text(data.get("title")),
            labels=tuple(_label(label) for label in _list(labels)),
            author=_text(_obj(data.get("user")).get("login")),
            head_sha=_text(head.get("sha")),
            head_ref=_text(head.get("ref")),
            head_repo=head_repo,
            base_ref=_text(base.get("ref")),
            base_repo=_text(_obj(base.get("repo")).get("full_name")),
            mergeable=mergeable if isinstance(mergeable, bool) else None,
            merged_at=_text(data.get("merged_at")) or None,
            closed_at=_text(data.get("closed_at")) or None,
        )

    def reviews(self, repo: str, number: int) -> list[Review]:
        path = f"{repo_path(repo)}/pulls/{int(number)}/reviews"
        reviews = []
        for item in map(_obj, self._pages("pulls/list-reviews", path)):
            user, ident = _obj(item.get("user")), item.get("id")
            reviews.append(
                Review(
                    id=ident if isinstance(ident, int) else 0,
                    login=_text(user.get("login")),  # "" for a deleted account
                    bot=user.get("type") == "Bot",
                    association=_text(item.get("author_association")) or None,
                    state=_text(item.get("state")),
                    commit_id=_text(item.get("commit_id")) or None,
                )
            )
        return reviews

    def branch_rules(self, repo: str, branch: str) -> list[dict[str, Any]]:
        path = f"{repo_path(repo)}/rules/branches/{_branch(branch)}"
        return [r for r in self._pages("repos/get-branch-rules", path) if isinstance(r, dict)]

    def check_runs(self, repo: str, sha: str) -> list[CheckRun]:
        path = f"{repo_path(repo)}/commits/{_sha(sha)}/check-runs"
        runs = []
        for run in map(_obj, self._pages("checks/list-for-ref", path, key="check_runs")):
            app = _obj(run.get("app"))
            ident = app.get("id")
            runs.append(
                CheckRun(
                    name=_text(run.get("name")),
                    status=_text(run.get("status")),
                    conclusion=_text(run.get("conclusion")) or None,
                    app_id=ident if isinstance(ident, int) else None,
                    details_url=_text(run.get("details_url")) or None,
                    app=_text(app.get("slug")) or None,
                    summary=_text(_obj(run.get("output")).get("summary")) or None,
                )
            )
        return runs

    def statuses(self, repo: str, sha: str) -> list[Status]:
        path = f"{repo_path(repo)}/commits/{_sha(sha)}/status"
        found = self._pages("repos/get-combined-status-for-ref", path, key="statuses")
        return [
            Status(context=_text(s.get("context")), state=_text(s.get("state")))
            for s in map(_obj, found)
        ]

    def default_branch(self, repo: str) -> str:
        branch = _text(_obj(self._get("repos/get", repo_path(repo))).get("default_branch"))
        if not branch:
            raise GitHubError("GitHub answered repos/get without a default branch")
        return branch

    def merge(self, repo: str, number: int, *, sha: str, method: str) -> Merged:
        path = f"{repo_path(repo)}/pulls/{int(number)}/merge"
        with map_errors("pulls/merge"):
            _, data = self._requester.requestJsonAndCheck(
                "PUT", path, input={"sha": _sha(sha), "merge_method": method}
            )
        data = _obj(data)
        return Merged(
            merged=data.get("merged") is True,
            sha=_text(data.get("sha")) or None,
            message=_text(data.get("message")),
        )


# GitHub's answers are read defensively: a field of an unexpected type is absent, never a crash
# half-way through a decision (and never a merge).
def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _label(value: Any) -> str:
    # GitHub sends objects; a bare name is read as one rather than missed (a hold label).
    return value if isinstance(value, str) else _text(_obj(value).get("name"))
