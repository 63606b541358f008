"""What an event's payload alone says about a run's subject: no token, no request.

An `issue_comment`, `issues`, `pull_request`, `pull_request_review`,
`pull_request_review_comment`, `check_run` or `check_suite` payload gives the issue or pull
request (title, body, author, labels, state; a pull request's head and base), the comment,
review or check that triggered the event. Everything that needs the API (the other comments,
review threads, files, diff, commits, the other checks, logs) is `PartMissing` with the reason
`NO_TOKEN`. Pure: reads the payload, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from holon.contract.context import ContextSubject, ContextTrigger, PartSource, TriggerKind
from holon.github import context_records as rec
from holon.github.context_records import Item
from holon.github.context_source import NO_TOKEN, LogTail, Part, PartMissing

_PULL_EVENTS = ("pull_request", "pull_request_review", "pull_request_review_comment")
_CHECK_EVENTS = ("check_run", "check_suite")


@dataclass(frozen=True)
class Trigger:
    """What asked for the run, and its record when it is a comment, review or review comment
    (kept in the context even when the API cannot list it)."""

    info: ContextTrigger
    record: dict[str, Any] | None = None


def repo_of(payload: dict[str, Any]) -> str | None:
    name = rec.obj(payload.get("repository")).get("full_name")
    return name if isinstance(name, str) and name else None


def subject_of(event: str, payload: dict[str, Any]) -> ContextSubject | None:
    """The issue or pull request the event is about; None when it names none (a check suite
    of a push to a branch without a pull request)."""
    if event in ("issue_comment", "issues"):
        issue = rec.obj(payload.get("issue"))
        found = rec.number(issue.get("number"))
        if found is None:
            return None
        kind = "pull_request" if issue.get("pull_request") else "issue"
        return ContextSubject(kind=kind, number=found)
    if event in _PULL_EVENTS:
        found = rec.number(rec.obj(payload.get("pull_request")).get("number"))
        return ContextSubject(kind="pull_request", number=found) if found else None
    if event in _CHECK_EVENTS:
        for pull in rec.items(rec.obj(payload.get(event)).get("pull_requests")):
            found = rec.number(pull.get("number"))
            if found is not None:
                return ContextSubject(kind="pull_request", number=found)
    return None


def trigger_of(event: str, payload: dict[str, Any]) -> Trigger | None:
    """The comment, review, issue, pull request or check that triggered the event."""
    kinds: dict[str, tuple[TriggerKind, str]] = {
        "issue_comment": ("comment", "comment"),
        "pull_request_review": ("review", "review"),
        "pull_request_review_comment": ("review_comment", "comment"),
        "issues": ("issue", "issue"),
        "pull_request": ("pull_request", "pull_request"),
        "check_run": ("check", "check_run"),
        "check_suite": ("check", "check_suite"),
    }
    if event not in kinds:
        sender = rec.login(payload.get("sender"))
        return Trigger(ContextTrigger(kind="other", author=sender)) if event else None
    kind, key = kinds[event]
    data = rec.obj(payload.get(key))
    author = rec.login(data.get("user")) or rec.login(payload.get("sender"))
    info = ContextTrigger(kind=kind, id=rec.number(data.get("id")), author=author)
    record = None
    if kind == "comment":
        record = rec.comment(data)
    elif kind == "review":
        record = {**rec.comment(data), "state": rec.short(data.get("state"))}
    elif kind == "review_comment":
        record = rec.review_comment(data)
    return Trigger(info, record if data else None)


class PayloadReader:
    """`ContextReader` over one event payload."""

    source: PartSource = "payload"

    def __init__(self, event: str, payload: dict[str, Any]) -> None:
        self.event = event
        self.payload = payload

    def item(self, kind: str, number: int) -> Item:
        if self.event in ("issue_comment", "issues"):
            issue = rec.obj(self.payload.get("issue"))
            if rec.number(issue.get("number")) == number:
                found = rec.item(issue, number)
                if kind != "pull_request":
                    return found
                # An issue comment's payload holds the pull request as an issue: no branches.
                return _with_gap(found, f"head and base branches: {NO_TOKEN}")
        if self.event in _PULL_EVENTS:
            pull = rec.obj(self.payload.get("pull_request"))
            if rec.number(pull.get("number")) == number:
                return rec.item(pull, number)
        if self.event in _CHECK_EVENTS:
            for pull in rec.items(rec.obj(self.payload.get(self.event)).get("pull_requests")):
                if rec.number(pull.get("number")) == number:
                    found = rec.item(pull, number)
                    return _with_gap(found, f"title, author, state, labels and body: {NO_TOKEN}")
        raise PartMissing(
            f"the event does not carry {kind.replace('_', ' ')} #{number}; {NO_TOKEN}"
        )

    def comments(self, number: int) -> Part:
        return Part(gap=NO_TOKEN)

    def reviews(self, number: int) -> Part:
        return Part(gap=NO_TOKEN)

    def review_comments(self, number: int) -> Part:
        return Part(gap=NO_TOKEN)

    def files(self, number: int) -> Part:
        raise PartMissing(NO_TOKEN)

    def diff(self, number: int, limit: int) -> tuple[bytes, int]:
        raise PartMissing(NO_TOKEN)

    def commits(self, number: int) -> Part:
        raise PartMissing(NO_TOKEN)

    def check_runs(self, sha: str) -> Part:
        data = rec.obj(self.payload.get(self.event))
        if self.event == "check_run" and data.get("head_sha") == sha:
            return Part([rec.check_run(data)], gap=NO_TOKEN)
        if self.event == "check_suite" and data.get("head_sha") == sha:
            return Part([rec.check_suite(data)], gap=NO_TOKEN)
        raise PartMissing(NO_TOKEN)

    def log_tail(self, job_id: int, limit: int) -> LogTail:
        raise PartMissing(NO_TOKEN)


def _with_gap(found: Item, gap: str) -> Item:
    from dataclasses import replace

    return replace(found, gaps=(*found.gaps, gap))
