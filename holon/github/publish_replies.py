"""Replies to the review threads a `github-pr-fix` run addressed, after its commit is pushed.

The agent writes `replies.json` (validated here, its text untrusted):

    {"replies": [{"comment_id": 123, "body": "The loop now ends (Markdown)."}]}   # at most 50

Each reply goes to the thread of that review comment (a reply's id stands for its thread) with
Holon's marker and `Addressed in <commit>.`; a thread already holding Holon's reply naming that
commit is skipped, so settling the same fix again posts nothing twice. A comment that is not
on this pull request is skipped and named in the note. A 5xx is looked up before it is sent
again.
"""

from __future__ import annotations

from typing import Any

import github
from pydantic import BaseModel, ConfigDict, Field

from holon.github.logins import require_login, same_login
from holon.github.marker import format_marker, parse_marker
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi, write_once
from holon.github.publish_request import PublishRequest, read_document
from holon.markdown import prose


class Reply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    comment_id: int = Field(ge=1)
    body: str = Field(min_length=1, max_length=10_000)


class RepliesDoc(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    replies: list[Reply] = Field(default_factory=list, max_length=50)


def read_replies(raw: bytes) -> RepliesDoc:
    return read_document(RepliesDoc, raw, "replies.json")


def post_replies(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    doc: RepliesDoc,
    commit: str,
    workflow: str = "holon",
) -> EffectOutcome:
    """Reply for `commit` (the fix just pushed): 1 call per page of the pull request's review
    comments, then 1 per reply posted (none when there is no reply). Holon's login is needed
    to find its replies again: PublishError("no-login") without it."""
    if not doc.replies:
        output = {"pull_request": request.number, "commit": commit, "replies": []}
        return EffectOutcome("reply", False, output, "no reply to post")
    login = require_login(login, "replies")
    api = RepoApi(gh, request.repo)
    number = request.number
    path = f"/pulls/{number}/comments"
    marker = format_marker("pull_request", str(number), workflow, request.skill)
    done_line = f"Addressed in {commit}."
    comments = {c.get("id"): c for c in api.pages("pulls/list-review-comments", path)}

    def ours(thread: int, found: dict[Any, dict[str, Any]]) -> dict[str, Any] | None:
        for c in found.values():
            body = str(c.get("body") or "")
            if (
                same_login((c.get("user") or {}).get("login"), login)
                and c.get("in_reply_to_id") == thread
                and parse_marker(body) == parse_marker(marker)
                and done_line in body
            ):
                return c
        return None

    posted: list[int] = []
    skipped: list[str] = []
    for reply in doc.replies:
        target = comments.get(reply.comment_id)
        if target is None:
            skipped.append(f"comment {reply.comment_id} is not on this pull request")
            continue
        thread = int(target.get("in_reply_to_id") or reply.comment_id)
        if ours(thread, comments) is not None:
            continue
        body = f"{marker}\n\n{prose(reply.body)}\n\n{done_line}"

        def send(thread: int = thread, body: str = body) -> dict[str, Any]:
            made: dict[str, Any] = api.call(
                "pulls/create-reply-for-review-comment",
                "POST",
                f"{path}/{thread}/replies",
                body={"body": body},
            )
            return made

        def lookup(thread: int = thread) -> dict[str, Any] | None:
            fresh = {c.get("id"): c for c in api.pages("pulls/list-review-comments", path)}
            return ours(thread, fresh)

        made = write_once(send, lookup)
        comments[made.get("id")] = made
        posted.append(int(made["id"]))
    output = {"pull_request": number, "commit": commit, "replies": posted}
    return EffectOutcome("reply", bool(posted), output, "; ".join(skipped))
