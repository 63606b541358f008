"""Frozen inputs: a write of the work happens only while its trigger is on GitHub unedited.

The intent's record holds the trigger's snapshot, taken at intake (`gateway/trigger.py`).
Before each attempt at a write that carries the work's output or acts on its word (publishing
a run, a merge, closing an issue, a comment not of Holon's own making), the trigger is read
again (`Parts.trigger_check`, the GitHub edge's). Then:

- unchanged: the write goes ahead;
- edited or deleted: the write is not done. The intent settles `refused` with the reason, and
  the subject waits on the operator with it (a `wait` record lifted by the next work command,
  as a spent re-activation budget's is), so its closure is `waiting` / awaiting operator input
  and its handoff says why and how to continue; the run whose output was withheld is marked so
  (`withheld`) and does not count as done for its head (a re-issued command may run again);
- not readable (a 5xx, a rate limit): the attempt fails without writing, like any failed
  attempt, and the next one checks again.

Offline or in a dry run nothing is read, nothing is written for real either: the intent's
record says the check was skipped (`trigger_check`). Holon's own comments (usage, status,
refusals) and progress updates carry no agent output and are not held.
"""

from __future__ import annotations

from typing import Any

from holon.controller.journals import decision_entry
from holon.controller.pass_report import Pass
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.gateway.trigger import TriggerSnapshot, refusal, snapshot_from
from holon.intent import ActionIntent

PUBLISH = "github-publish"  # the host skill that writes a run's result (github/publish_names)
# Comments Holon writes from its own templates, never from a run's or a model's output.
HOLON_COMMENTS = ("usage", "status", "refusal", "progress")
SKIPPED = "skipped: not on GitHub (offline or a dry run), so the trigger was not read again"
WAIT_PREFIX = "frozen:"


def guarded(intent: ActionIntent, data: dict[str, Any]) -> TriggerSnapshot | None:
    """The snapshot `intent`'s write is checked against; None when it is not checked."""
    if intent.type == "run_skill":
        if intent.args.get("skill") != PUBLISH:
            return None
    elif intent.type == "comment":
        if intent.args.get("kind") in HOLON_COMMENTS:
            return None
    elif intent.type not in ("merge", "close_issue"):
        return None
    return snapshot_from(data.get("trigger"))


def check(
    p: Pass, intent: ActionIntent, data: dict[str, Any], number: int
) -> ActionResult | str | None:
    """Before attempt `number` of `intent`: None to go ahead; a failed `ActionResult` (the
    trigger could not be read: nothing written); or the refusal line (edited or deleted)."""
    snapshot = guarded(intent, data)
    if snapshot is None:
        return None
    checker = p.parts.trigger_check
    if checker is None:
        data["trigger_check"] = SKIPPED
        return None
    verdict = checker(intent.target.repo, snapshot)
    if verdict.change is not None:
        return refusal(snapshot, verdict.change, verdict.live_updated_at)
    if verdict.error is not None:
        why = f"not written: the trigger could not be checked ({verdict.error})"
        return result_of(intent, number, p.parts.clock(), "failed", error=why)
    data["trigger_check"] = "unchanged"
    return None


def refuse(p: Pass, intent: ActionIntent, data: dict[str, Any], reason: str) -> None:
    """Settle `intent` refused (nothing written) and leave its subject waiting on the operator."""
    subject = str(data["subject"])
    kept = {k: v for k, v in data.items() if k != "intent"}
    settled = {**kept, "frozen": reason, "result": {"status": "refused", "error": reason}}
    p.ledger.track_intent(p.put("intent", intent.id, "refused", settled))
    p.intents.append(intent)
    p.run_ended(intent)
    published = data.get("continues")
    if intent.type == "run_skill" and isinstance(published, str):
        run = p.state.get("intent", published)
        if run is not None and run.data.get("subject") == subject:
            # Its output was never written: a re-issued command may run it again on that head.
            p.put("intent", run.key, run.status, {**run.data, "withheld": reason})
    wait = {"on": "operator", "reason": reason, "subject": subject, "until_command": True}
    p.ledger.track_wait(p.put("wait", f"{WAIT_PREFIX}{intent.id}", "live", wait))
    p.journal(
        decision_entry(
            entry_id=f"dec:{intent.id}:frozen",
            event_id=intent.event_id,
            type_=intent.type,
            subject=subject,
            at=p.parts.clock(),
            outcome="refused",
            rationale=reason,
            refused=[
                {"id": intent.id, "type": intent.type, "guard": "frozen_input", "reason": reason}
            ],
        )
    )


def is_frozen(record_data: dict[str, Any]) -> bool:
    """Whether an intent record is a write refused for its changed trigger."""
    return isinstance(record_data.get("frozen"), str)


__all__ = ["HOLON_COMMENTS", "SKIPPED", "check", "guarded", "is_frozen", "refuse"]
