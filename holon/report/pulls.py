"""The pull requests Holon opened, watched until merged or closed. Pure: no I/O.

The serve reads each due one on a timer tick (one GET per pull request, at most
`PER_TICK`, only with a token) and records what it saw: a `meta:pull:<n>` record (live while
open, `done` once merged or closed, so a settled one is never read again) and, when it ended, a
`pr_merged` / `pr_closed` line in events.ndjson, which `holon report` counts.

Which pull requests Holon opened: the subject memories' `prs` (controller/memory.py), the pull
requests the subject's publishing made or updated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from holon.state.model import Record, ServeState

PER_TICK = 10  # GitHub reads per tick: a tick stays cheap however many pull requests are open
KEY = "pull:"


@dataclass(frozen=True)
class Watched:
    number: int
    subject: str
    checked_at: str  # when last read ("" never): the least recently read go first


def due(state: ServeState, limit: int = PER_TICK) -> list[Watched]:
    """Holon's pull requests not yet seen merged or closed, least recently read first."""
    found: dict[int, Watched] = {}
    for memory in state.live("memory"):
        prs = memory.data.get("prs")
        subject = memory.data.get("subject")
        if not isinstance(prs, list) or not isinstance(subject, str):
            continue
        for number in prs:
            if not isinstance(number, int) or isinstance(number, bool) or number in found:
                continue
            record = state.get("meta", f"{KEY}{number}")
            if record is not None and record.status == "done":
                continue
            checked = record.data.get("checked_at") if record is not None else None
            found[number] = Watched(number, subject, checked if isinstance(checked, str) else "")
    ordered = sorted(found.values(), key=lambda w: (w.checked_at, w.number))
    return ordered[: max(0, limit)]


def observed(
    watched: Watched,
    *,
    state: str,
    merged: bool,
    at: str | None,
    now: datetime,
    writer: str,
) -> tuple[Record, dict[str, Any] | None]:
    """The record of what a read of `watched` said, and the journal line when it has ended.

    `state` is GitHub's `open`/`closed`; `at` its own time of the end (`merged_at`, else
    `closed_at`), None when it gave none (then the tick's time stands for it)."""
    checked = now.isoformat()
    if state != "closed":
        data = {"number": watched.number, "subject": watched.subject, "state": "open"}
        record = Record(
            kind="meta",
            key=f"{KEY}{watched.number}",
            status="live",
            updated_at=now,
            writer=writer,
            data={**data, "checked_at": checked},
        )
        return record, None
    ended = "merged" if merged else "closed"
    when = at or checked
    data = {"number": watched.number, "subject": watched.subject, "state": ended, "at": when}
    record = Record(
        kind="meta",
        key=f"{KEY}{watched.number}",
        status="done",
        updated_at=now,
        writer=writer,
        data={**data, "checked_at": checked},
    )
    entry = {"id": f"pr:{watched.number}:{ended}", "at": checked, f"pr_{ended}": data}
    return record, entry


__all__ = ["KEY", "PER_TICK", "Watched", "due", "observed"]
