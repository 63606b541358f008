"""A `github-review` run's findings as one pull request review per head sha.

The agent writes `review.json` (validated here, its text untrusted):

    {"event": "COMMENT" | "REQUEST_CHANGES",          # default COMMENT; never APPROVE
     "body": "overall findings (Markdown)",
     "comments": [{"path": "src/app.py", "line": 12, "start_line": 10, "side": "RIGHT",
                   "severity": "error" | "warning" | "suggestion" | "note",
                   "body": "what is wrong (Markdown)"}]}   # at most 50

Its Markdown is kept (code blocks and suggestions render) but can mention nobody and carry no
marker (`markdown.prose`). One review per head sha: a review by Holon's login with the marker
for this pull request and skill on that commit means it is done. A review for a head that has
moved since the run is not posted (it would comment on code that is gone): a failure,
PublishError("moved"), never a success. GitHub refuses REQUEST_CHANGES on a pull request by
the same account: such a review is posted as COMMENT.
When GitHub refuses the line comments (a line outside the diff), the review is posted once
more with the findings listed in its body. A 5xx is looked up before it is sent again.
"""

from __future__ import annotations

from typing import Any, Literal, Self

import github
from pydantic import BaseModel, ConfigDict, Field, model_validator

from holon.github.errors import PublishError, Rejected
from holon.github.logins import require_login, same_login
from holon.github.marker import format_marker, parse_marker
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi, write_once
from holon.github.publish_names import path_problem
from holon.github.publish_request import PublishRequest, read_document
from holon.markdown import code, inline, prose

BODY_LIMIT = 60_000


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(min_length=1, max_length=4096)
    line: int = Field(ge=1)
    start_line: int | None = Field(default=None, ge=1)
    side: Literal["LEFT", "RIGHT"] = "RIGHT"
    severity: Literal["error", "warning", "suggestion", "note"] = "note"
    body: str = Field(min_length=1, max_length=10_000)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if path_problem(self.path):
            raise ValueError(f"path: {path_problem(self.path)}")
        if self.start_line is not None and self.start_line >= self.line:
            raise ValueError("start_line must be before line")
        return self


class ReviewDoc(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    event: Literal["COMMENT", "REQUEST_CHANGES"] = "COMMENT"
    body: str = Field(default="", max_length=30_000)
    comments: list[Finding] = Field(default_factory=list, max_length=50)


def read_review(raw: bytes) -> ReviewDoc:
    """review.json as a ReviewDoc; PublishError("bad-input") naming what is wrong."""
    return read_document(ReviewDoc, raw, "review.json")


def post_review(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    doc: ReviewDoc,
    workflow: str = "holon",
) -> EffectOutcome:
    """3 calls: the pull request, its reviews, the review (4 when its line comments are
    refused and it is posted again with them in its body); none without Holon's login."""
    login = require_login(login, "review")
    api = RepoApi(gh, request.repo)
    number, sha = request.number, request.base_sha
    pull = api.call("pulls/get", "GET", f"/pulls/{number}")
    head = str((pull.get("head") or {}).get("sha", ""))
    out: dict[str, Any] = {"pull_request": number, "commit": sha}
    if head != sha:
        # A failure, not a quiet success: the review is of code that is gone.
        raise PublishError(
            "moved",
            f"the head moved from {sha[:12]} to {head[:12]} since the run reviewed it: "
            "the review is not posted",
            (f"reviewed {sha}", f"head {head}"),
        )
    marker = format_marker("pull_request", str(number), workflow, request.skill)

    def existing() -> dict[str, Any] | None:
        for review in api.pages("pulls/list-reviews", f"/pulls/{number}/reviews"):
            mine = same_login((review.get("user") or {}).get("login"), login)
            if (
                mine
                and review.get("commit_id") == sha
                and parse_marker(review.get("body")) == parse_marker(marker)
            ):
                found: dict[str, Any] = review
                return found
        return None

    done = existing()
    if done is not None:
        return EffectOutcome("review", False, {**out, "review": done.get("id")}, "already reviewed")
    notes: list[str] = []
    event = doc.event
    if event == "REQUEST_CHANGES" and same_login((pull.get("user") or {}).get("login"), login):
        event = "COMMENT"
        notes.append("GitHub takes no change request on Holon's own pull request: a comment")
    head_text = f"{marker}\n\nHolon's review of {code(sha[:12])} (run {code(request.run_id)})."

    def create() -> dict[str, Any]:
        body = _body(head_text, doc, inline_comments=True)
        payload: dict[str, Any] = {"commit_id": sha, "event": event, "body": body}
        payload["comments"] = [_comment(f) for f in doc.comments]
        try:
            made: dict[str, Any] = api.call(
                "pulls/create-review", "POST", f"/pulls/{number}/reviews", body=payload
            )
        except Rejected:
            if not doc.comments:
                raise
            notes.append("GitHub refused the line comments: the findings are in the body")
            payload.update(body=_body(head_text, doc, inline_comments=False), comments=[])
            made = api.call("pulls/create-review", "POST", f"/pulls/{number}/reviews", body=payload)
        return made

    made = write_once(create, existing)
    return EffectOutcome(
        "review", True, {**out, "review": made.get("id"), "event": event}, "; ".join(notes)
    )


def _comment(finding: Finding) -> dict[str, Any]:
    comment: dict[str, Any] = {
        "path": finding.path,
        "line": finding.line,
        "side": finding.side,
        "body": f"**{finding.severity}**: {prose(finding.body)}",
    }
    if finding.start_line is not None:
        comment.update(start_line=finding.start_line, start_side=finding.side)
    return comment


def _body(head: str, doc: ReviewDoc, inline_comments: bool) -> str:
    parts = [head]
    if doc.body.strip():
        parts.append(prose(doc.body))
    if not inline_comments and doc.comments:
        parts.append(
            "**Findings**\n\n"
            + "\n".join(
                f"- {code(f.path)} line {f.line} ({f.severity}): {inline(f.body)}"
                for f in doc.comments
            )
        )
    text = "\n\n".join(parts)
    return text if len(text) <= BODY_LIMIT else text[:BODY_LIMIT] + "\n\n[cut]"
