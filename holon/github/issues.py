"""Close an issue; request reviews on a pull request. Each reads the state first.

- `close_issue`: 1 call (read) when the issue is closed already, else 2 (read, close). A pull
  request is refused: closing one is not closing an issue, and the vocabulary has no such verb.
- `request_review`: 1 call (read the pull request) when every reviewer is requested already
  or is its author (GitHub refuses a review request to the author), else 2 (read, request).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from holon.github.effects import LOGIN, EffectRefused, Scope, Subject, subject_for
from holon.github.outcome import EffectOutcome

CloseReason = Literal["completed", "not_planned"]


def close_issue(scope: Scope, subject: Subject, reason: CloseReason = "completed") -> EffectOutcome:
    """Close issue `subject` with `reason`, unless it is closed."""
    subject = subject_for(scope, "close_issue", subject)
    if subject.kind != "issue":
        raise EffectRefused("close_issue", f"{subject.key} is not an issue")
    if reason not in ("completed", "not_planned"):
        raise EffectRefused("close_issue", "the reason is completed or not_planned")
    issue = scope.repo.issue(subject.number)
    if issue.is_pull:
        raise EffectRefused("close_issue", f"issue {subject.number} is a pull request")
    if issue.state == "closed":
        return EffectOutcome("close_issue", False, {"state": "closed"}, "the issue is closed")
    scope.repo.close_issue(subject.number, reason)
    return EffectOutcome("close_issue", True, {"state": "closed", "state_reason": reason})


def request_review(scope: Scope, subject: Subject, reviewers: Sequence[str]) -> EffectOutcome:
    """Request reviews of pull request `subject` from `reviewers` not requested already."""
    subject = subject_for(scope, "request_review", subject)
    if subject.kind != "pull_request":
        raise EffectRefused("request_review", f"{subject.key} is not a pull request")
    if not reviewers:
        raise EffectRefused("request_review", "no reviewer is named")
    for login in reviewers:
        if not LOGIN.fullmatch(login) or login.endswith("[bot]"):
            raise EffectRefused("request_review", f"{login!r} is not a user's login")
    pull = scope.repo.pull(subject.number)
    # Already requested, the author (GitHub refuses a request to them), or named twice.
    seen = {x.casefold() for x in pull.requested} | {(pull.author or "").casefold()}
    wanted: list[str] = []
    skipped: list[str] = []
    for login in reviewers:
        (skipped if login.casefold() in seen else wanted).append(login)
        seen.add(login.casefold())
    if not wanted:
        note = "every reviewer is requested already (or is the author)"
        return EffectOutcome("request_review", False, {"requested": [], "skipped": skipped}, note)
    scope.repo.request_reviewers(subject.number, wanted)
    return EffectOutcome("request_review", True, {"requested": wanted, "skipped": skipped})
