"""The executor's handler for `merge`: `merge_pull` on the event's repository, its outcome as an
`ActionResult` (docs/github.md, "Wiring").

- merged now, or merged already: succeeded, with the merge sha in `output`;
- a wait (the head moved, checks still running, GitHub will not merge it yet, a 409): succeeded
  with `effect.wait` naming what it waits for. The controller records that as a wait on an
  external change (`controller/effect_waits.py`), so the subject's closure is `waiting`, not
  failed, and a later event decides the merge again. It is not a failure, so it is not retried;
- refused (not approved, checks red, a hold label...): failed with the note;
- GitHub failed (`GitHubError`): failed with its one line. After a 5xx on the merge,
  `merge_pull` has read the pull request back already; sending it again is a new decision.

A merge is attempted once per intent: a failed first attempt is answered again, without a call,
on the controller's retries (its refusal would not change within a pass, and a second PUT after
an unclear answer is exactly what must never happen blindly).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from holon.executor.handlers import result_of
from holon.executor.result import ActionResult, EffectOutput
from holon.github.effects import EffectRefused, Scope, subject_from
from holon.github.errors import GitHubError
from holon.github.facts import GitHubFacts
from holon.github.merge import HOLD_LABELS, WIP_MARKERS, merge_pull
from holon.github.outcome import EffectOutcome
from holon.intent import ActionIntent
from holon.terminal import line

ERROR_LIMIT = 300


class MergeHandler:
    """Performs `merge` intents in `scope` with the live `facts`."""

    def __init__(
        self,
        scope: Scope,
        facts: GitHubFacts,
        clock: Callable[[], datetime],
        *,
        hold_labels: Iterable[str] = HOLD_LABELS,
        wip_markers: Iterable[str] = WIP_MARKERS,
    ) -> None:
        self.scope = scope
        self.facts = facts
        self.clock = clock
        self.hold_labels = tuple(hold_labels)
        self.wip_markers = tuple(wip_markers)
        self._failed: dict[str, str] = {}  # intent id -> the first attempt's error

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        now = self.clock()
        if attempt > 1:
            first = self._failed.get(intent.id, "an earlier attempt failed")
            why = f"{first} (a merge is attempted once per decision; a later event decides again)"
            return result_of(intent, attempt, now, "failed", error=line(why, ERROR_LIMIT))
        try:
            outcome = self._merge(intent)
        except EffectRefused as exc:
            return self._fail(intent, attempt, now, exc.reason)
        except GitHubError as exc:
            return self._fail(intent, attempt, now, str(exc))
        effect: dict[str, Any] = {"effect": outcome.effect, "performed": outcome.performed}
        if outcome.note:
            effect["note"] = outcome.note
        if outcome.wait is not None:
            effect["wait"] = outcome.wait
        elif not outcome.performed and not outcome.output.get("merged"):
            return self._fail(intent, attempt, now, f"merge refused: {outcome.note}")
        sha = outcome.output.get("merge_sha")
        output = EffectOutput(sha=sha) if isinstance(sha, str) else None
        return result_of(intent, attempt, now, "succeeded", effect=effect, output=output)

    def _merge(self, intent: ActionIntent) -> EffectOutcome:
        target = intent.target
        subject = subject_from("merge", target.repo, target.kind, target.id)
        if subject.kind != "pull_request":
            raise EffectRefused("merge", "only a pull request can be merged")
        return merge_pull(
            self.facts,
            subject.repo,
            subject.number,
            sha=str(intent.args["sha"]),
            method=str(intent.args.get("method", "squash")),
            event_repo=self.scope.event_repo,
            base_ref=_text(intent.args.get("base")),
            hold_labels=self.hold_labels,
            wip_markers=self.wip_markers,
        )

    def _fail(self, intent: ActionIntent, attempt: int, now: datetime, why: str) -> ActionResult:
        error = line(why, ERROR_LIMIT)
        self._failed[intent.id] = error
        return result_of(intent, attempt, now, "failed", error=error)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
