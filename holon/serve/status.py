"""`holon serve status`: what the serve is doing and waiting on, read from its state file."""

from __future__ import annotations

from typing import Any

from holon.controller.ledger import wait_detail
from holon.state.model import ServeState
from holon.terminal import own_line


def status_of(state: ServeState, *, running: bool, accepted_waiting: int = 0) -> dict[str, Any]:
    """What `holon serve status` shows; `accepted_waiting`: deliveries in the inbox that the
    last checkpoint does not account for yet."""
    pause = state.get("pause", "serve")
    last = state.get("meta", "last_event")
    inflight = [
        {
            "id": r.key,
            "type": r.data.get("type"),
            "subject": r.data.get("subject"),
            "skill": r.data.get("skill"),
            "since": r.updated_at.isoformat(),
        }
        for r in state.live("intent")
        if r.status in ("pending", "inflight")
    ]
    waits = []
    for record in state.live("wait"):
        data = record.data
        waits.append(
            {"subject": data.get("subject"), "on": data.get("on"), "detail": wait_detail(data)}
        )
    closures = {
        r.key: {
            k: r.data.get(k)
            for k in (
                "closure_outcome",
                "waiting_reason",
                "runtime_posture",
                "lifecycle_outcome",
                "detail",
            )
        }
        for r in state.live("closure")
    }
    kept = [
        r.key.removeprefix("pending:") for r in state.live("meta") if r.key.startswith("pending:")
    ]
    return {
        "running": running,
        "paused": bool(pause and pause.data.get("paused")),
        "pause": pause.data if pause else None,
        "last_event": last.data if last else None,
        "inflight": inflight,
        "waits": waits,
        "kept_while_paused": kept,
        "accepted_waiting": accepted_waiting,
        "closures": closures,
    }


def describe_status(status: dict[str, Any]) -> str:
    lines = [f"serve running: {'yes' if status['running'] else 'no'}"]
    pause = status["pause"] or {}
    if status["paused"]:
        why = f": {pause.get('reason')}" if pause.get("reason") else ""
        lines.append(f"paused: yes, by {pause.get('by')} at {pause.get('at')}{why}")
    else:
        lines.append("paused: no")
    last = status["last_event"]
    lines.append(
        f"last event: {last['type']} {last['id']} at {last['at']}" if last else "last event: none"
    )
    if status["kept_while_paused"]:
        lines.append(f"kept while paused: {len(status['kept_while_paused'])} event(s)")
    if status["accepted_waiting"]:
        lines.append(
            f"accepted deliveries not yet checkpointed: {status['accepted_waiting']} "
            "(in the inbox; a serve start takes them first)"
        )
    lines.append("inflight:" + (" none" if not status["inflight"] else ""))
    lines.extend(
        f"  - {i['type']} {i['skill'] or ''} on {i['subject']} since {i['since']}".replace(
            "  on", " on"
        )
        for i in status["inflight"]
    )
    lines.append("waiting on:" + (" nothing" if not status["waits"] else ""))
    lines.extend(f"  - {w['subject']}: {w['on']} ({w['detail']})" for w in status["waits"])
    lines.append("latest closure per subject:" + (" none" if not status["closures"] else ""))
    for subject, c in sorted(status["closures"].items()):
        reason = f"/{c['waiting_reason']}" if c.get("waiting_reason") else ""
        lifecycle = c.get("lifecycle_outcome") or "continuing"
        lines.append(
            f"  - {subject}: {c['closure_outcome']}{reason}, {lifecycle}: {c.get('detail')}"
        )
    # Pause reasons, subjects, details and wait reasons come from operators, payloads, agents
    # and a restored state file: each line is one terminal line, its controls shown escaped.
    return "\n".join(own_line(text) for text in lines)
