"""An effect that could not happen yet (a merge whose checks are still running) leaves a wait.

A handler says so with `effect.wait` on a succeeded attempt (the effect did what it could: it
found it must wait). The subject then waits on an external change with that text, so its closure
is `waiting`, not failed and not done, and a later event decides the effect again. Each such wait
belongs to the effect that left it: the next attempt at the same effect on the subject lifts it,
whether that one merges, waits again or fails, so an old wait never outlives the work it was for.
"""

from __future__ import annotations

from typing import Any

from holon.controller.pass_report import Pass
from holon.executor.result import ActionResult
from holon.intent import ActionIntent


def follow_effect_wait(p: Pass, intent: ActionIntent, subject: str, result: ActionResult) -> None:
    if intent.type == "wait":
        return  # a wait intent is the wait itself (attempts.settle)
    for record in p.ledger.wait_records(subject):
        if record.data.get("effect") == intent.type and record.key != intent.id:
            p.delete("wait", record.key)
    effect: dict[str, Any] = result.effect or {}
    reason = effect.get("wait")
    if result.status != "succeeded" or not isinstance(reason, str) or not reason:
        return
    data = {"on": "external", "condition": reason, "effect": intent.type, "subject": subject}
    p.ledger.track_wait(p.put("wait", intent.id, "live", data))


__all__ = ["follow_effect_wait"]
