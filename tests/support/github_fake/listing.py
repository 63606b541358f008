"""The loopback GitHub's repository-wide listings as a reconciling tick reads them: issue comments
`since` a time (oldest updated first), open pull requests by when they were updated, each a page
at a time (`per_page`, `page`), as GitHub pages them.

These refine the answers of `issues.py` for the same routes (imported after it), adding what
those do not need: the ordering, the pages, and a pull request's `created_at`/`updated_at`.
"""

from __future__ import annotations

from typing import Any

from tests.support.github_fake import issues  # noqa: F401  (first: its answers are refined here)
from tests.support.github_fake.request import HANDLERS, Reply, Request, handles

_listed_pulls = HANDLERS["pulls/list"]  # issues.py's: which pull requests, rendered


def _page(req: Request, items: list[Any]) -> list[Any]:
    per_page = min(int(req.arg("per_page") or 30), 100)
    page = int(req.arg("page") or 1)
    if per_page < 1 or page < 1:
        raise ValueError("per_page and page start at 1")
    return items[(page - 1) * per_page : page * per_page]


def _ordered(req: Request, items: list[Any], key: str, default: str) -> list[Any]:
    # Without `sort` the fake keeps its own order (what the other tests were written against).
    descending = req.arg("direction", default) == "desc"
    return sorted(items, key=lambda item: (item[key], item["id"]), reverse=descending)


@handles("issues/list-comments-for-repo")
def _repo_comments(req: Request) -> Reply:
    repo = req.repo
    since = req.arg("since") or ""
    found = [req.render.comment(repo, c) for c in repo.comments.values() if c.updated_at >= since]
    if req.arg("sort") in ("created", "updated"):
        found = _ordered(req, found, f"{req.arg('sort')}_at", "asc")
    return 200, _page(req, found)


@handles("pulls/list")
def _pulls(req: Request) -> Reply:
    status, found = _listed_pulls(req)
    for body in found:
        issue = req.repo.issues[body["number"]]
        body.update(created_at=issue.created_at, updated_at=issue.updated_at)
    # GitHub's default direction: desc for `created`, asc for any other sort.
    if req.arg("sort") in ("created", "updated"):
        default = "desc" if req.arg("sort") == "created" else "asc"
        found = _ordered(req, found, f"{req.arg('sort')}_at", default)
    return status, _page(req, found)
