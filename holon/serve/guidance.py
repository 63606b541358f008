"""The repository's guidance for the agent decider: `.holon/controller.md`, operator
configuration, so read only from where the repository's maintainers put it.

Not from the working tree: on a `pull_request` event the checkout is the pull request's head
(or merge commit), which a fork's author writes, and anything a skill run left in the
workspace is the agent's. The file is read from git's objects at the default branch's commit:
`refs/remotes/origin/<default>` (what GitHub holds; only people with write access move it),
else the local `refs/heads/<default>` (an operator's own clone). The default branch is the one
given (the event's `repository.default_branch`, HOLON_DEFAULT_BRANCH), else the clone's
`origin/HEAD`. Only a regular file counts (a symlink committed in its place, or in place of
`.holon/`, is not followed), at most MAX_GUIDANCE_BYTES. Missing is fine: no guidance.
"""

from __future__ import annotations

from pathlib import Path

from holon.refnames import refname_problem
from holon.runner.git import git_ok

GUIDANCE_PATH = ".holon/controller.md"
MAX_GUIDANCE_BYTES = 32 * 1024
_REGULAR = ("100644", "100755")


def read_guidance(workspace: Path, default_branch: str | None) -> tuple[str | None, str | None]:
    """The guidance text (None: none), and a note on why it was not read (None: nothing to
    say, including when the repository has no guidance)."""
    if git_ok(["rev-parse", "--git-dir"], cwd=workspace) is None:
        return None, f"no {GUIDANCE_PATH}: {workspace} is not a git repository"
    branch = default_branch or _origin_head(workspace)
    if branch is None or refname_problem(branch) is not None:
        return None, f"no {GUIDANCE_PATH}: the default branch is unknown"
    commit = None
    for ref in (f"refs/remotes/origin/{branch}", f"refs/heads/{branch}"):
        commit = git_ok(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=workspace)
        if commit:
            break
    if not commit:
        return None, f"no {GUIDANCE_PATH}: the default branch {branch} is not in the checkout"
    listed = git_ok(["ls-tree", "-l", commit, "--", GUIDANCE_PATH], cwd=workspace)
    if not listed:
        return None, None  # the repository gives no guidance
    meta, _, _ = listed.partition("\t")
    fields = meta.split()
    if len(fields) != 4 or fields[0] not in _REGULAR or fields[1] != "blob":
        return None, f"{GUIDANCE_PATH} on {branch} is not a regular file; not read"
    if not fields[3].isdigit() or int(fields[3]) > MAX_GUIDANCE_BYTES:
        return None, f"{GUIDANCE_PATH} on {branch} is over {MAX_GUIDANCE_BYTES} bytes; not read"
    text = git_ok(["cat-file", "blob", fields[2]], cwd=workspace)
    return (text or None), None


def _origin_head(workspace: Path) -> str | None:
    found = git_ok(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], cwd=workspace)
    prefix = "refs/remotes/origin/"
    return found.removeprefix(prefix) if found and found.startswith(prefix) else None


__all__ = ["GUIDANCE_PATH", "MAX_GUIDANCE_BYTES", "read_guidance"]
