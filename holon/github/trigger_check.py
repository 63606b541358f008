"""Before a write of the work: is the text that triggered it still on GitHub, unedited?

Reads the trigger again (`GET /repos/{owner}/{repo}/issues/comments/{id}`, `.../pulls/comments/
{id}`, `.../pulls/{number}/reviews/{id}`, `.../issues/{number}` or `.../pulls/{number}`) and
compares the SHA-256 of its text with the snapshot taken at intake (`gateway/trigger.py`). A
404 is a deleted trigger; a different text an edited one. Any other failure to read it (a 5xx,
a rate limit, a refused permission) is `unverified`: the write waits for a later attempt rather
than going ahead unchecked.
"""

from __future__ import annotations

from typing import Any

import github

from holon.gateway.trigger import TriggerSnapshot, TriggerVerdict, compare
from holon.github.errors import GitHubError, NotFound, map_errors
from holon.terminal import line


def _route(snapshot: TriggerSnapshot) -> tuple[str, str] | None:
    """The operation and path (below the repository) that read the trigger again."""
    kind, ident = snapshot.kind, snapshot.id
    if kind == "comment":
        return "issues/get-comment", f"/issues/comments/{ident}"
    if kind == "review_comment":
        return "pulls/get-review-comment", f"/pulls/comments/{ident}"
    if kind == "review":
        if snapshot.number is None:
            return None
        return "pulls/get-review", f"/pulls/{snapshot.number}/reviews/{ident}"
    if kind == "issue":
        return "issues/get", f"/issues/{ident}"
    return "pulls/get", f"/pulls/{ident}"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class LiveTriggerCheck:
    """`TriggerCheck` through the edge's client (one requester: spacing and retries shared)."""

    def __init__(self, client: github.Github) -> None:
        self.client = client

    def __call__(self, repo: str | None, snapshot: TriggerSnapshot) -> TriggerVerdict:
        route = _route(snapshot)
        if repo is None or route is None:
            return TriggerVerdict(error="the trigger's repository or pull request is not known")
        operation, path = route
        try:
            with map_errors(operation):
                _, data = self.client.requester.requestJsonAndCheck("GET", f"/repos/{repo}{path}")
        except NotFound:
            return TriggerVerdict(change="deleted")
        except GitHubError as exc:
            return TriggerVerdict(error=line(f"reading the trigger again: {exc}", limit=300))
        if not isinstance(data, dict):
            return TriggerVerdict(error=f"{operation}: GitHub answered no object")
        title = _text(data.get("title")) if snapshot.kind in ("issue", "pull_request") else None
        updated = _text(data.get("updated_at")) or _text(data.get("submitted_at"))
        change = compare(snapshot, title, _text(data.get("body")))
        return TriggerVerdict(change=change, live_updated_at=line(updated or "", limit=60) or None)


__all__ = ["LiveTriggerCheck"]
