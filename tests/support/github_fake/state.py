"""What the loopback GitHub holds: repositories with issues, pulls, checks, statuses and git
data, enough for the edge's effects to read back what they wrote."""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

NOW = "2026-01-01T00:00:00Z"


class Missing(LookupError):
    """An object GitHub would answer 404 for."""


class Refused(Exception):
    """A request GitHub would refuse: status and message, and for a 422 the `errors` of
    GitHub's validation-error body (`{"resource", "field", "code", "message"}` each)."""

    def __init__(
        self, status: int, message: str, errors: list[dict[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors


@dataclass
class Comment:
    id: int
    issue: int
    body: str
    user: str
    created_at: str = NOW
    updated_at: str = NOW


@dataclass
class Pull:
    head: str
    base: str
    head_sha: str
    draft: bool = False
    merged: bool = False
    merge_commit_sha: str | None = None
    requested_reviewers: list[str] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    mergeable: bool | None = True  # None: GitHub has not computed it yet
    fork: str | None = None  # the head's repository when it is a fork
    fork_deleted: bool = False  # the fork is gone: GitHub's head.repo is null
    review_comments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    title: str
    body: str
    user: str
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    pull: Pull | None = None
    updated_at: str = NOW
    created_at: str = NOW


def git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data, usedforsecurity=False).hexdigest()


def git_tree_sha(entries: dict[str, dict[str, str]]) -> str:
    """Git's id of the nested trees that flat `path -> {mode, sha}` entries make; Refused
    when a path runs through a file, as GitHub refuses it."""
    root: dict[str, Any] = {}
    for path, entry in entries.items():
        node = root
        *parents, name = path.split("/")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise Refused(422, f"tree.path {path} runs through a file")
        if isinstance(node.get(name), dict):
            raise Refused(422, f"tree.path {path} is a directory")
        node[name] = (entry["mode"], entry["sha"])

    def write(node: dict[str, Any]) -> str:
        items = []
        for name, value in node.items():
            if isinstance(value, dict):
                mode, sha, key = "40000", write(value), name + "/"
            else:
                (mode, sha), key = value, name
            items.append((key.encode(), f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)))
        return git_sha("tree", b"".join(data for _, data in sorted(items)))

    return write(root)


@dataclass
class Artifact:
    """An Actions artifact: its zip, and the run that uploaded it (`artifacts.py` serves it)."""

    id: int
    name: str
    data: bytes
    run_id: int
    repository_id: int
    head_repository_id: int
    expired: bool = False
    created_at: str = NOW
    digest: str | None = None  # what GitHub lists; None: the zip's own sha256


class Repo:
    def __init__(self, full_name: str, ids: itertools.count[int]) -> None:
        self.owner, self.name = full_name.split("/")
        self.full_name = full_name
        # Its own numbering, so ids the shared counter gives out stay as they were.
        self.id = int(hashlib.sha256(full_name.encode()).hexdigest()[:7], 16)
        self.artifacts: dict[int, Artifact] = {}
        self.default_branch = "main"
        self._ids = ids
        self.issues: dict[int, Issue] = {}
        self.comments: dict[int, Comment] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        # The app slug check runs are created by (None: the documented example's app); a test
        # whose jobs find their check runs again across processes sets the token's.
        self.check_app: str | None = None
        self.statuses: list[dict[str, Any]] = []
        self.permissions: dict[str, str] = {}
        self.dispatches: list[dict[str, Any]] = []
        self.rules: dict[str, list[dict[str, Any]]] = {}  # branch: active ruleset rules
        self.objects: dict[str, dict[str, Any]] = {}
        self.refs: dict[str, str] = {}
        self.refs["heads/main"] = self.commit("initial", self.tree({}), [])

    def next_id(self) -> int:
        return next(self._ids)

    # Issues and pulls share numbers, as on GitHub.
    def add_issue(self, title: str, body: str = "", user: str = "octocat", **kw: Any) -> Issue:
        issue = Issue(len(self.issues) + 1, title, body, user, **kw)
        self.issues[issue.number] = issue
        return issue

    def add_pull(self, title: str, head: str, base: str = "main", **kw: Any) -> Issue:
        sha = self.refs.get(f"heads/{head}") or self.refs["heads/main"]
        return self.add_issue(title, pull=Pull(head, base, sha), **kw)

    def add_comment(self, number: int, body: str, user: str) -> Comment:
        self.issue(number)
        comment = Comment(self.next_id(), number, body, user)
        self.comments[comment.id] = comment
        return comment

    def hold_comment(self, payload: dict[str, Any]) -> Comment:
        """The comment an `issue_comment` payload says was written, held as GitHub holds it
        (kept if already held): a write of the work reads its trigger again first (frozen
        inputs), and a comment GitHub does not hold was deleted."""
        c = payload["comment"]
        made = Comment(c["id"], payload["issue"]["number"], c["body"], c["user"]["login"])
        return self.comments.setdefault(c["id"], made)

    def add_artifact(
        self,
        name: str,
        data: bytes,
        *,
        head_repository_id: int | None = None,
        expired: bool = False,
        created_at: str = NOW,
        run_id: int | None = None,
    ) -> Artifact:
        """An artifact a run uploaded; `head_repository_id` other than `self.id`: a fork's run."""
        ident = self.next_id()
        artifact = Artifact(
            ident,
            name,
            data,
            run_id if run_id is not None else ident + 100_000,
            self.id,
            self.id if head_repository_id is None else head_repository_id,
            expired,
            created_at,
        )
        self.artifacts[ident] = artifact
        return artifact

    def issue(self, number: int | str, pull: bool = False) -> Issue:
        issue = self.issues.get(int(number)) if str(number).isdigit() else None
        if issue is None or (pull and issue.pull is None):
            raise Missing
        return issue

    # Git data: blobs as git stores them, trees as flat path maps, commits with parents.
    def blob(self, data: bytes) -> str:
        sha = git_sha("blob", data)
        self.objects[sha] = {"type": "blob", "data": data}
        return sha

    def tree(self, entries: dict[str, dict[str, str]]) -> str:
        """A tree of flat path entries, under the id git gives the same tree (so a client
        can check GitHub built the tree it computed)."""
        sha = git_tree_sha(entries)
        self.objects[sha] = {"type": "tree", "entries": dict(entries)}
        return sha

    def commit(self, message: str, tree: str, parents: list[str]) -> str:
        self.get(tree, "tree")
        for parent in parents:
            self.get(parent, "commit")
        text = json.dumps([message, tree, parents, len(self.objects)])
        sha = git_sha("commit", text.encode())
        self.objects[sha] = {"type": "commit", "message": message, "tree": tree, "parents": parents}
        return sha

    def get(self, sha: str, kind: str) -> dict[str, Any]:
        found = self.objects.get(sha)
        if found is None or found["type"] != kind:
            raise Missing
        return found

    def resolve(self, ref: str) -> str:
        """A commit sha for a sha, a branch name or `heads/<name>`."""
        if ref in self.objects:
            return ref
        for name in (ref.removeprefix("refs/"), f"heads/{ref}", f"tags/{ref}"):
            if name in self.refs:
                return self.refs[name]
        raise Missing

    def is_ancestor(self, old: str, new: str) -> bool:
        seen, todo = set(), [new]
        while todo:
            sha = todo.pop()
            if sha == old:
                return True
            if sha not in seen and sha in self.objects:
                seen.add(sha)
                todo.extend(self.objects[sha].get("parents", []))
        return False

    def files(self, ref: str) -> dict[str, dict[str, str]]:
        entries: dict[str, dict[str, str]] = self.get(
            self.get(self.resolve(ref), "commit")["tree"], "tree"
        )["entries"]
        return entries

    def move_branch(self, branch: str, sha: str) -> None:
        """Point `branch` at `sha`, as a push does: every open pull request whose head is that
        branch of this repository (not a fork's) has its head moved with it, as on GitHub."""
        self.refs[f"heads/{branch}"] = sha
        for issue in self.issues.values():
            pull = issue.pull
            if pull is not None and (issue.state, pull.fork, pull.head) == ("open", None, branch):
                pull.head_sha = sha

    def put_file(self, path: str, data: bytes, branch: str = "main", message: str = "put") -> str:
        """Commit `data` at `path` on `branch` (as the contents API does); the new commit."""
        head = self.refs[f"heads/{branch}"]
        entries = {
            **self.files(head),
            path: {"mode": "100644", "type": "blob", "sha": self.blob(data)},
        }
        commit = self.commit(message, self.tree(entries), [head])
        self.move_branch(branch, commit)
        return commit


class GitHubState:
    def __init__(self, repos: tuple[str, ...] = ("octocat/Hello-World",)) -> None:
        self._ids = itertools.count(1001)
        self.repos: dict[str, Repo] = {}
        # Signed download URLs handed out (`/_blobs/<token>`): what each serves.
        self.blobs: dict[str, bytes] = {}
        for name in repos:
            self.add_repo(name)

    def add_repo(self, full_name: str) -> Repo:
        self.repos[full_name] = Repo(full_name, self._ids)
        return self.repos[full_name]

    def repo(self, owner: str, name: str) -> Repo:
        found = self.repos.get(f"{owner}/{name}")
        if found is None:
            raise Missing
        return found
