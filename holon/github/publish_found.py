"""What GitHub holds of a publish that was cut short (the step killed, cancelled or timed out
mid-publish, then settled by `holon action`'s cleanup): looked up, never written, so the
handoff names what is really there instead of "nothing recorded".

A publish of a pull request's run (pr-fix, review) is looked up from what its intent recorded:
the published run's id and the head it started from; an issue's (solve) from the run's id and
its branch (the policy's `branch_template`).

- solve: the branch's tip (`git/get-ref`); a tip whose message carries the run's trailer is
  this run's commit, and then the branch's open pull request (`pulls/list` by branch) is named
  when Holon opened it (its login, the marker in its body);
- pr-fix: the branch's tip (`git/get-ref`) against the head; a tip that moved is this run's
  commit when its parent is the head and its message carries the run's trailer (as publishing
  itself recognizes it), and then Holon's replies naming that commit are counted;
- review: Holon's review of the head, by its login and the marker in its body.

3 calls at most for a solve or a fix (4 with a fix's replies), 1 for a review (a page per 100
reviews). A look-up GitHub refuses is said as such: the handoff then asks the operator to look.
"""

from __future__ import annotations

from dataclasses import dataclass

import github

from holon.executor.result import EffectOutput
from holon.github.errors import GitHubError
from holon.github.logins import same_login
from holon.github.marker import Marker, format_marker, parse_marker
from holon.github.publish_api import RepoApi
from holon.github.publish_git import read_commit
from holon.github.publish_names import SHA, SKILL, branch_for, valid_run_id
from holon.github.publish_pr import find_pull
from holon.github.publish_ref import run_commit_on
from holon.github.publish_text import is_run_commit
from holon.intent import ActionIntent
from holon.terminal import line

FIX, REVIEW, SOLVE = "github-pr-fix", "github-review", "github-issue-solve"
BRANCH_TEMPLATE = "holon/{kind}-{number}"  # the policy's default (publish_policy.py)
LIMIT = 300


@dataclass(frozen=True)
class Found:
    """What GitHub holds of a publish: one line each (evidence), and what it made."""

    lines: tuple[str, ...]
    made: EffectOutput | None = None


def published_run(intent: ActionIntent) -> tuple[str, str, str] | None:
    """(run id, published skill, head) of a publish of a pull request's run; None otherwise."""
    inputs = intent.args.get("inputs")
    head = intent.args.get("head_sha")
    if intent.args.get("skill") != SKILL or not isinstance(inputs, dict):
        return None
    run, skill = inputs.get("run"), inputs.get("skill")
    if intent.target.kind != "pull_request" or not intent.target.id.isdigit():
        return None
    if not (isinstance(run, str) and valid_run_id(run) and skill in (FIX, REVIEW)):
        return None
    if not (isinstance(head, str) and SHA.fullmatch(head)):
        return None
    return run, str(skill), head


def solved_run(intent: ActionIntent) -> str | None:
    """The run id of a publish of an issue's solve run; None otherwise."""
    inputs = intent.args.get("inputs")
    if intent.args.get("skill") != SKILL or not isinstance(inputs, dict):
        return None
    if intent.target.kind != "issue" or not intent.target.id.isdigit():
        return None
    run = inputs.get("run")
    if inputs.get("skill") != SOLVE or not (isinstance(run, str) and valid_run_id(run)):
        return None
    return run


def found_on_github(
    gh: github.Github,
    login: str | None,
    workflow: str,
    intent: ActionIntent,
    branch_template: str = BRANCH_TEMPLATE,
) -> Found | None:
    """What GitHub holds of `intent`'s publish (None: not a publish this looks up);
    `branch_template`: the policy's, naming a solve's branch."""
    if intent.target.repo is None:
        return None
    api = RepoApi(gh, intent.target.repo)
    number = int(intent.target.id) if intent.target.id.isdigit() else 0
    solved = solved_run(intent)
    if solved is not None:
        branch = branch_for(branch_template, "issue", number)
        marker = parse_marker(format_marker("issue", str(number), workflow, SOLVE))
        where = f"issue #{number} and branch {branch}"
        try:
            return _solve(api, login, marker, solved, branch)
        except GitHubError as exc:
            return _unknown("the fix commit and its pull request", exc, where)
    published = published_run(intent)
    if published is None:
        return None
    run, skill, head = published
    marker = parse_marker(format_marker("pull_request", str(number), workflow, skill))
    try:
        if skill == FIX:
            return _fix(api, login, number, marker, run, head)
        return _review(api, login, number, marker, head)
    except GitHubError as exc:
        what = "the fix commit" if skill == FIX else "the review"
        return _unknown(what, exc, f"pull request #{number}")


def _unknown(what: str, exc: GitHubError, where: str) -> Found:
    """A look-up GitHub refused: said, with what the operator should look at."""
    said = f"whether {what} reached GitHub could not be looked up ({exc}): look at {where} "
    return Found((line(said + "before asking again", LIMIT),))


def _solve(api: RepoApi, login: str | None, marker: Marker | None, run: str, branch: str) -> Found:
    where = line(f"branch {branch}", 160)
    tip = api.branch_tip(branch)
    if tip is None:
        return Found((f"no fix commit was pushed: {where} does not exist",))
    if not is_run_commit(str(read_commit(api, tip).get("message") or ""), run):
        return Found((f"no fix commit of this run was pushed: {where} is at {tip}, another's",))
    pushed = f"the fix commit {tip} was pushed: {where} is at it"
    pull = find_pull(api, branch)
    if pull is None:
        return Found((pushed, f"no pull request was opened from {where}"), EffectOutput(sha=tip))
    number, url = int(pull["number"]), pull.get("html_url")
    link = url if isinstance(url, str) and url.startswith("https://") else None
    mine = same_login((pull.get("user") or {}).get("login"), login)
    if not (mine and parse_marker(pull.get("body")) == marker):
        said = f"pull request #{number} from {where} is not Holon's: no pull request of it"
        return Found((pushed, line(said, LIMIT)), EffectOutput(sha=tip))
    opened = f"pull request #{number} was opened" + (f" ({link})" if link else "")
    return Found((pushed, opened), EffectOutput(url=link, number=number, sha=tip))


def _fix(
    api: RepoApi, login: str | None, number: int, marker: Marker | None, run: str, head: str
) -> Found:
    pull = api.call("pulls/get", "GET", f"/pulls/{number}")
    branch = str((pull.get("head") or {}).get("ref") or "")
    tip = api.branch_tip(branch) if branch else None
    if tip is None:
        return Found((f"the branch of pull request #{number} is gone: no fix commit is on it",))
    where = line(f"branch {branch}", 160)
    if tip == head:
        return Found((f"no fix commit was pushed: {where} is still at {head}",))
    if not run_commit_on(api, tip, head, run):
        return Found((f"{where} moved from {head} to {tip}, a commit not of this run",))
    replies = [
        c
        for c in api.pages("pulls/list-review-comments", f"/pulls/{number}/comments")
        if same_login((c.get("user") or {}).get("login"), login)
        and c.get("in_reply_to_id") is not None
        and parse_marker(str(c.get("body") or "")) == marker
        and tip in str(c.get("body") or "")
    ]
    said = [
        f"the fix commit {tip} was pushed: {where} moved from {head} to it",
        f"review thread replies for it posted: {len(replies)}",
    ]
    return Found(tuple(said), EffectOutput(number=number, sha=tip))


def _review(
    api: RepoApi, login: str | None, number: int, marker: Marker | None, head: str
) -> Found:
    for review in api.pages("pulls/list-reviews", f"/pulls/{number}/reviews"):
        mine = same_login((review.get("user") or {}).get("login"), login)
        if mine and review.get("commit_id") == head and parse_marker(review.get("body")) == marker:
            url = review.get("html_url")
            at = f" ({url})" if isinstance(url, str) and url.startswith("https://") else ""
            return Found(
                (f"the review of {head} was posted{at}",), EffectOutput(number=number, sha=head)
            )
    return Found((f"no review of {head} is on pull request #{number}",))


__all__ = ["Found", "found_on_github", "published_run", "solved_run"]
