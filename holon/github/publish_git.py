"""The git data calls of publishing: read the base commit's tree, fetch the blobs a patch
reads, and create the new blobs, tree and commit (never a ref: `publish_ref.py` moves the
branch, and only as the last step, so a failure here leaves nothing anyone can see).

Text files (valid UTF-8) travel inline in the tree request; other files as base64 blobs, one
call each. The tree GitHub builds is checked against the id Holon's git computed for the
result (`Applied.tree`): any difference (a listing read wrong, content altered on the way)
stops the publish before the commit.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from holon.github.errors import PublishError
from holon.github.publish_api import RepoApi, again_after_5xx
from holon.github.publish_apply import Applied, Entry

_LISTED = ("blob", "commit")  # files, links and submodules; directories are implied


@dataclass(frozen=True)
class Base:
    commit: str
    tree: str
    entries: dict[str, Entry]


def read_base(api: RepoApi, commit: str) -> Base:
    """The base commit's tree id and every entry of it (2 calls)."""
    tree = api.call("git/get-commit", "GET", f"/git/commits/{commit}")["tree"]["sha"]
    listing = api.call("git/get-tree", "GET", f"/git/trees/{tree}", params={"recursive": "1"})
    if listing.get("truncated"):
        raise PublishError(
            "too-large",
            f"GitHub lists the tree of {commit[:12]} only in part (over 100,000 entries or "
            "7 MB); publishing through the API cannot see the whole base",
        )
    entries = {
        item["path"]: Entry(item["mode"], item["sha"])
        for item in listing.get("tree", [])
        if item.get("type") in _LISTED
    }
    return Base(commit, tree, entries)


def fetch_blob(api: RepoApi, sha: str) -> bytes:
    found = api.call("git/get-blob", "GET", f"/git/blobs/{sha}")
    content = str(found.get("content", ""))
    if found.get("encoding") == "base64":
        return base64.b64decode(content)
    return content.encode()


def build_tree(api: RepoApi, base: Base, applied: Applied) -> str:
    """The new tree on GitHub (1 call, plus 1 per file that is not UTF-8 text)."""
    if applied.base_tree != base.tree:
        raise PublishError(
            "mismatch",
            f"the tree GitHub listed for {base.commit[:12]} is not its tree {base.tree[:12]} "
            f"(git computed {applied.base_tree[:12]}); nothing is pushed",
        )
    elements: list[dict[str, Any]] = []
    for path, (mode, data) in sorted(applied.written.items()):
        element: dict[str, Any] = {"path": path, "mode": mode, "type": "blob"}
        try:
            element["content"] = data.decode("utf-8")
        except UnicodeDecodeError:
            element["sha"] = _blob(api, data)
        elements.append(element)
    for path, mode in sorted(applied.deleted.items()):
        elements.append({"path": path, "mode": mode, "type": "blob", "sha": None})
    body = {"base_tree": base.tree, "tree": elements}
    made = again_after_5xx(lambda: api.call("git/create-tree", "POST", "/git/trees", body=body))
    if made.get("sha") != applied.tree:
        raise PublishError(
            "mismatch",
            f"GitHub built tree {str(made.get('sha'))[:12]} where Holon's git computed "
            f"{applied.tree[:12]}; nothing is pushed",
        )
    return applied.tree


def _blob(api: RepoApi, data: bytes) -> str:
    body = {"content": base64.b64encode(data).decode(), "encoding": "base64"}
    made = again_after_5xx(lambda: api.call("git/create-blob", "POST", "/git/blobs", body=body))
    return str(made["sha"])


def make_commit(
    api: RepoApi, message: str, tree: str, parent: str, author: dict[str, str] | None
) -> str:
    """A commit of `tree` on `parent` (1 call). Without `author`, GitHub writes it as the
    token's own identity (Holon's login); with it, author and committer are both that."""
    body: dict[str, Any] = {"message": message, "tree": tree, "parents": [parent]}
    if author is not None:
        body["author"] = body["committer"] = author
    made = again_after_5xx(lambda: api.call("git/create-commit", "POST", "/git/commits", body=body))
    return str(made["sha"])


def read_commit(api: RepoApi, sha: str) -> dict[str, Any]:
    found: dict[str, Any] = api.call("git/get-commit", "GET", f"/git/commits/{sha}")
    return found
