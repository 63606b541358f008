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

Two jobs publishing the same fix at once (one event delivered to both; the one whose push lost
takes the other's commit, `publish_ref.move_branch`) both list, find no reply, and both post
the same reply. So the threads are listed once more after posting: the oldest such reply of
Holon's stands, a newer one a job posted itself is deleted by that job, and both jobs name the
one that stands.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Literal

import github
from pydantic import BaseModel, ConfigDict, Field

from holon.github.errors import NotFound
from holon.github.logins import require_login, same_login
from holon.github.marker import format_marker, parse_marker
from holon.github.neutralize import DEFAULT_RULES, OutputRules, neutralized
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi, again_after_5xx, write_once
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


@dataclass(frozen=True)
class _Written:
    """A reply this call wrote, or found after a 5xx: its thread, last line and id, and
    whether this call's POST made it (only those are ever deleted as a racer's duplicate)."""

    thread: int
    line: str
    id: int
    created: bool


class _Threads:
    """Holon's replies in the pull request's review threads, found by login, marker and line."""

    def __init__(self, api: RepoApi, number: int, login: str, marker: str) -> None:
        self.api, self.login, self.key = api, login, parse_marker(marker)
        self.path = f"/pulls/{number}/comments"

    def listed(self) -> dict[Any, dict[str, Any]]:
        """Every review comment of the pull request, by id (1 call per page)."""
        return {c.get("id"): c for c in self.api.pages("pulls/list-review-comments", self.path)}

    def holons(self, found: dict[Any, dict[str, Any]], thread: int, line: str) -> list[int]:
        """The ids of Holon's replies in `thread` that say `line`, oldest first."""
        return sorted(
            int(c["id"])
            for c in found.values()
            if same_login((c.get("user") or {}).get("login"), self.login)
            and c.get("in_reply_to_id") == thread
            and parse_marker(str(c.get("body") or "")) == self.key
            and line in str(c.get("body") or "")
        )

    def delete(self, ident: int) -> None:
        """Delete review comment `ident` (1 call); one already gone is fine. A DELETE repeated
        after a 5xx deletes nothing more."""

        def send() -> None:
            with contextlib.suppress(NotFound):
                self.api.call("pulls/delete-review-comment", "DELETE", f"/pulls/comments/{ident}")

        again_after_5xx(send)


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
    comments, then 1 per reply posted (none when there is no reply), then, when a reply was
    posted, the pages once more (+1 per racer's duplicate deleted: `_oldest_stands`). The
    output's `replies` are the replies that stand for the doc's: Holon's already there for this
    commit (an earlier attempt's, another job's), then those this call posted, or another job's
    older one where ours was its duplicate. Holon's login is needed to find its replies again:
    PublishError("no-login") without it."""
    if not doc.review_replies:
        output = {"pull_request": request.number, "commit": commit, "replies": []}
        return EffectOutcome("reply", False, output, "no reply to post")
    login = require_login(login, "replies")
    api = RepoApi(gh, request.repo)
    marker = format_marker("pull_request", str(request.number), workflow, request.skill)
    threads = _Threads(api, request.number, login, marker)
    comments = threads.listed()
    written: list[_Written] = []
    # Holon's replies already there for this commit (an earlier attempt of this run, or another
    # job's): they stand for the doc's replies as much as the ones this call posts.
    found: list[int] = []
    skipped: list[str] = []
    for reply in doc.review_replies:
        target = comments.get(reply.comment_id)
        if target is None:
            skipped.append(f"comment {reply.comment_id} is not on this pull request")
            continue
        thread = int(target.get("in_reply_to_id") or reply.comment_id)
        line = done_line(reply.status, commit)
        there = threads.holons(comments, thread, line)
        if there:
            if there[0] not in found:
                found.append(there[0])
            continue
        body = neutralized(f"{marker}\n\n{prose(reply.message)}\n\n{line}", rules)
        made = _post(threads, thread, line, body)
        comments[made.id] = {
            "id": made.id,
            "user": {"login": login},
            "in_reply_to_id": thread,
            "body": body,
        }
        written.append(made)
    posted, notes = _oldest_stands(threads, written)
    stands = found + [ident for ident in posted if ident not in found]
    output = {"pull_request": request.number, "commit": commit, "replies": stands}
    # Performed: a reply this call wrote stands (not only another job's, ours deleted).
    performed = bool({w.id for w in written} & set(posted))
    return EffectOutcome("reply", performed, output, "; ".join(skipped + notes))


def _post(threads: _Threads, thread: int, line: str, body: str) -> _Written:
    """Post `body` as a reply in `thread` (1 call); after a 5xx, Holon's reply with `line`
    found there instead, or the POST sent once more when there is none."""
    created: list[int] = []

    def send() -> dict[str, Any]:
        made: dict[str, Any] = threads.api.call(
            "pulls/create-reply-for-review-comment",
            "POST",
            f"{threads.path}/{thread}/replies",
            body={"body": body},
        )
        created.append(int(made["id"]))
        return made

    def lookup() -> dict[str, Any] | None:
        found = threads.holons(threads.listed(), thread, line)
        return {"id": found[0]} if found else None

    ident = int(write_once(send, lookup)["id"])
    return _Written(thread, line, ident, ident in created)


def _oldest_stands(threads: _Threads, written: list[_Written]) -> tuple[list[int], list[str]]:
    """The replies that stand for `written`, and notes. Two jobs publishing the same fix (one
    event delivered to both) may each list, find no reply and post: so after posting, the
    threads are listed once more, and where an older reply of Holon's with the same line is
    there, the one this call posted is deleted and the older one is the effect. Each racer
    deletes only its own newer reply, so of two exactly one stands, whatever the order."""
    if not any(w.created for w in written):
        return [w.id for w in written], []
    fresh = threads.listed()
    stands: list[int] = []
    notes: list[str] = []
    for w in written:
        oldest = min(threads.holons(fresh, w.thread, w.line), default=w.id)
        if oldest >= w.id:  # ours is the oldest (or a listing that lags): it stands
            stands.append(w.id)
            continue
        if w.created:
            threads.delete(w.id)
            notes.append(f"reply {oldest} was posted by another job at once; {w.id} deleted")
        stands.append(oldest)
    return stands, notes
