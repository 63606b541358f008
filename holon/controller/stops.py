"""`/holon stop` and what lifts it: a stop that passed the guardrails cancels the subject's
unfinished skill runs (its wait intent records the interruption), and a later authorized work
command removes the interruption so the new work is not held by the old stop (and likewise a
wait that only a new command ends: a spent re-activation budget, `actions/reactivate.py`)."""

from __future__ import annotations

from holon.controller.decide import Decision, target_of
from holon.controller.guarding import Verdict
from holon.controller.pass_report import Pass, intent_of
from holon.gateway.envelope import EventEnvelope

# Commands that ask for work again, and so lift a /holon stop; status and help do not.
RESTARTING = ("solve", "fix", "review")


def follow_commands(p: Pass, env: EventEnvelope, decision: Decision, verdict: Verdict) -> None:
    subject = target_of(env).subject()
    if verdict.authorized and env.command is not None and env.command.name in RESTARTING:
        for record in p.ledger.wait_records(subject):
            # A stop, or a wait only a new command ends (a spent re-activation budget).
            if record.data.get("interruption") or record.data.get("until_command"):
                p.delete("wait", record.key)
    if decision.special == "stop" and verdict.accepted:
        for record in p.ledger.intent_records(subject):
            if record.status in ("pending", "inflight") and record.data.get("type") == "run_skill":
                p.put("intent", record.key, "cancelled", dict(record.data))
                p.run_ended(intent_of(record))


__all__ = ["RESTARTING", "follow_commands"]
