"""Work held back by `settings.intents_per_pass`, and the passes that continue it.

A decision may propose more intents than one pass performs. Those beyond the limit passed the
guardrails like the rest: they are not refused (the decider legitimately decided them) but held,
recorded `pending` with `data["held"]` (why, and when), and journaled as a decision `held`. The
ledger reads a held intent as runnable work, so its subject's closure is `continuable` and the
subject re-activates itself (docs/reconcile.md).

The next pass that continues the subject performs its held intents, oldest first and at most
`intents_per_pass` of them: an admitted re-activation of that subject, or a timer tick (every
subject's). Facts may have changed since the intents were decided, so each first passes the
guardrails again, as recovery re-checks restored intents (`recovery.recheck`: the deciding event
from the events journal, today's facts and policy); one that no longer passes is settled
`refused` with the reason, never performed. Recovery at start never sees held intents: it takes
only `inflight` records, and a held intent becomes inflight only when a continuing pass starts it.
"""

from __future__ import annotations

from datetime import datetime

from holon.controller.attempts import intent_data, start
from holon.controller.guarding import limit_reason
from holon.controller.guardrails import Refusal
from holon.controller.journals import decision_entry, journal_decision
from holon.controller.ledger import is_held, sort_key
from holon.controller.pass_report import Pass
from holon.controller.recovery import deciding_events, recheck
from holon.controller.remembering import remember_ended
from holon.controller.spend_guard import GUARD, reached, wait_for_operator
from holon.gateway.envelope import EventEnvelope
from holon.intent import ActionIntent
from holon.state.model import Record


def hold(p: Pass, env: EventEnvelope, intents: list[ActionIntent], suffix: str = "") -> None:
    """Record `intents` (decided from `env`, beyond the per-pass limit) as held work."""
    if not intents:
        return
    reason = limit_reason(p.parts.policy.settings.intents_per_pass)
    at = p.parts.clock().isoformat()
    for order, intent in enumerate(intents):
        # `order`: the decision's own order, among intents decided at the same time.
        held = {"reason": reason, "at": at, "order": order}
        data = {**intent_data(intent, env, p.parts.mention), "held": held}
        p.ledger.track_intent(p.put("intent", intent.id, "pending", data))
    journal_decision(
        p,
        env,
        "held",
        f"{reason}: held for the next pass that continues the subject",
        accepted=intents,
        suffix=f"{suffix}:held",
    )


def held_records(p: Pass, subject: str | None = None) -> list[Record]:
    """The held intents of `subject` (of every subject when None), oldest decided first."""
    if subject is not None:
        records = p.ledger.intent_records(subject)
    else:
        records = [r for r in p.state.live("intent") if isinstance(r.data.get("subject"), str)]
    return sorted((r for r in records if is_held(r)), key=_oldest_first)


def _oldest_first(record: Record) -> tuple[datetime, int, str]:
    at, key = sort_key(record)
    order = record.data["held"].get("order")  # is_held: a dict
    return at, order if isinstance(order, int) and not isinstance(order, bool) else 0, key


def continue_held(
    p: Pass, env: EventEnvelope, subject: str | None = None, suffix: str = ""
) -> list[str]:
    """Perform up to `intents_per_pass` held intents (of `subject`, or of every subject), each
    re-checked first; return the subjects whose work changed."""
    waiting = held_records(p, subject)
    if not waiting:
        return []
    limit = p.parts.policy.settings.intents_per_pass
    taken = waiting[:limit]
    events = deciding_events(p.parts.journals.events, {r.data.get("event_id") for r in taken})
    performed: list[tuple[ActionIntent, dict[str, object]]] = []
    refused: list[dict[str, str]] = []
    spent: list[Refusal] = []
    for record in taken:
        intent, problem = recheck(p, record, events)
        over = reached(p, intent) if intent is not None and problem is None else None
        if intent is not None and over is not None:
            # A spend limit reached since: not a failure, the subject waits on the operator.
            problem = (GUARD, over.line)
            spent.append(Refusal(intent, GUARD, over.line))
        if intent is not None and problem is None:
            performed.append((intent, {k: v for k, v in record.data.items() if k != "held"}))
            continue
        guard, reason = problem or ("unreadable", "unreadable")
        data = {k: v for k, v in record.data.items() if k not in ("intent", "held")}
        error = {"error": f"refused: {reason}"}
        settled = p.put("intent", record.key, "refused", {**data, "result": error})
        remember_ended(p, settled, "refused")
        type_ = intent.type if intent is not None else str(record.data.get("type"))
        refused.append({"id": record.key, "type": type_, "guard": guard, "reason": reason})
    left = len(waiting) - len(taken)
    p.journal(
        decision_entry(
            entry_id=f"dec:{env.id}{suffix}:continued",
            event_id=env.id,
            type_=env.type,
            subject=subject or "held work",
            at=p.parts.clock(),
            outcome="continued",
            rationale=f"performing {len(taken)} held intent(s), each re-checked first"
            + (f"; {left} still held" if left else ""),
            accepted=[intent for intent, _ in performed],
            refused=refused,
        )
    )
    wait_for_operator(p, spent)
    for intent, data in performed:
        start(p, intent, dict(data))
    return list(dict.fromkeys(str(r.data.get("subject")) for r in taken))


__all__ = ["continue_held", "held_records", "hold"]
