"""Fan-out's settle job when the decide job died: it failed, was cancelled, timed out or lost its
runner after its progress comment and before its decisions reached the settle job (no decided
state). Settle still has the event, so it decides it again, as decide did (the same policy, the
restored state's dedupe: an event an earlier run settled is a no-op), and settles each skill run
the event decides without running anything: this handler fails it, saying why (decide failed),
or hands it on (decide was cancelled) for the interruption that follows to cancel as the user's
(`userinterlude`). The comment and the check run are the ones decide started: the same marker
(subject, workflow, skill) is upserted, never a second one.

A run of another event (an older state's inflight run another workflow run's settle collects)
is left exactly where it is.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from holon.executor.deferral import Deferred
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.intent import ActionIntent

DIED = "the decide job ended before it recorded its decisions"
CANCELLED = "the workflow run was cancelled before the decide job recorded its decisions"
# needs.decide.result, as settle is told it (HOLON_DECIDE_RESULT).
DECIDE_RESULT_ENV = "HOLON_DECIDE_RESULT"


class DiedHandler:
    def __init__(self, *, event_id: str, clock: Callable[[], datetime], cancelled: bool) -> None:
        self.event_id = event_id
        self.clock = clock
        self.cancelled = cancelled
        self.handed: list[str] = []  # the intents handed on for the interruption (cancelled)

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        run = f"{intent.id}-{attempt}"
        if intent.event_id != self.event_id:
            raise Deferred(run, "left inflight: not a run of this settle's event", keep=True)
        if self.cancelled:
            self.handed.append(intent.id)
            raise Deferred(run, CANCELLED)
        return result_of(intent, attempt, self.clock(), "failed", run_status="failed", error=DIED)


__all__ = ["CANCELLED", "DECIDE_RESULT_ENV", "DIED", "DiedHandler"]
