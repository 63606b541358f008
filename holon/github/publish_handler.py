"""The executor's handler for the host skill `github-publish`: a settled run's result on GitHub.

The default policy decides `run_skill github-publish` on `holon.run.settled` with the inputs
`run` (the settled run's id), `skill` (what it ran) and `actor` (who asked). The run's output
directory is `<runs-dir>/<run>`: resolved here from the id, never taken as a path from the
event or the state, so a forged record can at most name another run of this serve. It is read
as `publish_artifacts.read_artifacts` reads an agent's directory (no link followed, bounded,
only a run the runner judged a success), then by the run's skill:

| run of | published with |
| --- | --- |
| github-issue-solve | publish_change (commit on holon/issue-<n>, draft PR) |
| github-pr-fix | publish_change on the PR's branch, then post_replies (pr-fix.json) |
| github-review | post_review (review.json, review.md as its body) |

A `PublishError` is a failed attempt whose error is its reason, message and evidence in one
line; any other `GitHubError` its one line. A solve or a pr-fix whose commit was pushed before a
later call failed (the pull request's opening, a reply refused) is still a failed attempt,
but not one that changed nothing: its error starts with the branch it moved and the commit it
is at now, and its `output` names that commit, so the handoff says the branch moved. A success
is recorded as a completed, successful host run (`run_status`, `run_outcome`), so the subject's
closure reads publishing as the unit's last run; `output` names the pull request and the commit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import github

from holon.executor.handlers import Handler, result_of
from holon.executor.result import ActionResult, EffectOutput
from holon.github.client import GitHubConfig, make_client
from holon.github.errors import GitHubError, PublishError
from holon.github.logins import require_login
from holon.github.neutralize import OutputRules
from holon.github.outcome import EffectOutcome
from holon.github.publish import PublishPolicy, PushedThenFailed, publish_change
from holon.github.publish_api import RepoApi
from holon.github.publish_artifacts import RunArtifacts, read_artifacts
from holon.github.publish_names import PUBLISHED, SKILL, valid_login, valid_run_id
from holon.github.publish_replies import PrFixDoc, post_replies, read_replies
from holon.github.publish_request import PublishRequest
from holon.github.publish_review import post_review, read_review
from holon.github.publish_text import Actor
from holon.github.retry import OnWait
from holon.intent import ActionIntent


class PublishHandler:
    """Publishes runs of `runs_dir` on `repo` (the serve's repository) as `login`."""

    def __init__(
        self,
        gh: github.Github,
        repo: str,
        login: str | None,
        runs_dir: Path,
        clock: Callable[[], datetime],
        policy: PublishPolicy | None = None,
    ) -> None:
        self.gh, self.repo, self.login = gh, repo, login
        self.runs_dir = runs_dir
        self.clock = clock
        self.policy = policy or PublishPolicy()

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        # Publishing reads before it writes (its own commit, PR, review are recognized), so a
        # second attempt finishes the first instead of repeating it.
        try:
            outcome = self._publish(intent)
        except PushedThenFailed as exc:
            return self._failed(intent, attempt, exc.cause, exc.pushed)
        except GitHubError as exc:
            return self._failed(intent, attempt, exc, None)
        effect: dict[str, Any] = {
            "effect": outcome.effect,
            "performed": outcome.performed,
            **({"note": outcome.note} if outcome.note else {}),
            **outcome.output,
        }
        return result_of(
            intent,
            attempt,
            self.clock(),
            "succeeded",
            effect=effect,
            output=_output(outcome),
            run_status="completed",
            run_outcome="success",
        )

    def _failed(
        self, intent: ActionIntent, attempt: int, exc: GitHubError, pushed: EffectOutcome | None
    ) -> ActionResult:
        """A failed attempt, saying what it pushed before it failed (`pushed`), if anything."""
        line = _error_line(exc)
        made = _output(pushed) if pushed is not None else None
        if pushed is not None:
            line = f"{_moved_line(pushed)}, then {line}"
        if isinstance(exc, PublishError) and exc.reason == "undecided":
            return self._undecided(intent, attempt, line, made)
        return result_of(intent, attempt, self.clock(), "failed", error=line, output=made)

    def _undecided(
        self, intent: ActionIntent, attempt: int, line: str, made: EffectOutput | None = None
    ) -> ActionResult:
        """A write GitHub may or may not have done, and no look-up could tell: not retried (it
        could double), not failed (it may be done): the operator decides, asked exactly that."""
        from holon.closure.evidence import Question  # only for this rare outcome

        noun = "issue" if intent.target.kind == "issue" else "pull request"
        text = (
            f"Publishing may or may not have reached GitHub ({line}). Look at {noun} "
            f"#{intent.target.id}: if the result is there, nothing more is needed; if not, "
            "ask Holon again."
        )
        return result_of(
            intent,
            attempt,
            self.clock(),
            "succeeded",
            effect={"effect": "publish", "performed": None, "note": line},
            output=made,
            run_status="completed",
            run_outcome="needs_human",
            question=Question(id=f"publish-undecided-{intent.id}", text=text),
        )

    def _publish(self, intent: ActionIntent) -> EffectOutcome:
        inputs: dict[str, str] = dict(intent.args.get("inputs") or {})
        run, skill = inputs.get("run", ""), inputs.get("skill", "")
        if not valid_run_id(run):
            raise PublishError("bad-input", "inputs.run must name a run (its id)")
        if skill not in PUBLISHED:
            raise PublishError("bad-input", f"runs of {skill!r} are not published")
        target = intent.target
        if target.repo is None or target.repo.casefold() != self.repo.casefold():
            raise PublishError("not-allowed", f"{target.repo} is not this serve's {self.repo}")
        if not target.id.isdigit():
            raise PublishError("bad-input", f"{target.subject()} is no issue or pull request")
        art = read_artifacts(self.runs_dir / run, self.policy.max_patch_bytes)
        if art.run_id != run or art.base_sha is None:
            why = "names another run" if art.run_id != run else "has no base commit"
            raise PublishError("bad-input", f"run {run}'s record {why}")
        actor = inputs.get("actor")
        values: dict[str, Any] = {
            "repo": self.repo,
            "kind": "issue" if skill == "github-issue-solve" else "pull_request",
            "number": int(target.id),
            "skill": skill,
            "run_id": run,
            "base_sha": art.base_sha,
            "actor": Actor(actor) if actor and valid_login(actor) else None,
        }
        if skill == "github-issue-solve":
            values.update(self._issue(int(target.id)))
        request = PublishRequest.model_validate(values)
        return self._by_skill(request, art)

    def _issue(self, number: int) -> dict[str, Any]:
        """The issue's title and the branch its pull request goes to (the default one)."""
        api = RepoApi(self.gh, self.repo)
        issue = api.call("issues/get", "GET", f"/issues/{number}")
        repo = api.call("repos/get", "GET", "")
        return {"title": str(issue.get("title") or ""), "base_branch": repo["default_branch"]}

    def _by_skill(self, request: PublishRequest, art: RunArtifacts) -> EffectOutcome:
        gh, login, workflow = self.gh, self.login, self.policy.workflow
        if request.skill == "github-review":
            if art.review is None:
                raise PublishError("bad-input", "review.json is missing: nothing to post")
            doc = read_review(art.review, art.review_body)
            return post_review(gh, login, request, doc, workflow, self.policy.rules)
        replies = read_replies(art.pr_fix) if art.pr_fix is not None else None
        if request.skill == "github-pr-fix" and replies is not None and replies.review_replies:
            require_login(login, "replies")  # refused before the fix is pushed, not after
            if not art.patch.strip():
                return _replies_only(gh, login, request, replies, workflow, self.policy.rules)
        change = publish_change(gh, login, request, art.patch, art.summary, self.policy)
        if request.skill != "github-pr-fix" or replies is None:
            return change
        try:
            answered = post_replies(
                gh, login, request, replies, change.output["commit"], workflow, self.policy.rules
            )
        except GitHubError as exc:
            raise PushedThenFailed(change, exc) from exc
        note = "; ".join(n for n in (change.note, answered.note) if n)
        output = {**change.output, "replies": answered.output}
        return EffectOutcome("publish", change.performed or answered.performed, output, note)


def _error_line(exc: GitHubError) -> str:
    """A failed publish in one line: a PublishError's reason, message and evidence."""
    if not isinstance(exc, PublishError):
        return str(exc)
    line = f"publish {exc.reason}: {exc}"
    if exc.evidence:
        line += " (" + "; ".join(exc.evidence) + ")"
    return line


def _moved_line(pushed: EffectOutcome) -> str:
    """What the push did: the branch moved to the fix commit (GitHub's names, one line)."""
    out = pushed.output
    branch, commit = str(out.get("branch") or "the branch"), str(out.get("commit") or "?")
    return f"the fix commit {commit} was pushed (branch {branch} moved to {commit})"


def _replies_only(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    doc: PrFixDoc,
    workflow: str,
    rules: OutputRules,
) -> EffectOutcome:
    """A fix that changed nothing (every thread answered wontfix, need-info or deferred): the
    replies are posted on the head the run looked at, with no commit. A reply saying `fixed`
    with nothing changed is a claim the run does not back: refused, nothing posted."""
    claimed = [r.comment_id for r in doc.review_replies if r.status == "fixed"]
    if claimed:
        raise PublishError(
            "bad-input",
            f"pr-fix.json says comment {claimed[0]} is fixed, but the run changed nothing",
        )
    answered = post_replies(gh, login, request, doc, request.base_sha, workflow, rules)
    output = {"pull_request": request.number, "replies": answered.output}
    return EffectOutcome("publish", answered.performed, output, answered.note or "replies only")


def _output(outcome: EffectOutcome) -> EffectOutput | None:
    out = outcome.output
    number = out.get("pull_request")
    url = out.get("pull_request_url")
    sha = out.get("commit")
    if number is None and sha is None:
        return None
    return EffectOutput(
        url=url if isinstance(url, str) else None,
        number=number if isinstance(number, int) else None,
        sha=sha if isinstance(sha, str) else None,
    )


def publish_handlers(
    config: GitHubConfig,
    repo: str,
    runs_dir: Path,
    clock: Callable[[], datetime],
    on_wait: OnWait | None = None,
    policy: PublishPolicy | None = None,
    client: github.Github | None = None,
) -> dict[str, Handler]:
    """The host skills this edge performs, by skill name, for `build_executor(hosted=...)`,
    through `client` (the edge's, so writes are spaced on one clock) or a new one."""
    gh = client or make_client(config, on_wait=on_wait)
    return {SKILL: PublishHandler(gh, repo, config.login, runs_dir, clock, policy)}


__all__ = ["PUBLISHED", "SKILL", "PublishHandler", "PushedThenFailed", "publish_handlers"]
