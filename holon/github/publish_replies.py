"""Replies to the review threads a `github-pr-fix` run addressed, after its commit is pushed.

The agent writes `pr-fix.json` (the skill's artifact, its schema in
`skills/github-pr-fix/schemas/pr-fix.schema.json`; validated again here, its text untrusted):

    {"review_replies": [{"comment_id": 123, "status": "fixed" | "wontfix" | "need-info" |
                         "deferred", "message": "The loop now ends (Markdown)."}],  # at most 50
     "checks": [{"name": "test", "status": "fixed" | "not-fixed" | "flaky" | "not-ours",
                 "message": "..."}],
     "verification": [{"command": "pytest -q", "exit_code": 0}]}

Each review reply goes to the thread of that review comment (a reply's id stands for its
thread) with Holon's marker and a last line naming the commit by the status (`Addressed in
<commit>.` for `fixed`); a thread already holding Holon's reply with that line is skipped, so
settling the same fix again posts nothing twice. A comment that is not on this pull request is
skipped and named in the note. A 5xx is looked up before it is sent again.
"""

from __future__ import annotations

from typing import Any, Literal

import github
from pydantic import BaseModel, ConfigDict, Field

from holon.github.logins import require_login, same_login
from holon.github.marker import format_marker, parse_marker
from holon.github.neutralize import DEFAULT_RULES, OutputRules, neutralized
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi, write_once
from holon.github.publish_request import PublishRequest, read_document
from holon.markdown import prose

ReplyStatus = Literal["fixed", "wontfix", "need-info", "deferred"]


class Reply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    comment_id: int = Field(ge=1)
    status: ReplyStatus
    message: str = Field(min_length=1, max_length=10_000)


class CheckReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=1000)
    status: Literal["fixed", "not-fixed", "flaky", "not-ours"]
    message: str = Field(min_length=1, max_length=10_000)


class Verification(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(min_length=1, max_length=10_000)
    exit_code: int


class PrFixDoc(BaseModel):
    """pr-fix.json; publishing posts `review_replies`, the rest is the run's report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    review_replies: list[Reply] = Field(max_length=50)
    checks: list[CheckReport] = Field(max_length=100)
    verification: list[Verification] = Field(max_length=100)


def read_replies(raw: bytes) -> PrFixDoc:
    return read_document(PrFixDoc, raw, "pr-fix.json")


def done_line(status: ReplyStatus, commit: str) -> str:
    """The reply's last line: what the commit did about the thread (and the key that finds
    Holon's reply again)."""
    return {
        "fixed": f"Addressed in {commit}.",
        "wontfix": f"Not changed in {commit}, on purpose.",
        "need-info": f"Waiting for an answer; nothing changed for this in {commit}.",
        "deferred": f"Deferred: not part of {commit}.",
    }[status]


def post_replies(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    doc: PrFixDoc,
    commit: str,
    workflow: str = "holon",
    rules: OutputRules = DEFAULT_RULES,
) -> EffectOutcome:
    """Reply for `commit` (the fix just pushed): 1 call per page of the pull request's review
    comments, then 1 per reply posted (none when there is no reply). Holon's login is needed
    to find its replies again: PublishError("no-login") without it."""
    if not doc.review_replies:
        output = {"pull_request": request.number, "commit": commit, "replies": []}
        return EffectOutcome("reply", False, output, "no reply to post")
    login = require_login(login, "replies")
    api = RepoApi(gh, request.repo)
    number = request.number
    path = f"/pulls/{number}/comments"
    marker = format_marker("pull_request", str(number), workflow, request.skill)
    comments = {c.get("id"): c for c in api.pages("pulls/list-review-comments", path)}

    def ours(thread: int, found: dict[Any, dict[str, Any]], line: str) -> dict[str, Any] | None:
        for c in found.values():
            body = str(c.get("body") or "")
            if (
                same_login((c.get("user") or {}).get("login"), login)
                and c.get("in_reply_to_id") == thread
                and parse_marker(body) == parse_marker(marker)
                and line in body
            ):
                return c
        return None

    posted: list[int] = []
    skipped: list[str] = []
    for reply in doc.review_replies:
        target = comments.get(reply.comment_id)
        if target is None:
            skipped.append(f"comment {reply.comment_id} is not on this pull request")
            continue
        thread = int(target.get("in_reply_to_id") or reply.comment_id)
        line = done_line(reply.status, commit)
        if ours(thread, comments, line) is not None:
            continue
        body = neutralized(f"{marker}\n\n{prose(reply.message)}\n\n{line}", rules)

        def send(thread: int = thread, body: str = body) -> dict[str, Any]:
            made: dict[str, Any] = api.call(
                "pulls/create-reply-for-review-comment",
                "POST",
                f"{path}/{thread}/replies",
                body={"body": body},
            )
            return made

        def lookup(thread: int = thread, line: str = line) -> dict[str, Any] | None:
            fresh = {c.get("id"): c for c in api.pages("pulls/list-review-comments", path)}
            return ours(thread, fresh, line)

        made = write_once(send, lookup)
        comments[made.get("id")] = made
        posted.append(int(made["id"]))
    output = {"pull_request": number, "commit": commit, "replies": posted}
    return EffectOutcome("reply", bool(posted), output, "; ".join(skipped))
