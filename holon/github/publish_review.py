"""A `github-review` run's findings as one pull request review per head sha.

The agent writes `review.json` and `review.md` (the skill's artifacts, their schema in
`skills/github-review/schemas/review.schema.json`; validated again here, their text untrusted):

    [{"path": "src/app.py", "line": 12,                  # the new version's line
      "severity": "error" | "warn" | "nit",
      "message": "what is wrong (Markdown)",
      "suggestion": "what to do (Markdown), or empty"}]   # at most 50

`review.md` is the review's body; each finding a line comment on the right side. A finding of
severity `error` makes the review REQUEST_CHANGES, else it is a COMMENT; never APPROVE.
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

from typing import Annotated, Any, Literal, Self

import github
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from holon import jsonio
from holon.errors import InvalidInput
from holon.github.body import fit
from holon.github.errors import PublishError, Rejected
from holon.github.logins import require_login, same_login
from holon.github.marker import format_marker, parse_marker
from holon.github.neutralize import DEFAULT_RULES, OutputRules, neutralized
from holon.github.outcome import EffectOutcome
from holon.github.publish_api import RepoApi, write_once
from holon.github.publish_names import path_problem
from holon.github.publish_request import PublishRequest
from holon.markdown import code, inline, prose
from holon.validation import describe_validation_error

BODY_LIMIT = 60_000


class Finding(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str = Field(min_length=1, max_length=4096)
    line: int = Field(ge=1)
    severity: Literal["error", "warn", "nit"]
    message: str = Field(min_length=1, max_length=10_000)
    suggestion: str = Field(max_length=10_000)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if path_problem(self.path):
            raise ValueError(f"path: {path_problem(self.path)}")
        return self


class ReviewDoc(BaseModel):
    """What is posted: review.md as the body, the findings as line comments."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event: Literal["COMMENT", "REQUEST_CHANGES"] = "COMMENT"
    body: str = ""
    comments: list[Finding] = Field(default_factory=list, max_length=50)


_FINDINGS: TypeAdapter[list[Finding]] = TypeAdapter(Annotated[list[Finding], Field(max_length=50)])


def read_review(raw: bytes, body: str = "") -> ReviewDoc:
    """review.json (and review.md's text as `body`) as a ReviewDoc; PublishError("bad-input")
    naming what is wrong."""
    try:
        findings = _FINDINGS.validate_python(jsonio.loads(raw, "review.json"))
    except InvalidInput as exc:
        raise PublishError("bad-input", str(exc)) from None
    except ValidationError as exc:
        raise PublishError("bad-input", describe_validation_error("review.json", exc)) from None
    event: Literal["COMMENT", "REQUEST_CHANGES"] = "COMMENT"
    if any(finding.severity == "error" for finding in findings):
        event = "REQUEST_CHANGES"
    return ReviewDoc(event=event, body=body, comments=findings)


def post_review(
    gh: github.Github,
    login: str | None,
    request: PublishRequest,
    doc: ReviewDoc,
    workflow: str = "holon",
    rules: OutputRules = DEFAULT_RULES,
) -> EffectOutcome:
    """4 calls: the pull request, its reviews, its review threads (a finding one already raises
    is not repeated), the review (5 when its line comments are refused and it is posted again
    with them in its body); none without Holon's login."""
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
    doc = _not_repeated(api, number, doc, notes)
    event = doc.event
    if event == "REQUEST_CHANGES" and same_login((pull.get("user") or {}).get("login"), login):
        event = "COMMENT"
        notes.append("GitHub takes no change request on Holon's own pull request: a comment")
    head_text = f"{marker}\n\nHolon's review of {code(sha[:12])} (run {code(request.run_id)})."

    def create() -> dict[str, Any]:
        body = _body(head_text, doc, True, rules)
        payload: dict[str, Any] = {"commit_id": sha, "event": event, "body": body}
        payload["comments"] = [_comment(f, rules) for f in doc.comments]
        try:
            made: dict[str, Any] = api.call(
                "pulls/create-review", "POST", f"/pulls/{number}/reviews", body=payload
            )
        except Rejected:
            if not doc.comments:
                raise
            notes.append("GitHub refused the line comments: the findings are in the body")
            body = _body(head_text, doc, False, rules)
            payload.update(body=body, comments=[])
            made = api.call("pulls/create-review", "POST", f"/pulls/{number}/reviews", body=payload)
        return made

    made = write_once(create, existing)
    return EffectOutcome(
        "review", True, {**out, "review": made.get("id"), "event": event}, "; ".join(notes)
    )


def _not_repeated(api: RepoApi, number: int, doc: ReviewDoc, notes: list[str]) -> ReviewDoc:
    """The review without the findings a thread on the same line already raises: a review never
    repeats an open thread. Whether a thread is resolved is GraphQL-only, so every thread on
    that line counts as open; a resolved point is not raised again either."""
    if not doc.comments:
        return doc
    threads = {
        (str(c.get("path")), c.get("line") or c.get("original_line"))
        for c in api.pages("pulls/list-review-comments", f"/pulls/{number}/comments")
        if isinstance(c, dict) and not c.get("in_reply_to_id")
    }
    kept = [f for f in doc.comments if (f.path, f.line) not in threads]
    if len(kept) == len(doc.comments):
        return doc
    dropped = len(doc.comments) - len(kept)
    notes.append(f"{dropped} finding(s) on a line with a review thread already: not repeated")
    return doc.model_copy(update={"comments": kept})


def _comment(finding: Finding, rules: OutputRules) -> dict[str, Any]:
    body = f"**{finding.severity}**: {prose(finding.message)}"
    if finding.suggestion.strip():
        body += f"\n\n**Suggestion**: {prose(finding.suggestion)}"
    body = neutralized(body, rules)
    return {"path": finding.path, "line": finding.line, "side": "RIGHT", "body": body}


def _body(head: str, doc: ReviewDoc, inline_comments: bool, rules: OutputRules) -> str:
    parts = [head]
    if doc.body.strip():
        parts.append(prose(doc.body))
    if not inline_comments and doc.comments:
        parts.append(
            "**Findings**\n\n"
            + "\n".join(
                f"- {code(f.path)} line {f.line} ({f.severity}): {inline(f.message)}"
                for f in doc.comments
            )
        )
    # Neutralized before the cut: what it adds (`[.]`, zero-width spaces) counts too.
    return fit(neutralized("\n\n".join(parts), rules), BODY_LIMIT)
