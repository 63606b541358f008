"""A subject's `memory` record in the serve state: read defensively, written whole.

A restored state is not trusted. A memory record that is not one this build wrote (it does not
validate, it names another subject, it is larger than any memory can be) is read as no memory:
it is never a crash, and it authorizes nothing (memory only ever holds work back or informs a
decider). The next fold starts the subject's memory afresh and overwrites it.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import ValidationError

from holon.controller.memory import SubjectMemory
from holon.state.model import Record, ServeState

KIND: Final = "memory"
# Far above what a memory within its bounds serializes to (a few KiB): a larger record was
# not written by Holon, and is not worth validating.
MAX_RECORD_BYTES = 64 * 1024


# The memory last read from (or written as) each record, by subject: a record is frozen, so
# while the state holds that very record object its memory is the one read before. Bounded
# (oldest dropped), and only ever a shortcut: a record not found here is read in full.
_READ: dict[str, tuple[Record, SubjectMemory | None, str | None]] = {}
MAX_READ = 4096


def read_memory(state: ServeState, subject: str) -> tuple[SubjectMemory | None, str | None]:
    """The subject's memory (None: none recorded or unreadable) and, when a record is there
    but unreadable, why (one line, no content of the record)."""
    record = state.get(KIND, subject)
    if record is None:
        return None, None
    known = _READ.get(subject)
    if known is not None and known[0] is record:
        return known[1], known[2]
    memory, problem = _read(record, subject)
    _keep(subject, record, memory, problem)
    return memory, problem


def remembered(subject: str, record: Record, memory: SubjectMemory) -> None:
    """`record` was just written from `memory` (`memory_data`): its next read is `memory`."""
    _keep(subject, record, memory, None)


def _keep(subject: str, record: Record, memory: SubjectMemory | None, problem: str | None) -> None:
    _READ.pop(subject, None)
    _READ[subject] = (record, memory, problem)
    while len(_READ) > MAX_READ:
        del _READ[next(iter(_READ))]


def _read(record: Record, subject: str) -> tuple[SubjectMemory | None, str | None]:
    try:
        size = len(json.dumps(record.data, default=str))
    except (TypeError, ValueError):
        return None, "its data is not JSON"
    if size > MAX_RECORD_BYTES:
        return None, f"it is {size} bytes, more than any memory ({MAX_RECORD_BYTES})"
    try:
        memory = SubjectMemory.model_validate(record.data)
    except ValidationError as exc:
        return None, f"it does not validate ({exc.error_count()} errors)"
    if memory.subject != subject:
        return None, "it names another subject"
    return memory, None


def memory_of(state: ServeState, subject: str) -> SubjectMemory | None:
    return read_memory(state, subject)[0]


def memory_data(memory: SubjectMemory) -> dict[str, Any]:
    """What the record stores: defaults left out, to keep the state small."""
    return memory.model_dump(mode="json", exclude_defaults=True) | {"subject": memory.subject}


__all__ = ["KIND", "MAX_RECORD_BYTES", "memory_data", "memory_of", "read_memory"]
