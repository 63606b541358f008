"""A timer tick re-checks what waits on time: inflight intents older than the policy's
`stale_inflight` expire, and timer waits whose time has come fire. The subjects it changed are
settled again; a wait whose time cannot be read never fires (its closure says it is unreadable).
"""

from __future__ import annotations

from datetime import timedelta

from holon.controller.decide import Decision
from holon.controller.journals import journal_decision
from holon.controller.ledger import timer_until
from holon.controller.pass_report import Pass, intent_of
from holon.controller.remembering import remember_ended
from holon.controller.settlement import settle_closures
from holon.gateway.envelope import EventEnvelope


def recheck(p: Pass, env: EventEnvelope, decision: Decision) -> None:
    now = p.parts.clock()
    notes: list[str] = []
    stale = timedelta(seconds=p.parts.policy.settings.stale_inflight)
    touched: set[str] = set()
    for record in p.ledger.inflight():
        if now - record.updated_at > stale:
            remember_ended(p, p.put("intent", record.key, "expired", dict(record.data)), "expired")
            p.run_ended(intent_of(record))
            notes.append(f"expired stale {record.data.get('type')} {record.key}")
            touched.add(record.data["subject"])
    for subject in list(p.ledger.waits):
        for wait in p.ledger.wait_records(subject):
            until = timer_until(wait.data)
            if until is not None and until <= now:
                p.delete("wait", wait.key)
                notes.append(f"timer fired for {subject}")
                touched.add(subject)
            else:
                notes.append(f"{subject} still waits on {wait.data.get('on')}")
    journal_decision(p, env, "rechecked", "; ".join(notes) or "no open waits", decision)
    settle_closures(p, sorted(touched))


__all__ = ["recheck"]
