"""Publishing a settled skill run's change (`github-publish`, docs/github.md "Publishing"):
a host-side step in Holon's own process; the agent's container never holds a write token.

    outcome = publish_change(gh, config.login, request, patch, summary, PublishPolicy())

For an issue (`github-issue-solve`): the run's `diff.patch` becomes one commit on the run's
base, on branch `holon/issue-<n>`, and a draft pull request linked to the issue (opened, or
Holon's open one updated). For a pull request (`github-pr-fix`): one commit on the pull
request's own branch, only when that branch is in this repository and still at the head the
run started from. Every check that can refuse runs before any write; the branch moves last,
so a failure leaves nothing half-pushed (unreferenced objects at most, which GitHub collects);
only opening the pull request comes after it, and its failure says the branch moved.
"""

from __future__ import annotations

from typing import Any

import github

from holon.github.errors import GitHubError, PublishError
from holon.github.logins import same_login
from holon.github.marker import format_marker
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi
from holon.github.publish_apply import apply_patch
from holon.github.publish_checks import check_declared, pull_branch
from holon.github.publish_git import build_tree, fetch_blob, make_commit, read_base
from holon.github.publish_names import branch_for
from holon.github.publish_patch import FileChange, parse_patch
from holon.github.publish_policy import PublishPolicy as PublishPolicy  # re-exported
from holon.github.publish_pr import PullResult, open_or_update
from holon.github.publish_ref import BranchPlan, move_branch, plan_branch
from holon.github.publish_request import PublishRequest
from holon.github.publish_text import commit_message, pr_body, title
from holon.refnames import branch_problem


class PushedThenFailed(Exception):
    """The fix commit is on the branch (`pushed`), and a later call failed (`cause`): opening
    the pull request, or a pr-fix's replies."""

    def __init__(self, pushed: EffectOutcome, cause: GitHubError) -> None:
        super().__init__(str(cause))
        self.pushed, self.cause = pushed, cause


def checked_changes(patch: bytes, policy: PublishPolicy) -> list[FileChange]:
    """The patch's changes, every check that needs no API passed (size, paths, modes, workflow
    files); PublishError naming the first that fails. Publishing and its preview both use it."""
    if len(patch) > policy.max_patch_bytes:
        raise PublishError(
            "too-large",
            f"diff.patch is larger than {policy.max_patch_bytes} bytes (max_patch_bytes)",
        )
    changes = parse_patch(patch, policy.max_files)
    if not changes:
        raise PublishError("empty", "diff.patch is empty: the run changed nothing to publish")
    check_declared(changes, policy.allow_workflow_changes)
    return changes


def publish_change(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    patch: bytes,
    summary: str = "",
    policy: PublishPolicy | None = None,
) -> EffectOutcome:
    """Publish `patch` as `request` says; PublishError (nothing pushed) when it cannot be,
    PushedThenFailed when the branch moved and opening the pull request then failed."""
    policy = policy or PublishPolicy()
    changes = checked_changes(patch, policy)
    api = RepoApi(gh, request.repo)
    if request.kind == "pull_request":
        branch = pull_branch(api, request)
    else:
        branch = branch_for(policy.branch_template, request.kind, request.number)
        problem = branch_problem(branch)
        if problem or branch == request.base_branch:
            why = problem or "it is the pull request's base"
            raise PublishError("bad-input", f"branch {branch!r} is refused: {why}")
    plan = plan_branch(
        api, branch, request.base_sha, request.run_id, must_exist=request.kind == "pull_request"
    )
    commit = plan.done or _push(api, login, request, policy, patch, changes, branch, plan)
    output: dict[str, Any] = {
        "branch": branch,
        "commit": commit,
        "base": request.base_sha,
        "files": len({p for c in changes for p in c.writes}),
    }
    notes = [] if plan.done is None else ["the branch already had this run's commit"]
    performed = plan.done is None
    if request.kind == "issue":
        try:
            pull = _pull_request(api, login, request, policy, summary, branch)
        except GitHubError as exc:  # the branch is at the run's commit: never "nothing pushed"
            pushed = EffectOutcome("publish", performed, output, "; ".join(notes))
            raise PushedThenFailed(pushed, exc) from exc
        output.update(
            pull_request=pull.number, pull_request_url=pull.url, pull_request_action=pull.action
        )
        notes += [pull.note] if pull.note else []
        performed = performed or pull.action in ("created", "updated")
    return EffectOutcome("publish", performed, output, "; ".join(notes))


def _push(
    api: RepoApi,
    login: str | None,
    request: PublishRequest,
    policy: PublishPolicy,
    patch: bytes,
    changes: list[FileChange],
    branch: str,
    plan: BranchPlan,
) -> str:
    """Apply, build the tree, commit, and move the branch last; the new commit."""
    base = read_base(api, request.base_sha)
    applied = apply_patch(
        patch, changes, base.entries, lambda sha: fetch_blob(api, sha), policy.max_bytes
    )
    tree = build_tree(api, base, applied)
    co_author = request.actor if policy.co_author == "actor" else None
    if co_author is not None and same_login(co_author.login, login):
        co_author = None  # Holon is the author already
    message = commit_message(
        request.skill,
        request.kind,
        request.number,
        request.title,
        request.run_id,
        co_author,
        closes=policy.link == "fixes",
    )
    commit = make_commit(api, message, tree, request.base_sha, None)
    return move_branch(api, branch, plan, commit, base=request.base_sha, run_id=request.run_id)


def _pull_request(
    api: RepoApi,
    login: str | None,
    request: PublishRequest,
    policy: PublishPolicy,
    summary: str,
    branch: str,
) -> PullResult:
    marker = format_marker(request.kind, str(request.number), policy.workflow, request.skill)
    body = pr_body(marker, request.number, policy.link, request.skill, request.run_id, summary)
    name = title(request.skill, request.number, request.title, policy.link == "fixes", 256)
    base_branch = request.base_branch or ""  # the request requires it for an issue
    return open_or_update(api, login, branch, base_branch, name, body, policy.draft, policy.rules)
