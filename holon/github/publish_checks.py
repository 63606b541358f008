"""The refusals publishing makes before it writes anything: what the patch declares (paths,
file kinds, workflows) and, for a pull request, whose branch it is and whether it moved."""

from __future__ import annotations

from holon.github.errors import PublishError
from holon.github.publish_api import RepoApi
from holon.github.publish_names import WORKFLOWS, is_workflow, path_problem
from holon.github.publish_patch import FileChange
from holon.github.publish_ref import run_commit_on
from holon.github.publish_request import PublishRequest
from holon.refnames import branch_problem
from holon.terminal import line

_KINDS = {"120000": "a symbolic link", "160000": "a submodule"}


def check_declared(changes: list[FileChange], allow_workflows: bool) -> None:
    """Every path safe, every new entry a regular file, no workflow unless allowed."""
    for change in changes:
        for path in (change.old_path, change.new_path):
            problem = path_problem(path) if path is not None else None
            if problem:
                shown = line(path or "", 200)
                raise PublishError(
                    "unsafe-path",
                    f"diff.patch names {problem}: {shown}; nothing is published",
                    (shown,),
                )
        mode = change.new_mode
        if change.new_path is not None and mode not in (None, "100644", "100755"):
            kind = _KINDS.get(mode or "", f"an entry of mode {mode}")
            raise PublishError(
                "unsafe-path",
                f"diff.patch makes {line(change.new_path, 200)} {kind}; Holon publishes "
                "regular files only",
                (change.new_path,),
            )
    workflows = sorted({p for c in changes for p in c.writes if is_workflow(p)})
    if workflows and not allow_workflows:
        raise PublishError(
            "workflow",
            f"diff.patch changes {len(workflows)} GitHub Actions workflow file(s) under "
            f"{WORKFLOWS} ({line(workflows[0], 120)}): a workflow runs with the repository's "
            "secrets, so Holon publishes such changes only when the policy sets "
            "allow_workflow_changes: true (and the token has the `workflows` permission)",
            tuple(workflows),
        )


def pull_branch(api: RepoApi, request: PublishRequest) -> str:
    """The pull request's branch, when Holon may push to it: open, in this repository, not
    its default branch, and at the head the run started from, or at this run's own commit on
    it (published already, by this process or another: `plan_branch` finds it done) (1 call;
    2 when the head moved)."""
    number = request.number
    pull = api.call("pulls/get", "GET", f"/pulls/{number}")
    head = pull.get("head") or {}
    repo = head.get("repo") or {}
    if pull.get("state") != "open":
        raise PublishError("not-allowed", f"pull request #{number} is not open; nothing is pushed")
    if repo.get("full_name") != api.full_name:
        where = line(str(repo.get("full_name") or "a deleted repository"), 140)
        raise PublishError(
            "not-allowed",
            f"pull request #{number}'s branch is in {where}, not {api.full_name}: Holon "
            "pushes only to this repository's own branches",
        )
    branch = str(head.get("ref", ""))
    problem = branch_problem(branch)
    if problem is None and branch == repo.get("default_branch"):
        problem = "it is the default branch"
    if problem:
        raise PublishError(
            "bad-input",
            f"pull request #{number}'s branch {line(branch, 120)!r} is refused: {problem}",
        )
    sha = str(head.get("sha", ""))
    moved = sha != request.base_sha
    if moved and not (sha and run_commit_on(api, sha, request.base_sha, request.run_id)):
        raise PublishError(
            "moved",
            f"pull request #{number} moved: its head is {sha[:12]}, the run started from "
            f"{request.base_sha[:12]}; nothing is pushed",
            (f"{branch}: {sha}",),
        )
    return branch
