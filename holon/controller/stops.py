"""`/holon stop` and what lifts it: a stop that passed the guardrails cancels the subject's
unfinished skill runs (its wait intent records the interruption), and a later authorized work
command removes the interruption so the new work is not held by the old stop (and likewise a
wait that only a new command ends: a spent re-activation budget, `actions/reactivate.py`).

A cancelled or timed-out workflow run is the same interruption, by the user, found afterwards
(`interrupt_runs`, the `holon action` cleanup phase): every skill run left pending or inflight is
cancelled, an operator wait records the interruption (`cancelled_workflow`), and the subjects'
closures settle as waiting on the operator (lifecycle `userinterlude`), before recovery could
perform any of them again. A later /holon command lifts it, as it lifts a stop."""

from __future__ import annotations

from collections.abc import Collection

from holon.controller.decide import Decision, target_of
from holon.controller.guarding import Verdict
from holon.controller.journals import decision_entry
from holon.controller.parts import LoadedState, Parts
from holon.controller.pass_report import Pass, PassReport, intent_of
from holon.controller.remembering import remember_ended
from holon.controller.settlement import settle_closures
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
                cancelled = p.put("intent", record.key, "cancelled", dict(record.data))
                remember_ended(p, cancelled, "cancelled")
                p.run_ended(intent_of(record))


def interrupt_runs(
    loaded: LoadedState,
    parts: Parts,
    *,
    reason: str,
    actor: str | None = None,
    only: Collection[str] | None = None,
) -> PassReport:
    """Cancel every skill run left pending or inflight as a user interruption; one whose
    journaled attempts already settle it (succeeded, or the last allowed attempt) is left to
    recovery, which settles it from the journal. Nothing is attempted again here. `only`: the
    intent ids to cancel (fan-out's settle: its own event's runs, never another run's)."""
    p = Pass(parts, loaded, "recovery", None)
    subjects: list[str] = []
    for record in list(p.state.live("intent")):
        data = dict(record.data)
        if record.status not in ("pending", "inflight") or data.get("type") != "run_skill":
            continue
        if only is not None and record.key not in only:
            continue
        done = loaded.executed.get(record.key)
        spent = done is not None and done.attempt >= parts.policy.settings.max_attempts
        if done is not None and (done.status == "succeeded" or spent):
            continue  # settled from the journal by recovery, nothing performed again
        subject = data.get("subject")
        if not isinstance(subject, str):
            continue
        remember_ended(p, p.put("intent", record.key, "cancelled", data), "cancelled")
        p.run_ended(intent_of(record))
        wait = {
            "on": "operator",
            "interruption": "cancelled_workflow",
            "reason": reason,
            "actor": actor,
            "subject": subject,
        }
        p.ledger.track_wait(p.put("wait", f"interrupted:{record.key}", "live", wait))
        p.journal(
            decision_entry(
                entry_id=f"dec:interrupted:{record.key}",
                event_id=str(data.get("event_id")),
                type_="interruption",
                subject=subject,
                at=parts.clock(),
                outcome="cancelled",
                rationale=reason,
            )
        )
        subjects.append(subject)
    settle_closures(p, subjects)
    return p.report()


__all__ = ["RESTARTING", "follow_commands", "interrupt_runs"]
