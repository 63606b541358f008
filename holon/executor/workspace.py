"""The tree a skill run on a pull request works in: the pull request's head, never whatever
the workflow happened to check out (an `issue_comment` or `pull_request_review` run checks out
the default branch).

`head_of(intent)` (pure) says which head a run needs: the intent's `head_sha` (the decider
records it from the payload, else from the live pull request) for a pull request subject, unless
the head lives in a fork (`head_repo: fork`): a fork's head is never checked out by Holon; its
runs see the pull request through the context the agent gets from the API.

`head_workspace(...)` (the git edge) gives the run a detached worktree at that commit in a
temporary directory, removed after the run. A commit the workspace does not hold is fetched,
exactly that commit, from the workspace's `origin`, and only for a pull request of this
repository (`head_repo: same`). The token travels as `http.extraheader` in git's environment
(`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0`): never in a file, never in an argv
a process listing or a log shows, never in the worktree's config. With no way to get the
commit, the run fails with one line instead of running on the wrong tree. A workspace that is
no git repository (an offline serve over a plain directory) is used as it is: its runs record
no base commit, so publishing never takes their patch for one made on the head.
"""

from __future__ import annotations

import base64
import re
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from holon import crashpoints
from holon.errors import OperationalError
from holon.executor.scratch import HEAD, make_scratch, reclaim
from holon.fsutil import remove_tree
from holon.intent import ActionIntent
from holon.runner.git import GitError, git, git_env, git_ok
from holon.secrets import mask_secret_looking
from holon.terminal import line

SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
HeadRepo = Literal["same", "fork"]
HEAD_REPOS: tuple[HeadRepo, ...] = ("same", "fork")
# What a fetch may speak: https (the token goes only there, to the GitHub server), ssh (a
# deploy key's checkout) and local paths (a mirror on disk). Never `ext::`, never plain http.
_FETCH_PROTOCOLS = ("https", "ssh", "file")
FETCH_TIMEOUT = 600  # seconds: one commit, however slow the network


class HeadWorkspaceError(OperationalError):
    """The run's head cannot be given to it; the message is the run's one line of evidence."""


@dataclass(frozen=True)
class Head:
    sha: str
    same_repo: bool | None  # None: unknown, so never fetched


def not_present(sha: str) -> str:
    return f"the pull request's head {sha} is not in the workspace: check it out or fetch it"


def head_of(intent: ActionIntent) -> Head | None:
    """The head `intent`'s run must work on; None: the serve's own workspace (no pull request,
    no head known, or a fork's head, which Holon never checks out)."""
    if intent.target.kind != "pull_request":
        return None
    sha = intent.args.get("head_sha")
    if not isinstance(sha, str) or not sha:
        return None
    if not SHA.fullmatch(sha):
        raise HeadWorkspaceError(f"head_sha {sha[:80]!r} is not a full commit id")
    where = intent.args.get("head_repo")
    if where == "fork":
        return None
    return Head(sha, True if where == "same" else None)


def token_applies(origin: str, server_url: str) -> bool:
    """Whether the token may go with a fetch from `origin`: an https URL on the GitHub server's
    own host, or a path on this machine (where it never leaves it). Anything else (another
    host, plain http, ssh) fetches without it."""
    if "://" not in origin:
        # A local path (scp-like `host:path` is ssh: it has a colon before any slash).
        return ":" not in origin.split("/", 1)[0]
    try:
        parts, server = urlsplit(origin), urlsplit(server_url)
    except ValueError:
        return False
    if parts.scheme == "file":
        return True
    return (
        parts.scheme == "https"
        and server.scheme == "https"
        and parts.hostname is not None
        and parts.hostname == server.hostname
        and parts.port == server.port
    )


def auth_env(token: str) -> dict[str, str]:
    """The token as git configuration in the environment (what actions/checkout writes to a
    file, kept out of every file here)."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraheader",
        "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}",
    }


def _safe(workspace: Path) -> list[str]:
    # Global config is ignored (runner.git), so is the user's safe.directory list: the
    # workspace the serve was given is the one directory trusted.
    return ["-c", f"safe.directory={workspace.resolve()}"]


def _top(workspace: Path) -> Path | None:
    out = git_ok([*_safe(workspace), "rev-parse", "--is-bare-repository", "--show-toplevel"],
                 cwd=workspace)  # fmt: skip
    lines = out.splitlines() if out is not None else []
    if len(lines) != 2 or lines[0] != "false":
        return None
    top = Path(lines[1])
    return top if top.resolve() == workspace.resolve() else None


def _present(workspace: Path, sha: str) -> bool:
    args = [*_safe(workspace), "cat-file", "-e", f"{sha}^{{commit}}"]
    return git_ok(args, cwd=workspace) is not None


def _fetch(workspace: Path, sha: str, token: str | None, server_url: str) -> str | None:
    """Fetch exactly `sha` from `origin`; None when done, else git's reason (one line)."""
    origin = git_ok([*_safe(workspace), "remote", "get-url", "origin"], cwd=workspace)
    if not origin:
        return "the workspace has no remote `origin`"
    settings = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
    settings += ["-c", "protocol.allow=never", "-c", "credential.helper="]
    for name in _FETCH_PROTOCOLS:
        settings += ["-c", f"protocol.{name}.allow=always"]
    shallow = git_ok([*_safe(workspace), "rev-parse", "--is-shallow-repository"], cwd=workspace)
    argv = ["git", *settings, *_safe(workspace), "fetch", "--quiet", "--no-tags"]
    argv += ["--no-recurse-submodules", "--no-write-fetch-head"]
    # A shallow checkout (actions/checkout's default) stays shallow: one commit, not a history.
    argv += ["--depth=1"] if shallow == "true" else []
    argv += ["origin", sha]
    extra: Mapping[str, str] = {}
    if token and token_applies(origin, server_url):
        extra = auth_env(token)
    try:
        proc = subprocess.run(
            argv, cwd=workspace, env=git_env(extra), capture_output=True, check=False,
            timeout=FETCH_TIMEOUT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"git fetch took longer than {FETCH_TIMEOUT} s"
    if proc.returncode == 0:
        return None
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    first = lines[0] if lines else f"git fetch exited {proc.returncode}"
    # git's message may quote the remote's URL: whatever looks like a credential goes.
    if token:
        header = auth_env(token)["GIT_CONFIG_VALUE_0"]
        for value in (header, header.rsplit(" ", 1)[1], token):
            first = first.replace(value, "***")
    return line(mask_secret_looking(first), 300)


def reclaim_heads(workspace: Path) -> list[str]:
    """Remove the scratch directories (`holon-head-*`, `holon-context-*`) killed processes left
    in the temporary directory (`scratch.reclaim`: only those whose owner is gone); when a head
    worktree was among them, `workspace`'s repository forgets it too. The names removed."""
    removed = reclaim()
    if any(name.startswith(HEAD) for name in removed):
        prune_worktrees(workspace)
    return removed


def prune_worktrees(workspace: Path) -> None:
    """`git worktree prune` in `workspace` when it is a repository: the worktrees whose
    directory is gone are forgotten."""
    workspace = workspace.absolute()
    if _top(workspace) is not None:
        git_ok([*_safe(workspace), "worktree", "prune"], cwd=workspace)


@contextmanager
def head_workspace(
    workspace: Path, head: Head, *, token: str | None, server_url: str
) -> Iterator[Path]:
    """A detached worktree of `workspace`'s repository at `head.sha`, for the length of the
    block; HeadWorkspaceError (one line) when the commit cannot be had."""
    workspace = workspace.absolute()
    if _top(workspace) is None:
        # A plain directory (an offline serve, a replay) has no commit to be wrong about: its
        # run records no base, so publishing never takes its patch for the head's.
        yield workspace
        return
    if not _present(workspace, head.sha):
        if head.same_repo is not True:
            # A fork's (or an unknown) head is never fetched into a run that may hold a token.
            raise HeadWorkspaceError(not_present(head.sha))
        why = _fetch(workspace, head.sha, token, server_url)
        if why is not None or not _present(workspace, head.sha):
            detail = why or "origin did not send it"
            raise HeadWorkspaceError(f"{not_present(head.sha)} (fetching it failed: {detail})")
    reclaim_heads(workspace)  # a killed run's worktree goes before another is made
    scratch = make_scratch(HEAD)
    tree = scratch / "workspace"
    try:
        crashpoints.point("workspace.worktree:before")
        try:
            git([*_safe(workspace), "worktree", "add", "--detach", "--quiet", str(tree), head.sha],
                cwd=workspace)  # fmt: skip
        except GitError as exc:
            raise HeadWorkspaceError(f"cannot check out {head.sha[:12]}: {exc}") from None
        # Killed from here on, the workspace's repository keeps a worktree whose directory a
        # restart may never see again: `worktree prune` (after every run) forgets it.
        crashpoints.point("workspace.worktree:after")
        yield tree
    finally:
        git_ok([*_safe(workspace), "worktree", "remove", "--force", "--force", str(tree)],
               cwd=workspace)  # fmt: skip
        remove_tree(scratch)
        git_ok([*_safe(workspace), "worktree", "prune"], cwd=workspace)
