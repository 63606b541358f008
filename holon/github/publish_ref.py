"""Moving the branch: the last step of a publish, and the only one anyone sees.

Before any object is made the branch is read: it must be absent (a new branch), at the run's
base (the commit the run started from: a fast-forward), or already at this run's own commit (a
publish that was interrupted after the push and is being settled again: nothing to do). Any
other tip means someone else pushed, or an earlier run did: the publish stops and says where
the branch is. The move itself is a fast-forward only (`force: false`), so a push that lands
between the read and the move makes GitHub refuse ours instead of overwriting it.

A create or move answered with a 5xx is looked up (is the branch at our commit?) before it is
sent again, never doubled; a create refused because the branch appeared meanwhile, or a move
refused as not a fast-forward, is the branch having moved, unless what moved it is this run's
own commit on the same base: the same intent published by another process at the same moment
(one event delivered to two jobs), whose commit is then the publish's, as `plan_branch` would
have found it a moment later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from holon.github.errors import Conflict, PublishError, Rejected
from holon.github.publish_api import RepoApi, ref_path, write_once
from holon.github.publish_git import read_commit
from holon.github.publish_text import is_run_commit


@dataclass(frozen=True)
class BranchPlan:
    action: Literal["create", "update", "done"]
    done: str | None = None  # the run's commit, already on the branch


def plan_branch(
    api: RepoApi, branch: str, base: str, run_id: str, *, must_exist: bool
) -> BranchPlan:
    """What publishing `run_id`'s commit on `base` to `branch` takes (1 call; 2 when the
    branch is elsewhere and its tip is read to see whether it is this run's commit)."""
    tip = api.branch_tip(branch)
    if tip is None:
        if must_exist:
            raise PublishError("moved", f"branch {branch} no longer exists; nothing is pushed")
        return BranchPlan("create")
    if tip == base:
        return BranchPlan("update")
    if run_commit_on(api, tip, base, run_id):
        return BranchPlan("done", tip)
    raise _moved(branch, tip, base)


def run_commit_on(api: RepoApi, tip: str, base: str, run_id: str) -> bool:
    """Whether `tip` is `run_id`'s commit on `base` (1 call): this run's publish, made by this
    process before (a settle again) or by another at the same moment (one event, two jobs)."""
    commit = read_commit(api, tip)
    parents = [p.get("sha") for p in commit.get("parents", [])]
    return parents == [base] and is_run_commit(str(commit.get("message", "")), run_id)


def move_branch(
    api: RepoApi, branch: str, plan: BranchPlan, commit: str, *, base: str, run_id: str
) -> str:
    """Create `branch` at `commit`, or fast-forward it there (1 call); the commit the branch is
    at for this run (another process's, when it published the same run first)."""

    def lookup() -> str | None:
        return commit if api.branch_tip(branch) == commit else None

    def create() -> str:
        body = {"ref": f"refs/heads/{branch}", "sha": commit}
        api.call("git/create-ref", "POST", "/git/refs", body=body)
        return commit

    def update() -> str:
        body = {"sha": commit, "force": False}
        api.call("git/update-ref", "PATCH", ref_path(branch), body=body)
        return commit

    try:
        write_once(create if plan.action == "create" else update, lookup)
    except (Rejected, Conflict):
        tip = api.branch_tip(branch)
        if tip == commit:
            return commit
        if tip is not None and run_commit_on(api, tip, base, run_id):
            return tip
        raise _moved(branch, tip, commit, meanwhile=True) from None
    return commit


def _moved(branch: str, tip: str | None, base: str, meanwhile: bool = False) -> PublishError:
    where = f"at {tip[:12]}" if tip else "gone"
    if meanwhile:
        message = f"branch {branch} moved while Holon published ({where}); nothing is pushed"
    else:
        message = (
            f"branch {branch} is {where}, not at {base[:12]} where the run started: someone "
            "pushed to it, or an earlier run did; nothing is pushed"
        )
    return PublishError("moved", message, (f"{branch}: {tip or 'none'}",))
