"""`github-publish` without GitHub: what publishing would do, read from the run's artifacts alone.

Offline (no token) and under `--dry-run`, a settled run is still worth showing: the branch, the
title, the commit message and the files a pull request would carry, the review or the replies it
would post. The preview goes through the same reading and the same refusals as publishing
(`read_artifacts`, `parse_patch`, `check_declared`, the branch rules), so a run publishing would
refuse is refused here too, with the same reason; it only stops short of the API. The result is a
dry run (`dry_run`, `performed: false`): the subject is not finished by a preview.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from holon.executor.handlers import Handler, result_of
from holon.executor.result import ActionResult
from holon.github.errors import PublishError
from holon.github.neutralize import neutralized
from holon.github.publish import PublishPolicy, checked_changes
from holon.github.publish_artifacts import RunArtifacts, read_artifacts
from holon.github.publish_names import PUBLISHED, SKILL, branch_for, valid_run_id
from holon.github.publish_patch import FileChange
from holon.github.publish_replies import read_replies
from holon.github.publish_review import read_review
from holon.github.publish_text import commit_message, title
from holon.intent import ActionIntent
from holon.refnames import branch_problem

# How many changed files a preview lists; the count is always given.
LISTED_FILES = 50


class PublishPreviewHandler:
    """Previews publishing runs of `runs_dir`; `title_of(number)` gives a subject's title when
    the caller knows it (from the event that asked), else the title is the verb and number."""

    def __init__(
        self,
        runs_dir: Path,
        clock: Callable[[], datetime],
        policy: PublishPolicy | None = None,
        title_of: Callable[[int], str | None] | None = None,
    ) -> None:
        self.runs_dir = runs_dir
        self.clock = clock
        self.policy = policy or PublishPolicy()
        self.title_of = title_of

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        try:
            would = self._preview(intent)
        except PublishError as exc:
            # Publishing would refuse it: a failed dry run, with publishing's own reason.
            line = f"publish {exc.reason}: {exc}"
            return result_of(intent, attempt, self.clock(), "failed", dry_run=True, error=line)
        effect = {"effect": "publish", "performed": False, "would": would}
        return result_of(intent, attempt, self.clock(), "succeeded", dry_run=True, effect=effect)

    def _preview(self, intent: ActionIntent) -> dict[str, Any]:
        inputs: dict[str, str] = dict(intent.args.get("inputs") or {})
        run, skill = inputs.get("run", ""), inputs.get("skill", "")
        if not valid_run_id(run):
            raise PublishError("bad-input", "inputs.run must name a run (its id)")
        if skill not in PUBLISHED:
            raise PublishError("bad-input", f"runs of {skill!r} are not published")
        if not intent.target.id.isdigit():
            raise PublishError("bad-input", f"{intent.target.subject()} is no issue or PR")
        number = int(intent.target.id)
        art = read_artifacts(self.runs_dir / run, self.policy.max_patch_bytes)
        if art.run_id != run:
            raise PublishError("bad-input", f"run {run}'s record names another run")
        if skill == "github-review":
            return self._review(art, number)
        if skill == "github-pr-fix" and art.pr_fix is not None and not art.patch.strip():
            return self._replies_only(art.pr_fix, number)
        return self._change(art, skill, number)

    def _replies_only(self, raw: bytes, number: int) -> dict[str, Any]:
        doc = read_replies(raw)
        claimed = [r.comment_id for r in doc.review_replies if r.status == "fixed"]
        if claimed:
            raise PublishError(
                "bad-input",
                f"pr-fix.json says comment {claimed[0]} is fixed, but the run changed nothing",
            )
        if not doc.review_replies:
            raise PublishError("empty", "diff.patch is empty: the run changed nothing to publish")
        return {"replies_on": f"pull request #{number}", "replies": len(doc.review_replies)}

    def _review(self, art: RunArtifacts, number: int) -> dict[str, Any]:
        if art.review is None:
            raise PublishError("bad-input", "review.json is missing: nothing to post")
        doc = read_review(art.review, art.review_body)
        return {
            "review_on": f"pull request #{number}",
            "event": doc.event,
            "comments": len(doc.comments),
        }

    def _change(self, art: RunArtifacts, skill: str, number: int) -> dict[str, Any]:
        policy = self.policy
        changes = checked_changes(art.patch, policy)
        kind = "issue" if skill == "github-issue-solve" else "pull_request"
        subject_title = (self.title_of(number) if self.title_of else None) or ""
        closes = policy.link == "fixes"
        would: dict[str, Any] = {
            "commit": {
                "parent": art.base_sha,
                "message": commit_message(skill, kind, number, subject_title, art.run_id, None),
            },
            "files_changed": len(changes),
            "files": [_describe(c) for c in changes[:LISTED_FILES]],
        }
        if kind == "issue":
            branch = branch_for(policy.branch_template, kind, number)
            problem = branch_problem(branch)
            if problem:
                raise PublishError("bad-input", f"branch {branch!r}: {problem}")
            would["branch"] = branch
            would["pull_request"] = {
                "title": neutralized(title(skill, number, subject_title, closes), policy.rules),
                "head": branch,
                "draft": policy.draft,
                "links": f"{'Fixes' if closes else 'Refs'} #{number}",
            }
        else:
            would["branch"] = f"the head branch of pull request #{number}"
            if art.pr_fix is not None:
                would["replies"] = len(read_replies(art.pr_fix).review_replies)
        return would


def _describe(change: FileChange) -> str:
    if change.old_path is None:
        return f"add {change.new_path}"
    if change.new_path is None:
        return f"delete {change.old_path}"
    if change.old_path != change.new_path:
        verb = "copy" if change.copy else "rename"
        return f"{verb} {change.old_path} -> {change.new_path}"
    return f"modify {change.new_path}"


def preview_handlers(
    runs_dir: Path,
    clock: Callable[[], datetime],
    policy: PublishPolicy | None = None,
    title_of: Callable[[int], str | None] | None = None,
) -> dict[str, Handler]:
    """The host skills previewed offline, by skill name, for `build_executor(preview=...)`."""
    return {SKILL: PublishPreviewHandler(runs_dir, clock, policy, title_of)}


__all__ = ["PublishPreviewHandler", "preview_handlers"]
