"""Comments whose final write failed, written by a later pass.

A settle that fails (GitHub answered 5xx, refused for a moment, or the step was cut short) would
leave a subject's comment saying `working`, or `finished` without the pull request it opened,
for good: a re-run of the job decides its event as a duplicate, and nothing else settles the
comment. So the serve keeps each such subject in its state (`meta` record `unsettled:<subject>`)
and, after each later pass (the re-run, the next event, a tick), settles its comment again from
the closure the state holds, and completes the check runs of its current run (the run's head
and the commit a fix moved the pull request to). A written comment drops the record.

The record is restored state, so it is not trusted: the subject must be one Holon writes in
(`issue:N` or `pull_request:N`), and its comment is rebuilt from the state's own closure, never
from anything in the record.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import ValidationError

from holon.closure.record import ClosureRecord
from holon.state.model import Record, ServeState

PREFIX = "unsettled:"
_SUBJECT = re.compile(r"(?:issue|pull_request):[1-9][0-9]{0,9}")


@runtime_checkable
class Settling(Protocol):
    unsettled: set[str]
    resettled: set[str]

    def settle_subject(
        self, subject: str, closure: ClosureRecord, *, checks: bool = False
    ) -> None: ...


def keep(state: ServeState, hooks: Settling, now: datetime, writer: str) -> set[str]:
    """Record what `hooks` failed to settle, drop what they have settled since; return the
    subjects newly recorded."""
    for subject in sorted(hooks.resettled):
        if state.get("meta", PREFIX + subject) is not None:
            state.delete("meta", PREFIX + subject, at=now, writer=writer)
    hooks.resettled.clear()
    made = set(hooks.unsettled)
    for subject in sorted(made):
        data = {"subject": subject}
        state.put(
            Record(kind="meta", key=PREFIX + subject, updated_at=now, writer=writer, data=data)
        )
    hooks.unsettled.clear()
    return made


def resettle(
    state: ServeState, hooks: Settling, now: datetime, writer: str, skip: Iterable[str] = ()
) -> None:
    """Settle again each recorded subject's comment (not those in `skip`: settled, or failed,
    by the pass just ended), from the closure the state holds for it."""
    left = set(skip)
    for record in state.live("meta"):
        subject = record.key.removeprefix(PREFIX)
        if not record.key.startswith(PREFIX) or subject in left:
            continue
        closure = _closure(state, subject)
        if closure is None:
            # Nothing to say (no closure, or a restored one that does not read): not kept.
            state.delete("meta", record.key, at=now, writer=writer)
            continue
        hooks.settle_subject(subject, closure, checks=True)
    keep(state, hooks, now, writer)


def _closure(state: ServeState, subject: str) -> ClosureRecord | None:
    if _SUBJECT.fullmatch(subject) is None:
        return None
    record = state.get("closure", subject)
    if record is None:
        return None
    try:
        return ClosureRecord.model_validate(record.data)
    except ValidationError:
        return None


__all__ = ["PREFIX", "keep", "resettle"]
