"""The executor's handler for GitHub effects of the vocabulary, performed through this edge.

One handler for comment, label, unlabel, request_review, close_issue and dispatch (merge and
publishing have their own, as they land). It maps an intent onto its effect, and what the effect
answered onto an `ActionResult`: a refusal (`EffectRefused`: the input must change) and a failed
call (`GitHubError`: one line, the permission named, nothing secret) are failed attempts whose
error is that line. Effects read before they write, so the controller's retries never double one;
a dispatch is the exception (GitHub keeps no trace to look up), so it is attempted once only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from holon.executor.handlers import result_of
from holon.executor.result import ActionResult, EffectOutput
from holon.github.effects import EffectRefused, Scope, subject_from
from holon.github.errors import GitHubError
from holon.github.issues import close_issue, request_review
from holon.github.labels import add_label, remove_label
from holon.github.outcome import EffectOutcome
from holon.intent import ActionIntent

EFFECTS = ("comment", "label", "unlabel", "request_review", "close_issue", "dispatch")
# A repository_dispatch's event type: the workflow that listens for it runs the next pass.
DISPATCH_EVENT = "holon"


class GitHubHandler:
    """Performs GitHub effects in `scope` (the event's repository, Holon's login)."""

    def __init__(self, scope: Scope, clock: Callable[[], datetime]) -> None:
        self.scope = scope
        self.clock = clock

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        now = self.clock()
        if intent.type == "dispatch" and attempt > 1:
            # GitHub may have accepted the first: a second could start the work twice.
            why = "a dispatch is sent once only: GitHub may have accepted the earlier attempt"
            return result_of(intent, attempt, now, "failed", error=why)
        try:
            outcome = self._perform(intent)
        except EffectRefused as exc:
            return result_of(intent, attempt, now, "failed", error=exc.reason)
        except GitHubError as exc:
            return result_of(intent, attempt, now, "failed", error=str(exc))
        effect: dict[str, Any] = {
            "effect": outcome.effect,
            "performed": outcome.performed,
            **({"note": outcome.note} if outcome.note else {}),
        }
        return result_of(intent, attempt, now, "succeeded", effect=effect, output=_output(outcome))

    def _perform(self, intent: ActionIntent) -> EffectOutcome:
        target, args = intent.target, intent.args
        if intent.type == "dispatch":
            from holon.github.dispatch import RepositoryDispatch, dispatch  # rare: only then

            payload = {"subject": target.subject(), "reason": args["reason"], "intent": intent.id}
            request = RepositoryDispatch(DISPATCH_EVENT, payload)
            return dispatch(self.scope, target.repo, request)
        subject = subject_from(intent.type, target.repo, target.kind, target.id)
        if intent.type == "comment":
            from holon.github.comments import reply

            return reply(self.scope, subject, str(args.get("kind") or "note"), str(args["body"]))
        if intent.type == "label":
            return add_label(self.scope, subject, str(args["label"]))
        if intent.type == "unlabel":
            return remove_label(self.scope, subject, str(args["label"]))
        if intent.type == "request_review":
            return request_review(self.scope, subject, [str(r) for r in args["reviewers"]])
        if intent.type == "close_issue":
            return close_issue(self.scope, subject, args.get("reason", "completed"))
        raise EffectRefused(intent.type, f"{intent.type} is not a GitHub effect of this handler")


def _output(outcome: EffectOutcome) -> EffectOutput | None:
    known = {k: v for k, v in outcome.output.items() if k in EffectOutput.model_fields}
    return EffectOutput.model_validate(known) if known else None
