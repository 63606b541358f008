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
            chunk = data.get(key) if key and isinstance(data, dict) else data
            if not isinstance(chunk, list):
                raise GitHubError(f"GitHub answered {operation} with something not a list")
            items.extend(chunk)
            total = data.get("total_count") if key and isinstance(data, dict) else None
            done = len(items) >= total if isinstance(total, int) else len(chunk) < PER_PAGE
            if done or not chunk:
                return items
        raise TooMany(f"{operation}: more than {MAX_PAGES * PER_PAGE} items; not deciding on part")

    def permission(self, repo: str, login: str) -> tuple[str, str | None]:
        path = f"{repo_path(repo)}/collaborators/{urllib.parse.quote(login, safe='')}/permission"
        data = self._get("repos/get-collaborator-permission-level", path)
        role = data.get("role_name")
        return str(data.get("permission") or "none"), role if isinstance(role, str) else None

    def pull(self, repo: str, number: int) -> Pull:
        data = self._get("pulls/get", f"{repo_path(repo)}/pulls/{int(number)}")
        head, base = data.get("head") or {}, data.get("base") or {}
        head_repo = head.get("repo") if isinstance(head.get("repo"), dict) else None
        mergeable = data.get("mergeable")
        return Pull(
            number=int(data.get("number") or number),
            state=str(data.get("state") or ""),
            merged=data.get("merged") is True,
            merge_commit_sha=data.get("merge_commit_sha") or None,
            draft=data.get("draft") is True,
            title=str(data.get("title") or ""),
            labels=tuple(str(label.get("name")) for label in data.get("labels") or ()),
            author=str((data.get("user") or {}).get("login") or ""),
            head_sha=str(head.get("sha") or ""),
            head_ref=str(head.get("ref") or ""),
            head_repo=str(head_repo["full_name"]) if head_repo else None,
            base_ref=str(base.get("ref") or ""),
            base_repo=str((base.get("repo") or {}).get("full_name") or ""),
            mergeable=mergeable if isinstance(mergeable, bool) else None,
        )

    def reviews(self, repo: str, number: int) -> list[Review]:
        path = f"{repo_path(repo)}/pulls/{int(number)}/reviews"
        return [
            Review(
                id=int(item.get("id") or 0),
                login=str((item.get("user") or {}).get("login") or ""),
                bot=(item.get("user") or {}).get("type") == "Bot",
                association=item.get("author_association"),
                state=str(item.get("state") or ""),
                commit_id=item.get("commit_id"),
            )
            for item in self._pages("pulls/list-reviews", path)
        ]

    def branch_rules(self, repo: str, branch: str) -> list[dict[str, Any]]:
        path = f"{repo_path(repo)}/rules/branches/{_branch(branch)}"
        return [r for r in self._pages("repos/get-branch-rules", path) if isinstance(r, dict)]

    def check_runs(self, repo: str, sha: str) -> list[CheckRun]:
        path = f"{repo_path(repo)}/commits/{_sha(sha)}/check-runs"
        return [
            CheckRun(
                name=str(run.get("name") or ""),
                status=str(run.get("status") or ""),
                conclusion=run.get("conclusion"),
                app_id=(run.get("app") or {}).get("id"),
                details_url=run.get("details_url"),
            )
            for run in self._pages("checks/list-for-ref", path, key="check_runs")
        ]

    def statuses(self, repo: str, sha: str) -> list[Status]:
        path = f"{repo_path(repo)}/commits/{_sha(sha)}/status"
        return [
            Status(context=str(s.get("context") or ""), state=str(s.get("state") or ""))
            for s in self._pages("repos/get-combined-status-for-ref", path, key="statuses")
        ]

    def default_branch(self, repo: str) -> str:
        return str(self._get("repos/get", repo_path(repo))["default_branch"])

    def merge(self, repo: str, number: int, *, sha: str, method: str) -> Merged:
        path = f"{repo_path(repo)}/pulls/{int(number)}/merge"
        with map_errors("pulls/merge"):
            _, data = self._requester.requestJsonAndCheck(
                "PUT", path, input={"sha": _sha(sha), "merge_method": method}
            )
        data = data if isinstance(data, dict) else {}
        return Merged(
            merged=data.get("merged") is True,
            sha=data.get("sha") or None,
            message=str(data.get("message") or ""),
        )
