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
from holon.state.model import ServeState

KIND: Final = "memory"
# Far above what a memory within its bounds serializes to (a few KiB): a larger record was
# not written by Holon, and is not worth validating.
MAX_RECORD_BYTES = 64 * 1024


def read_memory(state: ServeState, subject: str) -> tuple[SubjectMemory | None, str | None]:
    """The subject's memory (None: none recorded or unreadable) and, when a record is there
    but unreadable, why (one line, no content of the record)."""
    record = state.get(KIND, subject)
    if record is None:
        return None, None
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
