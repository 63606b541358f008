"""The workflow permission each GitHub operation needs, to name it when GitHub refuses one.

Keyed by GitHub's operation id (`issues/create-comment`, as in its REST description), so a
refusal can say what to add to the workflow's `permissions:` instead of only "403".
"""

from __future__ import annotations

# The permission an operation's category needs; the verb decides read or write.
_BY_CATEGORY = {
    "issues": "issues",
    "pulls": "pull-requests",
    "checks": "checks",
    "git": "contents",
    "actions": "actions",
    "reactions": "issues",
}
# Operations whose permission is not their category's.
_OVERRIDES = {
    # Merging writes the base branch: contents, not pull-requests.
    "pulls/merge": "contents: write",
    "repos/create-dispatch-event": "contents: write",
    "repos/get-content": "contents: read",
    "repos/create-or-update-file-contents": "contents: write",
    "repos/delete-file": "contents: write",
    "repos/get-commit": "contents: read",
    "repos/create-commit-status": "statuses: write",
    "repos/get-combined-status-for-ref": "statuses: read",
    "repos/list-commit-statuses-for-ref": "statuses: read",
    "repos/get-collaborator-permission-level": "metadata: read",
    "repos/get": "metadata: read",
    "repos/get-branch-rules": "metadata: read",
}
_READ_VERBS = ("get", "list", "check", "download")


def permission_for(operation: str) -> str | None:
    """`issues: write` for `issues/create-comment`; None when Holon does not know."""
    if operation in _OVERRIDES:
        return _OVERRIDES[operation]
    category, _, name = operation.partition("/")
    scope = _BY_CATEGORY.get(category)
    if scope is None or not name:
        return None
    return f"{scope}: {'read' if name.startswith(_READ_VERBS) else 'write'}"


def permission_hint(operation: str) -> str:
    """What to tell the user about permissions when `operation` is refused."""
    needed = permission_for(operation)
    if needed is None:
        return "check the token's permissions"
    hint = f"the workflow needs `permissions: {needed}`"
    if operation.startswith("issues/") and needed.endswith("write"):
        # Comments and labels on a pull request go through the issues API but are governed by
        # the pull-requests permission.
        hint += " (`pull-requests: write` on a pull request)"
    return hint
