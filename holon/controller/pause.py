"""Pausing: the pause record, the events kept while paused, and how a kept event is read back.

While paused, an event is journaled and kept in the state (a `meta` record `pending:<id>` holding
the envelope), and nothing is decided. Resuming decides the kept events in the order they were
kept (`passes.resume`); one kept longer than the policy's `expire_after` expires instead, counted
from when it was kept, not from the payload's own time (redeliveries carry old times).

A kept event comes back from the state, which may have been restored from elsewhere: it never
brings its authority with it. Its envelope is made again from its payload (`gateway.restored`),
so the actor's authority is derived as the connector derives it; one that cannot be is refused.
Holon's own event kept decides only when it says what the state holds of the run it reports
(`follow_ups.settled_as_claimed`, checked by `passes.resume`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import ValidationError

from holon.controller.journals import journal_decision
from holon.controller.pass_report import Pass
from holon.controller.policy import Policy
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope
from holon.gateway.restored import rederive
from holon.state.model import Record, ServeState

KEPT = "pending:"


def pause_record(*, paused: bool, by: str, reason: str, at: datetime, writer: str) -> Record:
    """The serve's pause switch, as the loop and the offline `serve pause|resume` both write it."""
    data = {"paused": paused, "by": by, "reason": reason, "at": at.isoformat()}
    return Record(kind="pause", key="serve", status="live", updated_at=at, writer=writer, data=data)


def is_paused(state: ServeState) -> bool:
    record = state.get("pause", "serve")
    return bool(record is not None and record.data.get("paused"))


def kept_events(state: ServeState) -> list[Record]:
    """Events kept while paused and not yet decided, in the order they were kept."""
    kept = [r for r in state.live("meta") if r.key.startswith(KEPT)]
    return sorted(kept, key=lambda r: (r.updated_at, r.key))


def keep(p: Pass, env: EventEnvelope) -> None:
    p.put("meta", f"{KEPT}{env.id}", "pending", env.model_dump(mode="json"))
    journal_decision(p, env, "paused", "serve is paused: event kept for resume")
    p.kept = True


def expired(record: Record, now: datetime, policy: Policy) -> bool:
    return now - record.updated_at > timedelta(seconds=policy.settings.expire_after)


def read_kept(record: Record, mention: str | None) -> EventEnvelope:
    """The kept event, its envelope derived again from its payload; InvalidInput naming why
    when the record holds no envelope or a payload the connector no longer reads."""
    try:
        kept = EventEnvelope.model_validate(record.data)
    except ValidationError:
        raise InvalidInput("the kept record holds no readable event envelope") from None
    return rederive(kept, mention=mention)


__all__ = ["KEPT", "expired", "is_paused", "keep", "kept_events", "pause_record", "read_kept"]
